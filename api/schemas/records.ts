import { Type, type TOptional, type TString } from '@sinclair/typebox';
import { ENTITY_IDS, MAX_BATCH } from '../../core/memory/rows.js';
import { AnyObject, PAGING, StringEnum } from './common.js';

/** Entity ids as request fields (records, extraction, mem0 add and delete). */
export const ENTITY_PROPS = Object.fromEntries(ENTITY_IDS.map((k) => [k, Type.Optional(Type.String({ minLength: 1, maxLength: 255 }))])) as Record<
  (typeof ENTITY_IDS)[number],
  TOptional<TString>
>;

/** mem0's `categories` read option (search, list): keep memories in any of these categories. */
export const CATEGORY_NAMES = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 50,
  description: 'Keep only memories given one of these categories (the same as filters {"categories": {"in": [...]}}).',
});

/** A conversation as request input (extraction, mem0 add). */
export const MESSAGES = Type.Array(
  Type.Object({ role: StringEnum(['user', 'assistant', 'system']), content: Type.String({ maxLength: 32_768 }) }, { additionalProperties: false }),
  { minItems: 1, maxItems: 100 },
);

/** `POST /v1/records/{schema}`. */
export const STORE_RECORD = Type.Object(
  { record: AnyObject(), ...ENTITY_PROPS, metadata: Type.Optional(AnyObject()) },
  { additionalProperties: false },
);

/** `POST /v1/records/{schema}/batch`: records each shaped as `POST /v1/records/{schema}`'s body. */
export const STORE_RECORDS = Type.Object(
  {
    records: Type.Array(STORE_RECORD, {
      minItems: 1,
      maxItems: MAX_BATCH,
      description: `At most ${MAX_BATCH}, each shaped as the body of POST /v1/records/{schema}. Stored in one transaction, or (any of them invalid) none.`,
    }),
  },
  { additionalProperties: false },
);

/** `GET /v1/records/{schema}`. */
export const LIST_RECORDS = Type.Object({ ...ENTITY_PROPS, ...PAGING }, { additionalProperties: false });

/** `PATCH /v1/records/{schema}/{id}`: a merge patch, checked against the record's schema after merging. */
export const PATCH_RECORD = AnyObject({ description: "A merge patch of the record's values (application/json or application/merge-patch+json)." });

/** `POST /v1/records/{schema}/extract`. */
export const EXTRACT_RECORD = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })),
    messages: Type.Optional(MESSAGES),
    ...ENTITY_PROPS,
    metadata: Type.Optional(AnyObject()),
    model: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'provider/model: local (default), cohere/<model>, openai/<model>.' }),
    ),
  },
  { additionalProperties: false },
);

/** The fields a memory-search result has, which `fields` may pick from. */
export const SEARCH_RESULT_FIELDS = ['id', 'memory', ...ENTITY_IDS, 'metadata', 'categories', 'expiration_date', 'valid_from', 'valid_to', 'superseded_by', 'created_at', 'updated_at', 'score'] as const;

/** mem0's `show_expired` (get_all and search). */
export const SHOW_EXPIRED = Type.Optional(Type.Boolean({ default: false, description: 'Also return memories past their expiration_date.' }));

/** Which memories a list or search reads: the facts valid now (the default), valid at a time, or every version; those mentioning an entity. */
export const READ_SCOPE = {
  as_of: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 253_402_300_799 }), Type.String({ format: 'date' }), Type.String({ format: 'iso-date-time' })], {
      description:
        'What was true at this time (unix seconds or ISO 8601, UTC when no zone is given): the memories valid then — created (event time) at or before it and not yet superseded or ended — instead of those valid now.',
    }),
  ),
  entity: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Only memories that mention this named entity (a person, place, organisation, product or date, as POST /v3/memories/entities lists them; case, a leading "the" and a possessive are ignored).',
    }),
  ),
  include_superseded: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Also the texts updates superseded and the memories decisions ended, each with its valid_from, valid_to and superseded_by; a superseded text comes after the memory that superseded it.',
    }),
  ),
};

/** `POST /v3/memories/search`. */
export const SEARCH_MEMORIES = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 8192 }),
    filters: AnyObject({ description: 'e.g. {"AND": [{"user_id": "alice"}, {"schema": "lead-profile"}]}' }),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    threshold: Type.Optional(
      Type.Number({
        minimum: -1,
        maximum: 1,
        description:
          'Leave out results whose cosine similarity to the query is below this, in every mode (score is the ranking score, which in hybrid mode is the fused one).',
      }),
    ),
    mode: Type.Optional(
      StringEnum(['hybrid', 'dense', 'keyword'], {
        default: 'hybrid',
        description: 'hybrid: dense + BM25 keyword (+ named time), fused by reciprocal rank; dense: embedding similarity alone; keyword: BM25 alone.',
      }),
    ),
    output_format: Type.Optional(StringEnum(['v1.0', 'v1.1'], { description: "Accepted for mem0's clients; the answer is always {results: [...]}." })),
    rerank: Type.Optional(
      Type.Boolean({
        description:
          "Reorder the best candidates with the server's reranker (RERANK_MODEL); without one, or when it fails or is late, the mode's order is kept and the answer's rerank says so.",
      }),
    ),
    categories: Type.Optional(CATEGORY_NAMES),
    keyword_search: Type.Optional(Type.Boolean({ description: "Accepted for mem0's clients: keyword search is part of the hybrid mode (the default); mode: keyword ranks by it alone." })),
    latest_only: Type.Optional(Type.Boolean({ description: "Accepted for mem0's clients: results are the facts valid now unless as_of or include_superseded ask for others." })),
    show_expired: SHOW_EXPIRED,
    ...READ_SCOPE,
    fields: Type.Optional(
      Type.Array(StringEnum(SEARCH_RESULT_FIELDS), {
        minItems: 1,
        uniqueItems: true,
        description: 'The fields each result keeps (mem0\'s option); id is always kept. Default: all of them.',
      }),
    ),
  },
  { additionalProperties: false },
);

// Responses

/** A memory's validity as views show it. */
export const VALIDITY_VIEW = {
  valid_from: { type: 'string', format: 'date-time', description: 'From when (event time) what it says holds: its created_at, or the time of the update that gave it this text' },
  valid_to: { type: ['string', 'null'], format: 'date-time', description: 'Until when it held (an update superseded it, or an add decided it no longer holds); null while it holds' },
  superseded_by: { type: ['string', 'null'], description: 'On a superseded text: the id of the memory that holds the newer one' },
} as const;

/** A typed record as the API shows it. */
export const RECORD_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    schema: { type: 'string' },
    schema_version: { type: 'integer', description: 'The schema version the record is pinned to.' },
    ...Object.fromEntries(ENTITY_IDS.map((k) => [k, { type: ['string', 'null'] }])),
    record: { type: 'object', description: 'The typed values.' },
    metadata: { type: 'object' },
    embedding_status: { type: 'string', enum: ['pending', 'indexed', 'failed'] },
    embedding_error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** One memory-search hit. */
export const SEARCH_RESULT = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    memory: { type: 'string' },
    user_id: { type: ['string', 'null'] },
    metadata: { type: 'object', description: 'Your metadata, plus schema, schema_version, record_id and record for typed records.' },
    categories: { type: 'array', items: { type: 'string' }, description: 'The categories the memory was given when it was indexed.' },
    expiration_date: { type: ['string', 'null'], format: 'date' },
    ...VALIDITY_VIEW,
    created_at: { type: 'string', format: 'date-time' },
    score: { type: 'number' },
  },
} as const;
