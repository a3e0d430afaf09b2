import type { JobEnvelope, QueueName } from '../jobs/catalogue.js';
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
  /** Starts consuming every queue with these handlers. */
  startWorkers(handlers: JobHandlers): void;
  depths(): Promise<QueueDepth[]>;
  /** Throws when the queue backend is unreachable. */
  ping(): Promise<void>;
  /** Stops taking jobs and waits for running ones. */
  closeWorkers(): Promise<void>;
  /** Closes producer connections. */
  closeQueues(): Promise<void>;
}
