import type { ExtractOutcome, ExtractRequest } from '../../core/extract.js';
import type { RecordView, StoreRecordInput } from '../../core/memory/records.js';
import { ENTITY_IDS, type EntityIds } from '../../core/memory/rows.js';
import type { MemorySearchInput, MemorySearchResult } from '../../core/memory/search.js';
import { iso } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import { ERROR_SCHEMA, PAGING_QUERY, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';

const TAG = 'Typed memory';
const ENTITY: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
/** Entity ids as request fields (records, extraction, mem0 add). */
export const ENTITY_PROPS = Object.fromEntries(ENTITY_IDS.map((k) => [k, ENTITY]));

/** A conversation as request input (extraction, mem0 add). */
export const MESSAGES: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['role', 'content'],
    properties: { role: { type: 'string', enum: ['user', 'assistant', 'system'] }, content: { type: 'string', maxLength: 32_768 } },
  },
};

const RECORD_VIEW = {
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

const showRecord = (r: RecordView) => ({ ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });
const showResult = (r: MemorySearchResult) => ({ ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });

const errors = {
  400: { description: 'Invalid input, or a record that fails its schema', schema: ERROR_SCHEMA },
  404: { description: 'No such schema or record in this project', schema: ERROR_SCHEMA },
};

/** `/v1/records/{schema}`: typed records; `/v3/memories/search/`: semantic search over memories. */
export function recordRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const store: RouteSpec<StoreRecordInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/records/:schema',
    operationId: 'storeRecord',
    summary: "Store a typed record, validated against the schema's latest version and pinned to it; its embedding is derived in the background.",
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['record'],
      properties: { record: { type: 'object' }, ...ENTITY_PROPS, metadata: { type: 'object' } },
    },
    responses: { 201: { description: 'The record (embedding_status pending)', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showRecord(await runtime.records.store(ctx.state.principal.projectId, String(ctx.params.schema), ctx.state.body));
    },
  };

  const list: RouteSpec<undefined, EntityIds & { limit?: number; offset?: number }> = {
    method: 'get',
    path: '/v1/records/:schema',
    operationId: 'listRecords',
    summary: 'List records of a schema, newest first, optionally for one user, agent, run or app.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: { ...ENTITY_PROPS, ...PAGING_QUERY } },
    responses: { 200: { description: 'Records', schema: { type: 'object', properties: { records: { type: 'array', items: RECORD_VIEW } } } }, ...errors },
    async handler(ctx) {
      const { limit = 50, offset = 0, ...entities } = ctx.state.query ?? {};
      const records = await runtime.records.list(ctx.state.principal.projectId, String(ctx.params.schema), entities, limit, offset);
      ctx.body = { records: records.map(showRecord) };
    },
  };

  const get: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: '/v1/records/:schema/:id',
    operationId: 'getRecord',
    summary: 'Get a record.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The record', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.body = showRecord(await runtime.records.get(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id)));
    },
  };

  const patch: RouteSpec<Record<string, unknown>, Record<string, never>> = {
    method: 'patch',
    path: '/v1/records/:schema/:id',
    operationId: 'patchRecord',
    summary:
      "Update a record's values with a JSON merge patch (RFC 7396: given fields replace, null removes). The result is validated against the version the record is pinned to, and its embedding is rewritten.",
    tag: TAG,
    auth: 'token',
    mergePatch: true,
    body: { type: 'object', description: "A merge patch of the record's values (application/json or application/merge-patch+json)." },
    responses: { 200: { description: 'The updated record', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.body = showRecord(await runtime.records.patch(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id), ctx.state.body));
    },
  };

  const remove: RouteSpec<undefined, Record<string, never>> = {
    method: 'delete',
    path: '/v1/records/:schema/:id',
    operationId: 'deleteRecord',
    summary: 'Delete a record; its vector goes with it.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors },
    async handler(ctx) {
      await runtime.records.delete(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id));
      ctx.status = 204;
    },
  };

  const search: RouteSpec<MemorySearchInput, Record<string, never>> = {
    method: 'post',
    path: '/v3/memories/search',
    operationId: 'searchMemories',
    summary:
      'Search over memories and typed records. mode hybrid (the default) fuses dense (embedding) search, BM25 keyword search and, when the query names a day, month or year, the memories whose event time falls in it; dense and keyword rank by one side alone. filters must name an entity id (user_id, agent_id, run_id or app_id) and may add schema, created_at (the event time) and metadata conditions with AND/OR/NOT.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['query', 'filters'],
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 8192 },
        filters: { type: 'object', description: 'e.g. {"AND": [{"user_id": "alice"}, {"schema": "lead-profile"}]}' },
        top_k: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        threshold: { type: 'number', minimum: -1, maximum: 1, description: 'Leave out results whose cosine similarity to the query is below this, in every mode (score is the ranking score, which in hybrid mode is the fused one).' },
        mode: { type: 'string', enum: ['hybrid', 'dense', 'keyword'], default: 'hybrid', description: 'hybrid: dense + BM25 keyword (+ named time), fused by reciprocal rank; dense: embedding similarity alone; keyword: BM25 alone.' },
        output_format: { type: 'string', enum: ['v1.0', 'v1.1'], description: "Accepted for mem0's clients; the answer is always {results: [...]}." },
      },
    },
    responses: {
      200: {
        description: 'Results, best first',
        schema: {
          type: 'object',
          properties: {
            results: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  memory: { type: 'string' },
                  user_id: { type: ['string', 'null'] },
                  metadata: { type: 'object', description: 'Your metadata, plus schema, schema_version, record_id and record for typed records.' },
                  created_at: { type: 'string', format: 'date-time' },
                  score: { type: 'number' },
                },
              },
            },
          },
        },
      },
      400: errors[400],
      503: { description: 'The vector store or the embedding model is unavailable', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.body = { results: (await runtime.memorySearch.search(ctx.state.principal.projectId, ctx.state.body)).map(showResult) };
    },
  };

  const extract: RouteSpec<ExtractRequest, Record<string, never>> = {
    method: 'post',
    path: '/v1/records/:schema/extract',
    operationId: 'extractRecord',
    summary:
      'Extract a record from text or messages with a language model (only explicitly stated values). Stored (201, metered as memory.add) when it passes the schema; otherwise 200 with stored: false, the values found, and the required fields missing.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 65_536 },
        messages: MESSAGES,
        ...ENTITY_PROPS,
        metadata: { type: 'object' },
        model: { type: 'string', minLength: 1, maxLength: 128, description: 'provider/model: local (default), cohere/<model>, openai/<model>.' },
      },
    },
    responses: {
      201: { description: 'Stored', schema: { type: 'object', properties: { stored: { const: true }, record: RECORD_VIEW } } },
      200: {
        description: 'Nothing stored: record is null when nothing was found, else the values found; missing lists the required fields not stated',
        schema: { type: 'object', properties: { stored: { const: false }, record: { type: ['object', 'null'] }, missing: { type: 'array', items: { type: 'string' } } } },
      },
      ...errors,
      503: { description: 'The language model or the workers did not answer in time', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const outcome: ExtractOutcome = await runtime.extraction.request(ctx.state.principal.projectId, String(ctx.params.schema), ctx.state.body);
      ctx.status = outcome.stored ? 201 : 200;
      ctx.body = outcome.stored ? { stored: true, record: showRecord(outcome.record) } : outcome;
    },
  };

  return [store, list, get, patch, remove, extract, search] as Array<RouteSpec<never, never>>;
}
