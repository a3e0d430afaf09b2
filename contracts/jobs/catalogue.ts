import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { producerSpan, type TraceCarrier } from '../../lib/tracing.js';
import { MAX_CATEGORIES, MAX_CATEGORY_DESCRIPTION, MAX_CATEGORY_NAME } from '../memory-categories.js';

/*
 * The typed job catalogue: every job name, the queue it runs on, its payload, and how its job id
 * is derived from the entity (so enqueueing the same work twice is a no-op). Payloads carry ids,
 * never whole rows or secrets. Each payload is declared once, in TypeBox: the JSON Schema a worker
 * re-validates it with, and (`Static`) the type its producer and its handler see.
 */

/** An entity's id (a project's, a memory's, a document's, a request's, …). */
const ID = Type.String({ minLength: 1, maxLength: 64 });
/** A `provider/model` name. */
const MODEL = Type.String({ minLength: 1, maxLength: 128 });
/** A row's revision: a job is queued per change. */
const REVISION = Type.Integer({ minimum: 1 });
/** Most memories one `memory.index` job indexes (those one write added, changed or deleted, in jobs of this many). */
export const MAX_INDEX_GROUP = 32;
/** `{type: 'object'}`: any object, whose content the service checks (metadata, a schema). */
const ANY_OBJECT = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
/** A conversation, as the request gave it. */
const MESSAGES = Type.Array(Type.Object({ role: Type.String(), content: Type.String() }));
/** Whose memories or record the work is for, and the metadata the caller gave them. */
const OWNER = {
  user_id: Type.Optional(Type.String()),
  agent_id: Type.Optional(Type.String()),
  run_id: Type.Optional(Type.String()),
  app_id: Type.Optional(Type.String()),
  metadata: Type.Optional(ANY_OBJECT),
};
/** A payload holds the fields its schema names and no other. */
const CLOSED = { additionalProperties: false } as const;

const EXTRACT_PAYLOAD = Type.Object(
  {
    requestId: ID,
    projectId: ID,
    schema: Type.String({ minLength: 1, maxLength: 64 }),
    model: MODEL,
    text: Type.Optional(Type.String()),
    messages: Type.Optional(MESSAGES),
    ...OWNER,
  },
  CLOSED,
);

/** The input of one extraction request. */
export type ExtractPayload = Static<typeof EXTRACT_PAYLOAD>;

const INFER_PAYLOAD = Type.Object(
  {
    requestId: ID,
    projectId: ID,
    model: MODEL,
    messages: MESSAGES,
    ...OWNER,
    /** mem0's `expiration_date` ('YYYY-MM-DD', null: none): set on every memory it adds or updates. */
    expiration_date: Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.Null()])),
    /** mem0's `timestamp` in epoch ms: the event time of the memories it adds. */
    eventTime: Type.Optional(Type.Number()),
    /** mem0's `custom_categories`: the catalogue the memories it adds are categorized by. */
    categories: Type.Optional(
      Type.Array(
        Type.Object({ name: Type.String({ maxLength: MAX_CATEGORY_NAME }), description: Type.String({ maxLength: MAX_CATEGORY_DESCRIPTION }) }, CLOSED),
        { maxItems: MAX_CATEGORIES },
      ),
    ),
    /**
     * mem0's `custom_instructions` (and `agent_custom_instructions` for an agent's memories, joined
     * to them by a newline), for the model picking the facts: bounded above what the two request
     * fields joined can reach.
     */
    instructions: Type.Optional(Type.String({ maxLength: 16_500 })),
    /** mem0's `infer: false`: the messages are stored as given (the job only extracts `structured`). */
    asGiven: Type.Optional(Type.Boolean()),
    /** mem0's `structured_data_schema`, as extraction reads it, and every top-level field it names. */
    structured: Type.Optional(Type.Object({ schema: ANY_OBJECT, fields: Type.Array(Type.String()) }, CLOSED)),
    /** The add's `Idempotency-Key`, which `requestId` owns: the job records its answer under it. */
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  CLOSED,
);

/** The input of one fact-inference request: the conversation, and whose memories (with their metadata) it adds to. */
export type InferPayload = Static<typeof INFER_PAYLOAD>;

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

