import { Type } from '@sinclair/typebox';
import { MAX_CATEGORIES } from '../../contracts/memory-categories.js';
import { ENTITY_IDS, MAX_BATCH } from '../../core/memory/rows.js';
import { MAX_ENTITY_LIST } from '../../core/memory/entity-index.js';
import { AnyObject, QueryDefault, StringEnum } from './common.js';
import { CATEGORY_NAMES, ENTITY_PROPS, MESSAGES, SHOW_EXPIRED, READ_SCOPE, VALIDITY_VIEW } from './records.js';

/** The last page a list reaches: its offset stays well within what every database binds. */
const MAX_PAGE = 1_000_000;

/** What every mem0 add gives beside `infer`: the messages, their owner, metadata and event time. */
const ADD_FIELDS = {
  messages: MESSAGES,
  ...ENTITY_PROPS,
  metadata: Type.Optional(AnyObject()),
  timestamp: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 253_402_300_799,
      description:
        "When what the messages say happened, in unix seconds (mem0's field): the memories' created_at, which search filters and time signals use. Default now.",
    }),
  ),
};

/** mem0's `expiration_date`: a calendar date, or null for none. */
const EXPIRATION_DATE = Type.Optional(
  Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description:
      'The last day (YYYY-MM-DD, UTC) the memories are shown: from the next day lists and search leave them out unless show_expired is true; get by id still returns them. null or absent: never. Deleted after MEMORY_EXPIRY_GRACE_DAYS more days.',
  }),
);

/** The rest of mem0's add options (its clients' `AddMemoryOptions`). */
const ADD_OPTIONS = {
  infer: Type.Optional(Type.Boolean({ default: true })),
  filters: Type.Optional(
    Type.Object(ENTITY_PROPS, {
      additionalProperties: false,
      description: "Whom the memories belong to, as mem0's v3 clients send it ({\"user_id\": \"alice\"}): the same as the top-level ids, which it may repeat but not contradict.",
    }),
  ),
  custom_categories: Type.Optional(
    Type.Array(Type.Union([AnyObject(), Type.String()]), {
      maxItems: MAX_CATEGORIES,
      description:
        "The catalogue the memories of this add are categorized by, instead of mem0's default 15: [{\"name\": \"what it covers\"}, …] (or names alone). Each memory is given the categories closest to it in meaning when it is indexed.",
    }),
  ),
  custom_instructions: Type.Optional(
    Type.String({
      maxLength: 8192,
      description: 'With infer: what the language model should remember or leave out (cohere/… and openai/… models read it; the local rules do not).',
    }),
  ),
  agent_custom_instructions: Type.Optional(
    Type.String({ maxLength: 8192, description: 'Like custom_instructions, for adds that name an agent_id (both are given when both are sent).' }),
  ),
  expiration_date: EXPIRATION_DATE,
  structured_data_schema: Type.Optional(
    AnyObject({
      description:
        "A JSON Schema (a Pydantic model's) of values to extract from the messages with MEMORY_MODEL; each memory the add stores carries them as structured_data (every top-level field, null when not stated). String, enum, number, integer, boolean and list-of-strings fields are filled; nested objects are null.",
    }),
  ),
};

/** `POST /v3/memories/add`. */
export const ADD_MEMORIES = Type.Object({ ...ADD_FIELDS, ...ADD_OPTIONS }, { additionalProperties: false });

/** `POST /v1/batch`: adds each shaped as `POST /v3/memories/add`'s body, with infer false (the messages stored as given). */
export const ADD_MEMORIES_BATCH = Type.Object(
  {
    memories: Type.Array(
      Type.Object(
        { ...ADD_FIELDS, infer: Type.Optional(Type.Literal(false, { description: 'A batch stores the messages as given; infer: true is refused.' })) },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: MAX_BATCH,
        description: `Each shaped as the body of POST /v3/memories/add with infer false; at most ${MAX_BATCH} messages in all. Stored in one transaction, or (any of them invalid) none.`,
      },
    ),
  },
  { additionalProperties: false },
);

/** mem0's get_all `start_date` / `end_date`: a date (a whole UTC day) or a date-time. */
const LIST_BOUND = (description: string) => Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'iso-date-time' })], { description }));

/** `POST /v3/memories`: the filters of a list and mem0's get_all options. */
export const LIST_MEMORIES = Type.Object(
  {
    filters: AnyObject(),
    show_expired: SHOW_EXPIRED,
    ...READ_SCOPE,
    categories: Type.Optional(CATEGORY_NAMES),
    start_date: LIST_BOUND('Only memories whose created_at (event time) is at or after this (a date: its start, UTC).'),
    end_date: LIST_BOUND('Only memories whose created_at (event time) is at or before this (a date: through its end, UTC).'),
    embedding_status: Type.Optional(
      StringEnum(['pending', 'indexed', 'failed'], { description: 'Only memories in this indexing state (pending until searchable, indexed, or failed).' }),
    ),
  },
  { additionalProperties: false },
);

