import type { JobOf, JobResult, JobResults } from '../../contracts/jobs/catalogue.js';
import { envelope } from '../../contracts/jobs/catalogue.js';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { AppError, unavailable } from '../../lib/errors.js';

/** A job answer that is a client-facing failure, for the request waiting on it. */
export type ClientError = { error: { status: number; code: string; detail: string } };

/** The jobs an API request queues for a model and waits on. */
export type ModelJob = 'record.extract' | 'memory.infer';

/**
 * Queues a model job for a waiting request and waits for its answer (at most `timeoutMs`, whatever
 * is down: the queue, the worker, the model); a client-facing failure is rethrown as such.
 */
export async function askModel<N extends ModelJob>(queue: QueueDriver, timeoutMs: number, job: N, payload: JobOf<N>, what: string): Promise<Exclude<JobResults[N], ClientError>> {
  let answer: JobResult<N>;
  try {
    answer = await queue.request(envelope(job, payload), timeoutMs);
  } catch (err) {
    throw unavailable(`${what} did not complete within its ${timeoutMs / 1000} s limit (${err instanceof Error ? err.message : String(err)}); retry later.`);
  }
  if ('error' in answer) {
    const { error } = answer as ClientError;
    throw new AppError(error.status, error.code, error.detail);
  }
  return answer as unknown as Exclude<JobResults[N], ClientError>;
}

/** A 4xx AppError as a job answer for the waiting request; anything else is rethrown (the job fails and may retry). */
export function clientError(err: unknown): ClientError {
  if (err instanceof AppError && err.status < 500) return { error: { status: err.status, code: err.code, detail: err.detail } };
  throw err;
}
