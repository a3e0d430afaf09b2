import os from 'node:os';
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { JOBS, QUEUE_NAMES, type JobEnvelope, type JobName, type JobOf, type JobResult, type QueueName } from '../contracts/jobs/catalogue.js';
import { endsJob, runJob, type JobHandlers } from '../contracts/jobs/handlers.js';
import type { Logger } from '../lib/logger.js';
import type { TraceCarrier } from '../lib/tracing.js';
import { withTimeout } from '../lib/time.js';
import type { QueueDepth, QueueDriver } from '../contracts/jobs/queue.js';
import { concurrencyOf, DEFAULT_RETRY, JOB_ATTEMPTS, RETRY_EARLY_MIN_GAP_MS, RETRY_EARLY_ON_RECOVERY, retryDelayMs, type Concurrency, type RetryPolicy } from './retry-policy.js';
import { nextTurn } from '../lib/turns.js';

export interface BullmqOptions {
  redisUrl: string;
  /** Key prefix in Redis; lets several deployments (or test runs) share one Redis. */
  prefix: string;
  concurrency: Concurrency;
  /** Lock time of a running job; a worker that dies loses the lock and the job is re-run. */
  lockMs: number;
  /** Backoff of transient failures (default: 1 s doubling, capped at 60 s). */
  retry?: RetryPolicy;
}

/** The name of the custom backoff strategy (exponential with a cap), defined on every worker. */
const CAPPED = 'capped';
/** Scheduled jobs run again at their next interval, so a few retries are enough. */
const SCHEDULED_ATTEMPTS = 3;

const DISPATCH_TIMEOUT_MS = 5_000;

/** Jobs prepared for Redis in one go (`dispatchMany`), the event loop free between slices. */
const DISPATCH_SLICE = 20;

/** How a dispatched job is stored: its idempotent id, retries with capped backoff, bounded retention, its trace context. */
function jobOptions(job: JobEnvelope): JobsOptions {
  return {
    jobId: job.jobId,
    attempts: JOB_ATTEMPTS,
    backoff: { type: CAPPED },
    removeOnComplete: { count: 1_000, age: 24 * 3600 },
    removeOnFail: { count: 5_000, age: 7 * 24 * 3600 },
    ...traceOption(job),
  };
}

/**
 * The job's trace context, kept beside its data in the slot BullMQ has for it (`telemetry.metadata`),
 * so the payload stays exactly what the catalogue's schema accepts.
 */
function traceOption(job: JobEnvelope): Pick<JobsOptions, 'telemetry'> {
  return job.trace ? { telemetry: { metadata: JSON.stringify(job.trace) } } : {};
}

/** The trace context a stored job carries, if any (an unreadable one starts a new trace). */
function traceOf(job: Job): TraceCarrier | undefined {
  const metadata = job.opts.telemetry?.metadata;
  if (!metadata) return undefined;
  try {
    return JSON.parse(metadata) as TraceCarrier;
  } catch {
    return undefined;
  }
}

/**
 * BullMQ on Redis. Producers fail fast when Redis is down (the outbox keeps the work); workers
 * wait for Redis to come back. Stalled jobs (their worker died) are moved back and re-run.
 */
export class BullmqQueue implements QueueDriver {
  readonly kind = 'bullmq' as const;
  private readonly producer: Redis;
  private readonly queues: Map<QueueName, Queue>;
  private readonly workers: Worker[] = [];
  private readonly workerConnections: Redis[] = [];
  private readonly worker = `${os.hostname()}:${process.pid}`;
  /** Schedules not yet stored because Redis did not answer, retried until it does. */
  private readonly scheduleRetries = new Map<string, NodeJS.Timeout>();
  private schedulesStopped = false;
  /** Completion events of the queues that serve requests, opened on first use. */
  private readonly events = new Map<QueueName, QueueEvents>();
  /** When jobs waiting to retry were last run early, by queue. */
  private readonly retriedEarlyAt = new Map<QueueName, number>();
  private readonly eventConnections: Redis[] = [];

