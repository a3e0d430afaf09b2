import type { JobEnvelope, JobName, JobOf, JobResult, QueueName } from '../jobs/catalogue.js';
import type { JobHandlers } from '../jobs/handlers.js';

/** Job counts of one queue, by state. */
export interface QueueDepth {
  queue: QueueName;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/** Jobs a worker runs at once, per queue: a number for all queues, or a default with overrides. */
export type Concurrency = number | { default: number; byQueue: Partial<Record<QueueName, number>> };

export const concurrencyOf = (concurrency: Concurrency, queue: QueueName): number =>
  typeof concurrency === 'number' ? concurrency : (concurrency.byQueue[queue] ?? concurrency.default);

/**
 * Retry policy shared by both drivers: a transient failure is retried for as long as it takes,
 * after `baseMs`, 2×, 4×, … capped at `maxMs`; only a failure that `endsJob` calls permanent
 * stops a job. (BullMQ needs a number of attempts: `JOB_ATTEMPTS` at a 60 s cap is years.)
 */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

export const JOB_BACKOFF_MS = 1_000;
export const JOB_BACKOFF_MAX_MS = 60_000;
export const JOB_ATTEMPTS = 1_000_000;
export const DEFAULT_RETRY: RetryPolicy = { baseMs: JOB_BACKOFF_MS, maxMs: JOB_BACKOFF_MAX_MS };

/** The wait before retry number `attempt` (1 = the first retry): exponential, capped. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
}

/**
 * Where jobs go and where they run: BullMQ on Redis in production, an in-process runner on the
 * embedded profile. Both run handlers through `runJob`.
 */
export interface QueueDriver {
  readonly kind: 'bullmq' | 'in-process';
  /**
   * Hands a job to the queue. Resolves once the job can no longer be lost by this process dying:
   * BullMQ has stored it, or (in-process, where memory is not durable) the job has finished.
   */
  dispatch(job: JobEnvelope): Promise<void>;
  /**
   * Runs a job once, now, and waits up to `timeoutMs` for its answer (a caller is waiting, so there
   * are no retries). Rejects when no worker answered in time.
   */
  request<N extends JobName>(job: JobEnvelope<N>, timeoutMs: number): Promise<JobResult<N>>;
  /** Starts consuming every queue with these handlers. */
  startWorkers(handlers: JobHandlers): void;
  /**
   * Runs a job every `everyMs`, from now on: a BullMQ job scheduler keyed by the job name (every
   * worker upserts the same one, so it runs once per interval however many workers there are), or
   * a timer in this process (in-process). Calling it again with the same name replaces the schedule.
   */
  schedule<N extends JobName>(name: N, everyMs: number, payload: JobOf<N>): Promise<void>;
  /**
   * Queues a job again unless it is already waiting, delayed or running: the reconciliation's way
   * to restart work whose job is gone (finished, dropped, or lost with Redis). Unlike `dispatch`,
   * a finished job with the same id does not stop it, and it never waits for the job to run.
   * Resolves true when it queued the job.
   */
  requeue(job: JobEnvelope): Promise<boolean>;
  depths(): Promise<QueueDepth[]>;
  /** Throws when the queue backend is unreachable. */
  ping(): Promise<void>;
  /** Stops taking jobs and waits for running ones. */
  closeWorkers(): Promise<void>;
  /** Closes producer connections. */
  closeQueues(): Promise<void>;
}

/**
 * Queues whose jobs waiting out a retry are run at once when a job of the same queue that had
 * failed before succeeds: its success says the dependency they wait for (Milvus, the model, a
 * provider) is back, so they need not sit out the rest of a backoff of up to a minute. At most
 * once per `RETRY_EARLY_MIN_GAP_MS` per queue, so a job that keeps failing is not run again on
 * every success. Not the maintenance queue, whose delayed jobs are schedules, nor request
 * queues, which do not retry.
 */
export const RETRY_EARLY_ON_RECOVERY: ReadonlySet<QueueName> = new Set<QueueName>(['embedding', 'documents']);
export const RETRY_EARLY_MIN_GAP_MS = 10_000;
