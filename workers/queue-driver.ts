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

/** Retry policy shared by both drivers. */
export const JOB_ATTEMPTS = 5;
export const JOB_BACKOFF_MS = 1_000;

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
  depths(): Promise<QueueDepth[]>;
  /** Throws when the queue backend is unreachable. */
  ping(): Promise<void>;
  /** Stops taking jobs and waits for running ones. */
  closeWorkers(): Promise<void>;
  /** Closes producer connections. */
  closeQueues(): Promise<void>;
}
