import { producerSpan, type TraceCarrier } from '../../lib/tracing.js';
import type { JsonSchema } from '../../lib/validation.js';

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
  /** Deletes records past their schema's retention: of one project, or of all when projectId is omitted. */
  'retention.sweep': { projectId?: string };
  /**
   * Extracts a typed record from text and stores it when complete. A request the API waits on,
   * so the text travels in the payload; the job is removed from Redis once it has answered.
   */
  'record.extract': ExtractPayload;
  /** Reads, chunks, embeds and indexes a document revision (or removes what is left of a deleted document). */
  'document.process': { projectId: string; documentId: string; revision: number };
  /** Removes the vectors of a deleted knowledge base, or of one deleted document. */
  'knowledge.purge': { projectId: string; embedModel: string; kbId?: string; documentId?: string };
  /**
   * mem0 add with `infer: true` for a waiting request: picks the facts worth remembering out of a
   * conversation, decides what each does to the entity's memories, and writes that.
   */
  'memory.infer': InferPayload;
  /** Re-queues stuck indexing work and re-indexes rows whose vectors are missing (all projects). */
  'index.reconcile': Record<string, never>;
  /** Sends one recorded webhook delivery (a mem0 memory event) to its webhook, signed; retried while the receiver fails. */
  'webhook.deliver': { projectId: string; deliveryId: string };
  /**
   * Re-embeds a project's memories into the model its setting names, then switches to it and
   * removes the old vectors; also removes the vectors of a re-embedding replaced or cancelled.
   * Works on whatever re-embedding the project has under way (`migrationId` only names the change
   * that queued it), one job per project at a time.
   */
  'memory.reembed': { projectId: string; migrationId: string };
  /** Fills a mem0 memory export's schema from the memories it names, with the project's extraction model; retried while the model is down. */
  'memory.export': { projectId: string; exportId: string };
}

/** The input of one fact-inference request: the conversation, and whose memories (with their metadata) it adds to. */
export interface InferPayload {
  requestId: string;
  projectId: string;
  model: string;
  messages: Array<{ role: string; content: string }>;
  user_id?: string;
  agent_id?: string;
  run_id?: string;
  app_id?: string;
  metadata?: Record<string, unknown>;
  /** mem0's `expiration_date` ('YYYY-MM-DD', null: none): set on every memory it adds or updates. */
  expiration_date?: string | null;
  /** mem0's `timestamp` in epoch ms: the event time of the memories it adds. */
  eventTime?: number;
  /** mem0's `custom_categories`: the catalogue the memories it adds are categorized by. */
  categories?: Array<{ name: string; description: string }>;
  /** mem0's `custom_instructions` (and `agent_custom_instructions` for an agent's memories), for the model picking the facts. */
  instructions?: string;
  /** mem0's `infer: false`: the messages are stored as given (the job only extracts `structured`). */
  asGiven?: boolean;
  /** mem0's `structured_data_schema`, as extraction reads it, and every top-level field it names. */
  structured?: { schema: Record<string, unknown>; fields: string[] };
  /** The add's `Idempotency-Key`, which `requestId` owns: the job records its answer under it. */
  idempotencyKey?: string;
}

/** The input of one extraction request. */
export interface ExtractPayload {
  requestId: string;
  projectId: string;
  schema: string;
  model: string;
  text?: string;
  messages?: Array<{ role: string; content: string }>;
  user_id?: string;
  agent_id?: string;
  run_id?: string;
  app_id?: string;
  metadata?: Record<string, unknown>;
}

/** What a request job answers (jobs not listed answer nothing). */
export interface JobResults {
  /** `error` carries a client-facing failure (e.g. a refused model) back to the waiting request. */
  'record.extract':
    | { stored: true; record: Record<string, unknown> }
    | { stored: false; record: Record<string, unknown> | null; missing: string[] }
    | { error: { status: number; code: string; detail: string } };
  /** `results`: the memories the add touched, each with its mem0 `event`. */
  'memory.infer': { results: Array<Record<string, unknown>> } | { error: { status: number; code: string; detail: string } };
}

export type JobResult<N extends JobName> = N extends keyof JobResults ? JobResults[N] : void;

export type JobName = keyof JobPayloads;
export type JobOf<N extends JobName> = JobPayloads[N];

