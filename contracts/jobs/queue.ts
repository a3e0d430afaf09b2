import type { JobEnvelope, JobName, JobOf, JobResult, QueueName } from './catalogue.js';
import type { JobHandlers } from './handlers.js';

/** Job counts of one queue, by state. */
export interface QueueDepth {
  queue: QueueName;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/** A job that ended failed for good, as the embedded profile's board lists it. */
export interface FailedJob {
  queue: QueueName;
  name: JobName;
  id: string;
  reason: string;
  attempts: number;
  failed_at: string;
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
   * Hands many jobs to the queue at once (BullMQ: one pipelined round trip per queue). Resolves
   * once the queue has taken them all, to one promise per job, in order, that resolves when that
   * job can no longer be lost, as `dispatch` does (BullMQ: at once; in-process: when the job has
   * finished). Rejects when the queue did not take them all; it may have stored some, which their
   * job ids make harmless to hand over again.
   */
  dispatchMany(jobs: readonly JobEnvelope[]): Promise<Array<Promise<void>>>;
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
  /**
   * The jobs that ended failed for good, newest first, with their reasons: the in-process queue's
   * own record, for the embedded board (BullMQ keeps its failed jobs, which Bull Board lists).
   */
  failed?(): FailedJob[];
  /** Throws when the queue backend is unreachable. */
  ping(): Promise<void>;
  /** Stops taking jobs and waits for running ones. */
  closeWorkers(): Promise<void>;
  /** Closes producer connections. */
  closeQueues(): Promise<void>;
}
