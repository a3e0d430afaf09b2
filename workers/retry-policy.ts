import type { QueueName } from '../contracts/jobs/catalogue.js';

/** How both queue drivers run jobs: how many at once, and when a failed one is tried again. */

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
 * Queues whose jobs waiting out a retry are run at once when a job of the same queue that had
 * failed before succeeds: its success says the dependency they wait for (Milvus, the model, a
 * provider) is back, so they need not sit out the rest of a backoff of up to a minute. At most
 * once per `RETRY_EARLY_MIN_GAP_MS` per queue, so a job that keeps failing is not run again on
 * every success. Not the maintenance queue, whose delayed jobs are schedules, nor request
 * queues, which do not retry.
 */
export const RETRY_EARLY_ON_RECOVERY: ReadonlySet<QueueName> = new Set<QueueName>(['embedding', 'documents']);
export const RETRY_EARLY_MIN_GAP_MS = 10_000;