/** Queues, one per kind of work, so slow work never starves quick work. */
export const QUEUE_NAMES = ['maintenance', 'embedding', 'extraction', 'documents', 'webhooks'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

interface JobDefinition<N extends JobName> {
  queue: QueueName;
  schema: JsonSchema;
  jobId: (payload: JobOf<N>) => string;
}

const id = { type: 'string', minLength: 1, maxLength: 64 } as const;
const messages = {
  type: 'array',
  items: { type: 'object', required: ['role', 'content'], properties: { role: { type: 'string' }, content: { type: 'string' } } },
} as const;

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
  'retention.sweep': {
    queue: 'maintenance',
    schema: { type: 'object', additionalProperties: false, properties: { projectId: id } },
    // one per scope and minute: the same sweep queued twice in a minute runs once
    jobId: (p) => `retention.sweep-${p.projectId ?? 'all'}-${Math.floor(Date.now() / 60_000)}`,
  },
  'record.extract': {
    queue: 'extraction',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['requestId', 'projectId', 'schema', 'model'],
      properties: {
        requestId: id,
        projectId: id,
        schema: { type: 'string', minLength: 1, maxLength: 64 },
        model: { type: 'string', minLength: 1, maxLength: 128 },
        text: { type: 'string' },
        messages,
        user_id: { type: 'string' },
        agent_id: { type: 'string' },
        run_id: { type: 'string' },
        app_id: { type: 'string' },
        metadata: { type: 'object' },
      },
    },
    jobId: (p) => `record.extract-${p.requestId}`,
  },
  'document.process': {
    queue: 'documents',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'documentId', 'revision'],
      properties: { projectId: id, documentId: id, revision: { type: 'integer', minimum: 1 } },
    },
    jobId: (p) => `document.process-${p.documentId}-${p.revision}`,
  },
  'knowledge.purge': {
    queue: 'maintenance',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'embedModel'],
      properties: { projectId: id, embedModel: { type: 'string', minLength: 1, maxLength: 128 }, kbId: id, documentId: id },
    },
    jobId: (p) => `knowledge.purge-${p.kbId ?? ''}-${p.documentId ?? ''}`,
  },
  'memory.infer': {
    queue: 'extraction',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['requestId', 'projectId', 'model', 'messages'],
      properties: {
        requestId: id,
        projectId: id,
        model: { type: 'string', minLength: 1, maxLength: 128 },
        messages,
        user_id: { type: 'string' },
        agent_id: { type: 'string' },
        run_id: { type: 'string' },
        app_id: { type: 'string' },
        metadata: { type: 'object' },
        expiration_date: { type: ['string', 'null'], format: 'date' },
        eventTime: { type: 'number' },
        categories: {
          type: 'array',
          maxItems: 50,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'description'],
            properties: { name: { type: 'string', maxLength: 64 }, description: { type: 'string', maxLength: 500 } },
          },
        },
        instructions: { type: 'string', maxLength: 16_500 },
        asGiven: { type: 'boolean' },
        structured: {
          type: 'object',
          additionalProperties: false,
          required: ['schema', 'fields'],
          properties: { schema: { type: 'object' }, fields: { type: 'array', items: { type: 'string' } } },
        },
        idempotencyKey: { type: 'string', minLength: 1, maxLength: 255 },
      },
    },
    jobId: (p) => `memory.infer-${p.requestId}`,
  },
  'index.reconcile': {
    queue: 'maintenance',
    schema: { type: 'object', additionalProperties: false, properties: {} },
    // one per minute: workers starting together run one start-up pass
    jobId: () => `index.reconcile-${Math.floor(Date.now() / 60_000)}`,
  },
  'webhook.deliver': {
    // a queue of its own: a slow or failing receiver never holds up indexing or maintenance
    queue: 'webhooks',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'deliveryId'],
      properties: { projectId: id, deliveryId: id },
    },
    jobId: (p) => `webhook.deliver-${p.deliveryId}`,
  },
  'memory.reembed': {
    // beside the indexing jobs, whose embedder it shares (and paces itself by)
    queue: 'embedding',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'migrationId'],
      properties: { projectId: id, migrationId: id },
    },
    jobId: (p) => `memory.reembed-${p.migrationId}`,
  },
  'memory.export': {
    // where the extraction models run; unlike that queue's requests, it is retried with backoff
    queue: 'extraction',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['projectId', 'exportId'],
      properties: { projectId: id, exportId: id },
    },
    jobId: (p) => `memory.export-${p.exportId}`,
  },
};

export const JOB_NAMES = Object.keys(JOBS) as JobName[];

/** A unit of derived work, as recorded in the outbox and handed to a queue driver. */
export interface JobEnvelope<N extends JobName = JobName> {
  name: N;
  jobId: string;
  payload: JobOf<N>;
  /** The trace context the job was queued in (while tracing is on): its run continues that trace, in whichever process it runs. */
  trace?: TraceCarrier;
}

/**
 * Builds the envelope for a job, deriving its idempotent id. Called where the work is queued, so
 * while tracing is on it records an `enqueue` span there and carries its context to the job's run.
 */
export function envelope<N extends JobName>(name: N, payload: JobOf<N>): JobEnvelope<N> {
  const jobId = JOBS[name].jobId(payload);
  const trace = producerSpan(`enqueue ${name}`, {
    'messaging.operation.type': 'create',
    'messaging.operation.name': 'enqueue',
    'messaging.destination.name': JOBS[name].queue,
    'messaging.message.id': jobId,
  });
  return trace ? { name, jobId, payload, trace } : { name, jobId, payload };
}
