import os from 'node:os';
import { envelope, JOBS, QUEUE_NAMES, type JobEnvelope, type JobName, type JobOf, type JobResult, type QueueName } from '../contracts/jobs/catalogue.js';
import { endsJob, runJob, type JobHandlers } from '../contracts/jobs/handlers.js';
import type { Logger } from '../lib/logger.js';
import { withTimeout } from '../lib/time.js';
import type { FailedJob, QueueDepth, QueueDriver } from '../contracts/jobs/queue.js';
import { concurrencyOf, DEFAULT_RETRY, RETRY_EARLY_MIN_GAP_MS, RETRY_EARLY_ON_RECOVERY, retryDelayMs, type Concurrency, type RetryPolicy } from './retry-policy.js';

/** Failed jobs the embedded board lists, newest first (as many as BullMQ keeps per queue, in all). */
const FAILED_KEPT = 1_000;

interface Counters {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/**
 * The embedded profile's queue: runs jobs in this process with the same handlers and retry policy
 * as BullMQ (a transient failure is retried with capped exponential backoff for as long as it
 * takes; a permanent one ends the job). Nothing here is durable, so `dispatch` resolves only when
 * the job has finished; until then its outbox entry stays, and a restart runs it again. A job
 * waiting to retry gives its concurrency slot back meanwhile.
 */
export class InProcessQueue implements QueueDriver {
  readonly kind = 'in-process' as const;
  private handlers: JobHandlers | null = null;
  private readonly running = new Map<string, Promise<void>>();
  private readonly counters = new Map<QueueName, Counters>(
    QUEUE_NAMES.map((q) => [q, { waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0 }]),
  );
  private readonly slots = new Map<QueueName, number>();
  private readonly waiters = new Map<QueueName, Array<() => void>>();
  private readonly worker = `${os.hostname()}:${process.pid}`;
  private closing = false;
  private readyWaiters: Array<() => void> = [];
  private readonly timers = new Map<JobName, NodeJS.Timeout>();
  /** Wakes the jobs waiting to retry (on close). */
  private readonly sleepers = new Set<() => void>();
  /** Jobs waiting out a retry, by queue, woken early when a job of their queue recovers. */
  private readonly retrying = new Map<QueueName, Set<() => void>>();
  private readonly retriedEarlyAt = new Map<QueueName, number>();
  /** Jobs that ended failed for good, oldest first. */
  private readonly failedJobs: FailedJob[] = [];

