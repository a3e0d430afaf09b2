import os from 'node:os';
import { envelope, JOBS, QUEUE_NAMES, type JobEnvelope, type JobName, type JobOf, type JobResult, type QueueName } from '../jobs/catalogue.js';
import { PoisonJobError, runJob, type JobHandlers } from '../jobs/handlers.js';
import type { Logger } from '../lib/logger.js';
import { sleep, withTimeout } from '../lib/time.js';
import { concurrencyOf, JOB_ATTEMPTS, JOB_BACKOFF_MS, type Concurrency, type QueueDepth, type QueueDriver } from './queue-driver.js';

interface Counters {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/**
 * The embedded profile's queue: runs jobs in this process with the same handlers, attempts and
 * exponential backoff as BullMQ. Nothing here is durable, so `dispatch` resolves only when the
 * job has finished; until then its outbox entry stays, and a restart runs it again.
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

  constructor(
    private readonly log: Logger,
    private readonly concurrency: Concurrency,
    private readonly backoffMs: number = JOB_BACKOFF_MS,
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

  async request<N extends JobName>(job: JobEnvelope<N>, timeoutMs: number): Promise<JobResult<N>> {
    if (this.closing) throw new Error('in-process queue is closing');
    const queue = JOBS[job.name].queue;
    const run = async (): Promise<JobResult<N>> => {
      const handlers = await this.whenStarted();
      await this.acquire(queue);
      try {
        const log = this.log.child({ job: job.name, jobId: job.jobId, attempt: 1 });
        return (await runJob(handlers, job.name, job.payload, { attempt: 1, worker: this.worker, log })) as JobResult<N>;
      } finally {
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

  depths(): Promise<QueueDepth[]> {
    return Promise.resolve(QUEUE_NAMES.map((queue) => ({ queue, ...(this.counters.get(queue) as Counters) })));
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  async closeWorkers(): Promise<void> {
    this.closing = true;
    for (const timer of this.timers.values()) clearInterval(timer);
    await Promise.allSettled([...this.running.values()]);
  }

  closeQueues(): Promise<void> {
    return Promise.resolve();
  }

  private async execute(job: JobEnvelope): Promise<void> {
    const queue = JOBS[job.name].queue;
    const counters = this.counters.get(queue) as Counters;
    counters.waiting += 1;
    const handlers = await this.whenStarted();
    await this.acquire(queue);
    counters.waiting -= 1;
    try {
      for (let attempt = 1; ; attempt += 1) {
        counters.active += 1;
        try {
          await runJob(handlers, job.name, job.payload, {
            attempt,
            worker: this.worker,
            log: this.log.child({ job: job.name, jobId: job.jobId, attempt }),
          });
          counters.completed += 1;
          return;
        } catch (err) {
          const permanent = err instanceof PoisonJobError || attempt >= JOB_ATTEMPTS;
          this.log[permanent ? 'error' : 'warn']({ err, job: job.name, jobId: job.jobId, attempt }, permanent ? 'job failed for good' : 'job failed; will retry');
          if (permanent) {
            counters.failed += 1;
            return;
          }
        } finally {
          counters.active -= 1;
        }
        counters.delayed += 1;
        await sleep(this.backoffMs * 2 ** (attempt - 1));
        counters.delayed -= 1;
      }
    } finally {
      this.release(queue);
    }
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
