import type { JsonSchema } from '../lib/validation.js';

/**
 * The typed job catalogue: every job name, the queue it runs on, its payload type and schema,
 * and how its job id is derived from the entity (so enqueueing the same work twice is a no-op).
 * Payloads carry ids, never whole rows or secrets.
 */
export interface JobPayloads {
  /** Marks a pipeline probe done: proof that outbox → queue → worker works end to end. */
  'probe.touch': { projectId: string; probeId: string };
  /** Makes a memory's vector match its row (embed and upsert, or remove when the row is gone). */
  'memory.index': { projectId: string; memoryId: string; revision: number };
}

export type JobName = keyof JobPayloads;
export type JobOf<N extends JobName> = JobPayloads[N];

/** Queues, one per kind of work, so slow work never starves quick work. */
export const QUEUE_NAMES = ['maintenance', 'embedding'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

interface JobDefinition<N extends JobName> {
  queue: QueueName;
  schema: JsonSchema;
  jobId: (payload: JobOf<N>) => string;
}

const id = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const JOBS: { [N in JobName]: JobDefinition<N> } = {
  'probe.touch': {
    queue: 'maintenance',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'probeId'],
      properties: { projectId: id, probeId: id },
    },
    jobId: (p) => `probe.touch-${p.probeId}`,
  },
  'memory.index': {
    queue: 'embedding',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'memoryId', 'revision'],
      properties: { projectId: id, memoryId: id, revision: { type: 'integer', minimum: 1 } },
    },
    // one job per revision: a change after the job ran (or while it runs) queues a new one
    jobId: (p) => `memory.index-${p.memoryId}-${p.revision}`,
  },
};

export const JOB_NAMES = Object.keys(JOBS) as JobName[];

/** A unit of derived work, as recorded in the outbox and handed to a queue driver. */
export interface JobEnvelope<N extends JobName = JobName> {
  name: N;
  jobId: string;
  payload: JobOf<N>;
}

/** Builds the envelope for a job, deriving its idempotent id. */
export function envelope<N extends JobName>(name: N, payload: JobOf<N>): JobEnvelope<N> {
  return { name, jobId: JOBS[name].jobId(payload), payload };
}