  constructor(
    private readonly log: Logger,
    private readonly concurrency: Concurrency,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  dispatch(job: JobEnvelope): Promise<void> {
    if (this.closing) return Promise.reject(new Error('in-process queue is closing'));
    // Same job id already queued or running: the queue holds it once, as BullMQ does.
    const existing = this.running.get(job.jobId);
    if (existing) return existing;
    const run = this.execute(job).finally(() => this.running.delete(job.jobId));
    this.running.set(job.jobId, run);
    return run;
  }

  dispatchMany(jobs: readonly JobEnvelope[]): Promise<Array<Promise<void>>> {
    if (this.closing) return Promise.reject(new Error('in-process queue is closing'));
    return Promise.resolve(jobs.map((job) => this.dispatch(job)));
  }

  async request<N extends JobName>(job: JobEnvelope<N>, timeoutMs: number): Promise<JobResult<N>> {
    if (this.closing) throw new Error('in-process queue is closing');
    const queue = JOBS[job.name].queue;
    // counted as dispatched jobs are, so request jobs (extraction) show in queue depths and /metrics
    const counters = this.counters.get(queue) as Counters;
    const run = async (): Promise<JobResult<N>> => {
      const handlers = await this.whenStarted();
      counters.waiting += 1;
      await this.acquire(queue);
      counters.waiting -= 1;
      counters.active += 1;
      try {
        const log = this.log.child({ job: job.name, jobId: job.jobId, attempt: 1 });
        const result = (await runJob(handlers, job.name, job.payload, { attempt: 1, worker: this.worker, log }, job.trace)) as JobResult<N>;
        counters.completed += 1;
        return result;
      } catch (err) {
        counters.failed += 1;
        throw err;
      } finally {
        counters.active -= 1;
        this.release(queue);
      }
    };
    return withTimeout(run(), timeoutMs, `no answer to ${job.name} within ${timeoutMs} ms`);
  }

  startWorkers(handlers: JobHandlers): void {
    this.handlers = handlers;
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  /**
   * Runs the job now and then every `everyMs` on a timer that does not keep the process alive;
   * a run still going when the next one is due is not doubled up. Cleared by `closeWorkers`.
   */
  schedule<N extends JobName>(name: N, everyMs: number, payload: JobOf<N>): Promise<void> {
    clearInterval(this.timers.get(name));
    let current: Promise<void> | null = null;
    const tick = (): void => {
      if (this.closing || current) return;
      current = this.dispatch(envelope(name, payload))
        .catch((err: unknown) => this.log.warn({ err, job: name }, 'scheduled job not run'))
        .finally(() => {
          current = null;
        });
    };
    const timer = setInterval(tick, everyMs);
    timer.unref();
    this.timers.set(name, timer);
    tick();
    return Promise.resolve();
  }

  requeue(job: JobEnvelope): Promise<boolean> {
    if (this.closing || this.running.has(job.jobId)) return Promise.resolve(false);
    this.dispatch(job).catch((err: unknown) => this.log.warn({ err, job: job.name, jobId: job.jobId }, 'requeued job not run'));
    return Promise.resolve(true);
  }

  depths(): Promise<QueueDepth[]> {
    return Promise.resolve(QUEUE_NAMES.map((queue) => ({ queue, ...(this.counters.get(queue) as Counters) })));
  }

  /** The jobs that ended failed for good since the process started, newest first, with their reasons. */
  failed(): FailedJob[] {
    return this.failedJobs.slice().reverse();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  async closeWorkers(): Promise<void> {
    this.closing = true;
    for (const timer of this.timers.values()) clearInterval(timer);
    for (const wake of this.sleepers) wake();
    await Promise.allSettled([...this.running.values()]);
  }

  closeQueues(): Promise<void> {
    return Promise.resolve();
  }

  private async execute(job: JobEnvelope): Promise<void> {
    const queue = JOBS[job.name].queue;
    const counters = this.counters.get(queue) as Counters;
    const handlers = await this.whenStarted();
    for (let attempt = 1; ; attempt += 1) {
      counters.waiting += 1;
      await this.acquire(queue);
      counters.waiting -= 1;
      counters.active += 1;
      try {
        await runJob(
          handlers,
          job.name,
          job.payload,
          { attempt, worker: this.worker, log: this.log.child({ job: job.name, jobId: job.jobId, attempt }) },
          job.trace,
        );
        counters.completed += 1;
        if (attempt > 1) this.retryEarly(queue);
        return;
      } catch (err) {
        if (endsJob(err)) {
          this.log.error({ err, job: job.name, jobId: job.jobId, attempt }, 'job failed for good');
          counters.failed += 1;
          this.failedJobs.push({ queue, name: job.name, id: job.jobId, reason: err instanceof Error ? err.message : String(err), attempts: attempt, failed_at: new Date().toISOString() });
          if (this.failedJobs.length > FAILED_KEPT) this.failedJobs.shift();
          return;
        }
        this.log.warn({ err, job: job.name, jobId: job.jobId, attempt }, 'job failed; will retry');
      } finally {
        counters.active -= 1;
        this.release(queue);
      }
      counters.delayed += 1;
      await this.pause(retryDelayMs(this.retry, attempt), queue);
      counters.delayed -= 1;
      // Rejecting keeps the job's outbox entry, so the next start runs it again.
      if (this.closing) throw new Error(`${job.name} was waiting to retry when the queue closed; it runs again after a restart`);
    }
  }

  /** A job of `queue` that had failed before succeeded: what waits to retry there runs now (see RETRY_EARLY_ON_RECOVERY). */
  private retryEarly(queue: QueueName): void {
    if (!RETRY_EARLY_ON_RECOVERY.has(queue)) return;
    const now = Date.now();
    if (now - (this.retriedEarlyAt.get(queue) ?? 0) < RETRY_EARLY_MIN_GAP_MS) return;
    this.retriedEarlyAt.set(queue, now);
    for (const wake of this.retrying.get(queue) ?? []) wake();
  }

  /** Sleeps `ms`, or less when the queue closes or a job of `queue` recovers. */
  private pause(ms: number, queue: QueueName): Promise<void> {
    if (this.closing) return Promise.resolve();
    const retrying = this.retrying.get(queue) ?? new Set<() => void>();
    this.retrying.set(queue, retrying);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        retrying.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
      retrying.add(wake);
    });
  }

  private whenStarted(): Promise<JobHandlers> {
    if (this.handlers) return Promise.resolve(this.handlers);
    return new Promise((resolve) => this.readyWaiters.push(() => resolve(this.handlers as JobHandlers)));
  }

  private acquire(queue: QueueName): Promise<void> {
    const used = this.slots.get(queue) ?? 0;
    if (used < concurrencyOf(this.concurrency, queue)) {
      this.slots.set(queue, used + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const list = this.waiters.get(queue) ?? [];
      list.push(resolve);
      this.waiters.set(queue, list);
    });
  }

  private release(queue: QueueName): void {
    const next = this.waiters.get(queue)?.shift();
    if (next) next();
    else this.slots.set(queue, (this.slots.get(queue) ?? 1) - 1);
  }
}