/** Queues, one per kind of work, so slow work never starves quick work. */
export const QUEUE_NAMES = ['maintenance', 'embedding', 'extraction', 'documents', 'webhooks'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** A job as the catalogue declares it: `jobId` reads the payload its `schema` describes. */
const job = <S extends TSchema>(definition: { queue: QueueName; schema: S; jobId: (payload: Static<S>) => string }) => definition;

const DEFINITIONS = {
  /** Marks a pipeline probe done: proof that outbox → queue → worker works end to end. */
  'probe.touch': job({
    queue: 'maintenance',
    schema: Type.Object({ projectId: ID, probeId: ID }, CLOSED),
    jobId: (p) => `probe.touch-${p.probeId}`,
  }),
  /**
   * Makes a memory's vector match its row (embed and upsert, or remove when the row is gone); with
   * `more`, those of the other memories one write added, changed or deleted (a job per write, not per memory).
   */
  'memory.index': job({
    queue: 'embedding',
    schema: Type.Object(
      {
        projectId: ID,
        memoryId: ID,
        revision: REVISION,
        more: Type.Optional(Type.Array(Type.Object({ memoryId: ID, revision: REVISION }, CLOSED), { minItems: 1, maxItems: MAX_INDEX_GROUP - 1 })),
      },
      CLOSED,
    ),
    // one job per revision (of its first memory, which no other job starts with): a change after
    // the job ran (or while it runs) queues a new one
    jobId: (p) => `memory.index-${p.memoryId}-${p.revision}`,
  }),
  /** Deletes records past their schema's retention: of one project, or of all when projectId is omitted. */
  'retention.sweep': job({
    queue: 'maintenance',
    schema: Type.Object({ projectId: Type.Optional(ID) }, CLOSED),
    // one per scope and minute: the same sweep queued twice in a minute runs once
    jobId: (p) => `retention.sweep-${p.projectId ?? 'all'}-${Math.floor(Date.now() / 60_000)}`,
  }),
  /**
   * Extracts a typed record from text and stores it when complete. A request the API waits on,
   * so the text travels in the payload; the job is removed from Redis once it has answered.
   */
  'record.extract': job({
    queue: 'extraction',
    schema: EXTRACT_PAYLOAD,
    jobId: (p) => `record.extract-${p.requestId}`,
  }),
  /** Reads, chunks, embeds and indexes a document revision (or removes what is left of a deleted document). */
  'document.process': job({
    queue: 'documents',
    schema: Type.Object({ projectId: ID, documentId: ID, revision: REVISION }, CLOSED),
    jobId: (p) => `document.process-${p.documentId}-${p.revision}`,
  }),
  /** Removes the vectors of a deleted knowledge base, or of one deleted document. */
  'knowledge.purge': job({
    queue: 'maintenance',
    schema: Type.Object({ projectId: ID, embedModel: MODEL, kbId: Type.Optional(ID), documentId: Type.Optional(ID) }, CLOSED),
    jobId: (p) => `knowledge.purge-${p.kbId ?? ''}-${p.documentId ?? ''}`,
  }),
  /**
   * mem0 add with `infer: true` for a waiting request: picks the facts worth remembering out of a
   * conversation, decides what each does to the entity's memories, and writes that.
   */
  'memory.infer': job({
    queue: 'extraction',
    schema: INFER_PAYLOAD,
    jobId: (p) => `memory.infer-${p.requestId}`,
  }),
  /** Re-queues stuck indexing work and re-indexes rows whose vectors are missing (all projects). */
  'index.reconcile': job({
    queue: 'maintenance',
    // typed as the empty object it is (TypeBox would type `{}`, which takes any value)
    schema: Type.Unsafe<Record<string, never>>(Type.Object({}, CLOSED)),
    // one per minute: workers starting together run one start-up pass
    jobId: () => `index.reconcile-${Math.floor(Date.now() / 60_000)}`,
  }),
  /** Sends one recorded webhook delivery (a mem0 memory event) to its webhook, signed; retried while the receiver fails. */
  'webhook.deliver': job({
    // a queue of its own: a slow or failing receiver never holds up indexing or maintenance
    queue: 'webhooks',
    schema: Type.Object({ projectId: ID, deliveryId: ID }, CLOSED),
    jobId: (p) => `webhook.deliver-${p.deliveryId}`,
  }),
  /**
   * Re-embeds a project's memories into the model its setting names, then switches to it and
   * removes the old vectors; also removes the vectors of a re-embedding replaced or cancelled.
   * Works on whatever re-embedding the project has under way (`migrationId` only names the change
   * that queued it), one job per project at a time.
   */
  'memory.reembed': job({
    // beside the indexing jobs, whose embedder it shares (and paces itself by)
    queue: 'embedding',
    schema: Type.Object({ projectId: ID, migrationId: ID }, CLOSED),
    jobId: (p) => `memory.reembed-${p.migrationId}`,
  }),
  /** Fills a mem0 memory export's schema from the memories it names, with the project's extraction model; retried while the model is down. */
  'memory.export': job({
    // where the extraction models run; unlike that queue's requests, it is retried with backoff
    queue: 'extraction',
    schema: Type.Object({ projectId: ID, exportId: ID }, CLOSED),
    jobId: (p) => `memory.export-${p.exportId}`,
  }),
};

/** Every job's payload type, by job name: what its schema validates. */
export type JobPayloads = { [N in keyof typeof DEFINITIONS]: Static<(typeof DEFINITIONS)[N]['schema']> };

export type JobName = keyof JobPayloads;
export type JobOf<N extends JobName> = JobPayloads[N];

interface JobDefinition<N extends JobName> {
  queue: QueueName;
  /** The payload's JSON Schema, which a worker re-validates a job against before running it. */
  schema: TSchema;
  jobId: (payload: JobOf<N>) => string;
}

export const JOBS: { [N in JobName]: JobDefinition<N> } = DEFINITIONS;

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
