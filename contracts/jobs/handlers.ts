import { UnrecoverableError } from 'bullmq';
import { isTransient } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { consumerParent, inSpan, SpanKind, tracingEnabled, type TraceCarrier } from '../../lib/tracing.js';
import { ajv } from '../../lib/validation.js';
import { JOB_NAMES, JOBS, type JobName, type JobOf, type JobResult } from './catalogue.js';

/** What a handler gets besides its payload. */
export interface JobContext {
  /** 1 on the first run, 2 on the first retry, and so on. */
  attempt: number;
  /** Identifies the process running the job (host:pid). */
  worker: string;
  log: Logger;
}

export type JobHandler<N extends JobName> = (payload: JobOf<N>, ctx: JobContext) => Promise<JobResult<N>>;
export type JobHandlers = { [N in JobName]: JobHandler<N> };

/**
 * What a handler throws when its job can never succeed (a corrupt file, say) once it has recorded
 * that on its row: the job ends failed with this message as its reason, and is never retried, so
 * the queue shows it among the failed jobs.
 */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** A payload that can never succeed: logged and dropped, never retried. */
export class PoisonJobError extends PermanentJobError {
  override name = 'PoisonJobError';
}

/**
 * The one retry rule of every job: true when `err` ends the job for good (a poison payload, a
 * permanent failure a handler declared, an error marked unrecoverable, or input that can never
 * succeed, see `isTransient`); false when the job must be tried again later, however long the
 * dependency it waits on stays down.
 */
export function endsJob(err: unknown): boolean {
  return err instanceof PermanentJobError || err instanceof UnrecoverableError || !isTransient(err);
}

const validators = Object.fromEntries(JOB_NAMES.map((name) => [name, ajv.compile(JOBS[name].schema)])) as unknown as {
  [N in JobName]: (data: unknown) => data is JobOf<N>;
};

/**
 * Checks that every job in the catalogue has exactly one handler and nothing else is handled;
 * a process refuses to start otherwise.
 */
export function assertHandlers(handlers: Partial<Record<string, unknown>>): asserts handlers is JobHandlers {
  const missing = JOB_NAMES.filter((name) => typeof handlers[name] !== 'function');
  const unknown = Object.keys(handlers).filter((name) => !(JOB_NAMES as string[]).includes(name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(
      `Job handlers do not match the catalogue: missing ${missing.join(', ') || 'none'}; unknown ${unknown.join(', ') || 'none'}`,
    );
  }
}

/**
 * Runs one job: re-validates the payload (a queue may hold jobs written by an older version)
 * and calls the handler. Both queue drivers execute jobs through here. While tracing is on, the
 * run is a `run <job>` span continuing the trace the job was queued in (`trace`), or a trace of
 * its own for a job queued without one.
 */
export function runJob(handlers: JobHandlers, name: string, payload: unknown, ctx: JobContext, trace?: TraceCarrier): Promise<unknown> {
  if (!tracingEnabled()) return handle(handlers, name, payload, ctx);
  const queue = (JOB_NAMES as string[]).includes(name) ? JOBS[name as JobName].queue : 'unknown';
  return inSpan(
    `run ${name}`,
    {
      kind: SpanKind.CONSUMER,
      parent: consumerParent(trace),
      attributes: { 'messaging.operation.type': 'process', 'messaging.destination.name': queue, 'cairn.job.attempt': ctx.attempt, 'cairn.job.worker': ctx.worker },
    },
    () => handle(handlers, name, payload, ctx),
  );
}

async function handle(handlers: JobHandlers, name: string, payload: unknown, ctx: JobContext): Promise<unknown> {
  if (!(JOB_NAMES as string[]).includes(name)) throw new PoisonJobError(`No handler for job "${name}"`);
  const jobName = name as JobName;
  const validate = validators[jobName];
  if (!validate(payload)) {
    const { errors } = validate as unknown as { errors: Parameters<typeof ajv.errorsText>[0] };
    throw new PoisonJobError(`Invalid payload for ${name}: ${ajv.errorsText(errors)}`);
  }
  const handler = handlers[jobName] as (payload: unknown, ctx: JobContext) => Promise<unknown>;
  return handler(payload, ctx);
}