  constructor(
    private readonly options: BullmqOptions,
    private readonly log: Logger,
  ) {
    this.producer = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      lazyConnect: false,
    });
    this.producer.on('error', (err) => this.log.debug({ err: err.message }, 'queue producer connection error'));
    this.queues = new Map(
      QUEUE_NAMES.map((name) => {
        const queue = new Queue(name, { connection: this.producer, prefix: options.prefix });
        queue.on('error', (err) => this.log.debug({ err: err.message, queue: name }, 'queue error'));
        return [name, queue];
      }),
    );
  }

  /** The BullMQ queues, for Bull Board. */
  bullQueues(): Queue[] {
    return [...this.queues.values()];
  }

  async dispatch(job: JobEnvelope): Promise<void> {
    const queue = this.queues.get(JOBS[job.name].queue) as Queue;
    // A connection caught mid-reconnect can leave `add` pending indefinitely; bounding it lets the
    // relay release the outbox entry and retry (the job id makes a late success harmless).
    const added = queue.add(job.name, job.payload, jobOptions(job));
    await withTimeout(added, DISPATCH_TIMEOUT_MS, `Redis did not accept the job within ${DISPATCH_TIMEOUT_MS} ms`);
  }

  async dispatchMany(jobs: readonly JobEnvelope[]): Promise<Array<Promise<void>>> {
    const byQueue = new Map<QueueName, JobEnvelope[]>();
    for (const job of jobs) {
      const name = JOBS[job.name].queue;
      const group = byQueue.get(name) ?? [];
      group.push(job);
      byQueue.set(name, group);
    }
    // `addBulk` pipelines one add per job; an id already queued is left as it is, as `add` does.
    // Built a slice at a time with the event loop free between slices: BullMQ prepares a whole
    // bulk at once, and a hundred jobs held requests up for 50–150 ms on a busy machine.
    const slices: Array<Promise<unknown>> = [];
    for (const [name, group] of byQueue) {
      for (let i = 0; i < group.length; i += DISPATCH_SLICE) {
        if (slices.length > 0) await nextTurn();
        const slice = group.slice(i, i + DISPATCH_SLICE);
        const adding = (this.queues.get(name) as Queue).addBulk(slice.map((job) => ({ name: job.name, data: job.payload, opts: jobOptions(job) })));
        // seen at once, so a slice refused while later ones are prepared is no unhandled rejection
        adding.catch(() => undefined);
        slices.push(adding);
      }
    }
    const added = Promise.all(slices);
    await withTimeout(added, DISPATCH_TIMEOUT_MS, `Redis did not accept ${jobs.length} jobs within ${DISPATCH_TIMEOUT_MS} ms`);
    return jobs.map(() => Promise.resolve());
  }

  async requeue(job: JobEnvelope): Promise<boolean> {
    const queue = this.queues.get(JOBS[job.name].queue) as Queue;
    const existing = await withTimeout(queue.getJob(job.jobId), DISPATCH_TIMEOUT_MS, `Redis did not answer within ${DISPATCH_TIMEOUT_MS} ms`);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
      // a finished job keeps its id for a while, and an id that exists makes `add` a no-op
      try {
        await existing.remove();
      } catch (err) {
        this.log.debug({ err, jobId: job.jobId }, 'finished job not removed; not queued again');
        return false;
      }
    }
    await this.dispatch(job);
    return true;
  }

  async request<N extends JobName>(job: JobEnvelope<N>, timeoutMs: number): Promise<JobResult<N>> {
    // A caller is waiting: with Redis known to be down, answer at once rather than after reconnect attempts.
    if (['reconnecting', 'close', 'end'].includes(this.producer.status)) throw new Error(`the queue (Redis) is not connected (${this.producer.status})`);
    const started = Date.now();
    const left = (): number => Math.max(1, timeoutMs - (Date.now() - started));
    const name = JOBS[job.name].queue;
    const queue = this.queues.get(name) as Queue;
    // every step is bounded by what is left of the caller's limit, so the whole request is too
    const events = await withTimeout(this.eventsOf(name), Math.min(left(), DISPATCH_TIMEOUT_MS), `Redis did not answer within ${DISPATCH_TIMEOUT_MS} ms`);
    const added = await withTimeout(
      // kept a while once done, as other jobs are, so queue depths and /metrics count them
      queue.add(job.name, job.payload, { jobId: job.jobId, attempts: 1, removeOnComplete: { count: 1_000, age: 3600 }, removeOnFail: { age: 3600 }, ...traceOption(job) }),
      Math.min(left(), DISPATCH_TIMEOUT_MS),
      `Redis did not accept the job within ${DISPATCH_TIMEOUT_MS} ms`,
    );
    return (await withTimeout(added.waitUntilFinished(events, left()), left() + 100, `no answer within ${timeoutMs} ms`)) as JobResult<N>;
  }

  private async eventsOf(name: QueueName): Promise<QueueEvents> {
    let events = this.events.get(name);
    if (!events) {
      const connection = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
      connection.on('error', (err) => this.log.debug({ err: err.message }, 'queue events connection error'));
      this.eventConnections.push(connection);
      events = new QueueEvents(name, { connection, prefix: this.options.prefix });
      events.on('error', (err) => this.log.debug({ err: err.message, queue: name }, 'queue events error'));
      this.events.set(name, events);
    }
    await events.waitUntilReady();
    return events;
  }

  startWorkers(handlers: JobHandlers): void {
    for (const name of QUEUE_NAMES) {
      const connection = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
      connection.on('error', (err) => this.log.debug({ err: err.message }, 'worker connection error'));
      this.workerConnections.push(connection);
      const worker = new Worker(
        name,
        async (job: Job) => {
          const log = this.log.child({ job: job.name, jobId: job.id, attempt: job.attemptsMade + 1 });
          try {
            const result = await runJob(handlers, job.name, job.data, { attempt: job.attemptsMade + 1, worker: this.worker, log }, traceOf(job));
            if (job.attemptsMade > 0) this.retryEarly(name);
            return result;
          } catch (err) {
            if (endsJob(err) && !(err instanceof UnrecoverableError)) {
              const reason = err instanceof Error ? err.message : String(err);
              log.error({ reason }, 'job failed for good');
              throw new UnrecoverableError(reason);
            }
            throw err;
          }
        },
        {
          // stored on each job it runs: the queue board shows which process ran (or runs) a job
          name: this.worker,
          connection,
          prefix: this.options.prefix,
          concurrency: concurrencyOf(this.options.concurrency, name),
          lockDuration: this.options.lockMs,
          stalledInterval: this.options.lockMs,
          maxStalledCount: 2,
          settings: { backoffStrategy: (attemptsMade: number) => retryDelayMs(this.options.retry ?? DEFAULT_RETRY, attemptsMade) },
        },
      );
      worker.on('error', (err) => this.log.warn({ err: err.message, queue: name }, 'worker error'));
      worker.on('failed', (job, err) =>
        // the first failure is worth a warning; the retries of an outage would flood the log
        this.log[(job?.attemptsMade ?? 0) <= 1 ? 'warn' : 'debug']({ job: job?.name, jobId: job?.id, attempts: job?.attemptsMade, error: err.message }, 'job failed'),
      );
      this.workers.push(worker);
    }
  }

  /**
   * A job of `name` that had failed before succeeded: what waits to retry in that queue, on any
   * worker process, runs now (see RETRY_EARLY_ON_RECOVERY).
   */
  private retryEarly(name: QueueName): void {
    if (!RETRY_EARLY_ON_RECOVERY.has(name)) return;
    const now = Date.now();
    if (now - (this.retriedEarlyAt.get(name) ?? 0) < RETRY_EARLY_MIN_GAP_MS) return;
    this.retriedEarlyAt.set(name, now);
    const queue = this.queues.get(name) as Queue;
    queue
      .promoteJobs()
      .then(() => this.log.debug({ queue: name }, 'a job succeeded; jobs waiting to retry run now'))
      .catch((err: Error) => this.log.debug({ err: err.message, queue: name }, 'could not run waiting jobs early'));
  }

  async depths(): Promise<QueueDepth[]> {
    return Promise.all(
      [...this.queues.entries()].map(async ([queue, q]) => {
        const c = await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
        return {
          queue,
          waiting: c.waiting ?? 0,
          active: c.active ?? 0,
          delayed: c.delayed ?? 0,
          failed: c.failed ?? 0,
          completed: c.completed ?? 0,
        };
      }),
    );
  }

  /**
   * Upserts a job scheduler whose id is the job name, so every worker process stores the same one.
   * When Redis does not answer, the upsert is retried in the background (workers wait for Redis too).
   */
  async schedule<N extends JobName>(name: N, everyMs: number, payload: JobOf<N>): Promise<void> {
    clearTimeout(this.scheduleRetries.get(name));
    this.scheduleRetries.delete(name);
    if (this.schedulesStopped) return;
    const queue = this.queues.get(JOBS[name].queue) as Queue;
    const upsert = queue.upsertJobScheduler(
      name,
      { every: everyMs },
      {
        name,
        data: payload,
        opts: {
          attempts: SCHEDULED_ATTEMPTS,
          backoff: { type: CAPPED },
          removeOnComplete: { count: 100, age: 24 * 3600 },
          removeOnFail: { count: 1_000, age: 7 * 24 * 3600 },
        },
      },
    );
    try {
      await withTimeout(upsert, DISPATCH_TIMEOUT_MS, `Redis did not store the ${name} schedule within ${DISPATCH_TIMEOUT_MS} ms`);
    } catch (err) {
      if (this.schedulesStopped) return;
      const retryMs = Math.min(everyMs, 30_000);
      this.log.warn({ err: err instanceof Error ? err.message : String(err), job: name, retryMs }, 'job schedule not stored; retrying');
      const timer = setTimeout(() => void this.schedule(name, everyMs, payload), retryMs);
      timer.unref();
      this.scheduleRetries.set(name, timer);
    }
  }

  async ping(): Promise<void> {
    await this.producer.ping();
  }

  async closeWorkers(): Promise<void> {
    this.schedulesStopped = true;
    for (const timer of this.scheduleRetries.values()) clearTimeout(timer);
    this.scheduleRetries.clear();
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all(this.workerConnections.map((c) => c.quit().catch(() => c.disconnect())));
  }

  async closeQueues(): Promise<void> {
    await Promise.all([...this.events.values()].map((e) => e.close()));
    await Promise.all(this.eventConnections.map((c) => c.quit().catch(() => c.disconnect())));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await this.producer.quit().catch(() => this.producer.disconnect());
  }
}