/** `POST /v3/memories/entities`: whose entities, and which. */
export const LIST_ENTITIES = Type.Object(
  {
    filters: AnyObject({ description: 'The owner: at least one of user_id, agent_id, run_id, app_id, e.g. {"user_id": "alice"}.' }),
    kind: Type.Optional(StringEnum(['person', 'place', 'organization', 'product', 'date'])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ENTITY_LIST, default: 100 })),
  },
  { additionalProperties: false },
);

/** One entity of an entity listing. */
export const ENTITY_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'As a memory wrote it' },
    key: { type: 'string', description: 'What mentions share: lower case, no leading "the", no possessive' },
    kind: { type: 'string', enum: ['person', 'place', 'organization', 'product', 'date'] },
    count: { type: 'integer', description: 'How many memories mention it' },
    first_seen: { type: 'string', format: 'date-time', description: 'The earliest event time of a memory mentioning it' },
    last_seen: { type: 'string', format: 'date-time', description: 'The latest event time of a memory mentioning it' },
  },
} as const;

/** `POST /v3/memories`: its page. */
export const MEMORY_PAGE = Type.Object(
  {
    page: QueryDefault(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    page_size: QueryDefault(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

/** `PUT /v1/memories/{id}`: what mem0's clients' update sends. */
export const UPDATE_MEMORY = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 32_768 })),
    metadata: Type.Optional(AnyObject()),
    timestamp: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 253_402_300_799 }), Type.String({ format: 'date' }), Type.String({ format: 'iso-date-time' })], {
        description: "When what the memory says happened: unix seconds or ISO 8601 (UTC when no zone is given). Sets its created_at, which search filters and time signals use.",
      }),
    ),
    expiration_date: EXPIRATION_DATE,
  },
  { additionalProperties: false, minProperties: 1 },
);

/** `DELETE /v1/memories/{id}`: mem0's `delete_linked`. */
export const DELETE_MEMORY = Type.Object(
  {
    delete_linked: Type.Optional(
      Type.Boolean({ description: 'Accepted: a memory is always deleted with the texts its updates superseded (GET /v1/memories/{id}/versions).' }),
    ),
  },
  { additionalProperties: false },
);

/** `DELETE /v1/memories`: whose memories, as query parameters or (mem0's delete_all) under `filters`. */
export const DELETE_MEMORIES = Type.Object(
  {
    ...ENTITY_PROPS,
    filters: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          "The entity ids as an object, as mem0's Python client's delete_all(filters=...) sends it (the dict's Python form, {'user_id': 'alice'}) or as JSON; joined with the top-level ids, which may repeat them but not contradict them.",
      }),
    ),
  },
  { additionalProperties: false },
);

/** `GET /v3/memories/status`: whose memories to count; none, the whole project. */
export const MEMORY_STATUS_QUERY = Type.Object(ENTITY_PROPS, { additionalProperties: false });

// Responses

/** A memory as mem0's endpoints show it. */
export const MEMORY_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    memory: { type: 'string' },
    ...Object.fromEntries(ENTITY_IDS.map((k) => [k, { type: ['string', 'null'] }])),
    metadata: { type: 'object' },
    categories: { type: 'array', items: { type: 'string' } },
    embedding_status: { type: 'string', enum: ['pending', 'indexed', 'failed'], description: 'pending until searchable; failed only for input that can never be indexed' },
    embedding_error: { type: ['string', 'null'], description: 'Why the memory is failed, or still pending after an error (retried until it passes)' },
    feedback: { type: ['string', 'null'], enum: ['POSITIVE', 'NEGATIVE', 'VERY_NEGATIVE', null], description: 'The feedback given with POST /v1/feedback, null when none' },
    feedback_reason: { type: ['string', 'null'] },
    structured_data: { type: ['object', 'null'], description: "The values the add's structured_data_schema asked for (each null when not stated); null when it named none" },
    expiration_date: { type: ['string', 'null'], format: 'date', description: 'The last day (UTC) lists and search show the memory; null: never expires' },
    ...VALIDITY_VIEW,
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** One change in a memory's history. */
export const HISTORY_ENTRY = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    memory_id: { type: 'string' },
    old_memory: { type: ['string', 'null'] },
    new_memory: { type: ['string', 'null'] },
    event: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** How many memories are in each indexing state. */
export const INDEXING_STATUS = {
  type: 'object',
  required: ['total', 'pending', 'indexed', 'failed'],
  properties: {
    total: { type: 'integer', description: 'Every memory row the filter names, the versions updates superseded included' },
    pending: { type: 'integer', description: 'Stored, not searchable yet: waiting to be embedded (or retried after an error)' },
    indexed: { type: 'integer', description: 'Embedded and searchable' },
    failed: { type: 'integer', description: 'Input that can never be indexed (the reason is each memory\'s embedding_error)' },
  },
} as const;
