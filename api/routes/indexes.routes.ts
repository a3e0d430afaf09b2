import { METADATA_KEY_PATTERN } from '../../contracts/filter/filter.js';
import {
  INDEX_LIMITS,
  INDEX_NAME,
  type ConfigureIndexInput,
  type CreateIndexInput,
  type DeleteVectorsInput,
  type IndexView,
  type QueryInput,
  type VectorInput,
} from '../../core/indexes.js';
import { METRICS } from '../../contracts/vector-store.js';
import { iso } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import { errorResponses, PAGING_QUERY, projectOf, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';

const TAG = 'Vector indexes';

const INDEX_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    dimension: { type: 'integer' },
    metric: { type: 'string', enum: [...METRICS] },
    embed_model: { type: ['string', 'null'], description: 'provider/model of a managed index; null for raw vectors.' },
    managed: { type: 'boolean', description: 'Whether text is embedded server-side.' },
    field_map: { type: ['object', 'null'], properties: { text: { type: 'string' } } },
    deletion_protection: { type: 'string', enum: ['enabled', 'disabled'] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const show = (v: IndexView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });

/** `deletion_protection` in requests. */
export const PROTECTION: JsonSchema = {
  enum: ['enabled', 'disabled', true, false],
  description: '"enabled" (or true) refuses DELETE of the index.',
};

/** Index tags in requests. */
export const TAGS: JsonSchema = {
  type: 'object',
  maxProperties: INDEX_LIMITS.maxTags,
  propertyNames: { minLength: 1, maxLength: 80 },
  additionalProperties: { type: 'string', maxLength: 120 },
  description: 'String labels. On PATCH they merge into the existing tags; a tag set to "" is removed.',
};

const VALUES: JsonSchema = { type: 'array', minItems: 1, maxItems: INDEX_LIMITS.maxDimension, items: { type: 'number' } };
const VECTOR_ID: JsonSchema = { type: 'string', minLength: 1, maxLength: INDEX_LIMITS.maxIdLength };
const IDS: JsonSchema = { type: 'array', minItems: 1, maxItems: INDEX_LIMITS.batch, items: VECTOR_ID };
const FILTER: JsonSchema = {
  type: 'object',
  description:
    'Metadata filter: {"genre": "drama"}, {"year": {"gte": 2020}}, {"AND": [...]}, {"OR": [...]}, {"NOT": {...}}; operators eq ne in gt gte lt lte contains (Pinecone $-spellings accepted).',
};
const METADATA: JsonSchema = {
  type: 'object',
  description: `Flat metadata: keys ${METADATA_KEY_PATTERN.source}, values strings, numbers, booleans or arrays of strings; at most ${INDEX_LIMITS.metadataBytes} bytes as JSON.`,
};

const NAME_PARAM = ':name';
const errors = (extra: Record<number, string> = {}) => errorResponses('No such index in this project', extra);

/** `/v1/indexes`: named vector indexes of the calling project, and their data plane. */
export function indexRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const indexes = runtime.indexes;
  const project = projectOf;

  const create: RouteSpec<CreateIndexInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/indexes',
    operationId: 'createIndex',
    summary: 'Create an index: raw (dimension + metric) or managed (embed: {model, field_map?} or embed_model), not both.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: INDEX_NAME, description: 'Lowercase letters, digits and hyphens; at most 45 characters.' },
        dimension: { type: 'integer', minimum: 1, maximum: INDEX_LIMITS.maxDimension },
        metric: { type: 'string', enum: [...METRICS], default: 'cosine' },
        embed: {
          type: 'object',
          additionalProperties: false,
          required: ['model'],
          properties: {
            model: { type: 'string', minLength: 1, maxLength: 128, description: 'provider/model, e.g. local, cohere/embed-v4.0.' },
            field_map: {
              type: 'object',
              additionalProperties: false,
              required: ['text'],
              properties: { text: { type: 'string', pattern: METADATA_KEY_PATTERN.source, description: 'The record field holding the text; default "text".' } },
            },
          },
        },
        embed_model: { type: 'string', minLength: 1, maxLength: 128 },
        deletion_protection: PROTECTION,
        tags: TAGS,
      },
    },
    responses: { 201: { description: 'The index', schema: INDEX_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await indexes.create(project(ctx), ctx.state.body));
    },
  };

  const list: RouteSpec<undefined, { limit?: number; offset?: number }> = {
    method: 'get',
    path: '/v1/indexes',
    operationId: 'listIndexes',
    summary: "List the project's indexes, newest first.",
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: { 200: { description: 'Indexes', schema: { type: 'object', properties: { indexes: { type: 'array', items: INDEX_VIEW } } } } },
    async handler(ctx) {
      const { limit = 50, offset = 0 } = ctx.state.query ?? {};
      ctx.body = { indexes: (await indexes.list(project(ctx), limit, offset)).map(show) };
    },
  };

  const get: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'getIndex',
    summary: 'Describe an index.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The index', schema: INDEX_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = show(await indexes.get(project(ctx), String(ctx.params.name)));
    },
  };

  const configure: RouteSpec<ConfigureIndexInput, Record<string, never>> = {
    method: 'patch',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'configureIndex',
    summary: 'Set deletion protection and merge tags. {} returns the index unchanged; any other field is rejected.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, properties: { deletion_protection: PROTECTION, tags: TAGS } },
    responses: { 200: { description: 'The index', schema: INDEX_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = show(await indexes.configure(project(ctx), String(ctx.params.name), ctx.state.body));
    },
  };

  const remove: RouteSpec<undefined, Record<string, never>> = {
    method: 'delete',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'deleteIndex',
    summary: 'Delete an index and all its vectors. Refused while deletion protection is enabled.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors({ 409: 'Deletion protection is enabled' }) },
    async handler(ctx) {
      await indexes.remove(project(ctx), String(ctx.params.name));
      ctx.status = 204;
    },
  };

  const upsert: RouteSpec<{ vectors: VectorInput[] }, Record<string, never>> = {
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/upsert`,
    operationId: 'upsertVectors',
    summary: `Insert or replace vectors by id (at most ${INDEX_LIMITS.batch} per call; values must match the index dimension).`,
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['vectors'],
      properties: {
        vectors: {
          type: 'array',
          minItems: 1,
          maxItems: INDEX_LIMITS.batch,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'values'],
            properties: { id: VECTOR_ID, values: VALUES, metadata: METADATA },
          },
        },
      },
    },
    responses: { 200: { description: 'Stored', schema: { type: 'object', properties: { upserted_count: { type: 'integer' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = await indexes.upsert(project(ctx), String(ctx.params.name), ctx.state.body.vectors);
    },
  };

  const upsertRecords: RouteSpec<{ records: Array<Record<string, unknown>> }, Record<string, never>> = {
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/records/upsert`,
    operationId: 'upsertRecords',
    summary:
      'Managed indexes: insert or replace records by id (`_id` or `id`); the field named by field_map.text is embedded server-side, the other fields are metadata.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['records'],
      properties: { records: { type: 'array', minItems: 1, maxItems: INDEX_LIMITS.batch, items: { type: 'object' } } },
    },
    responses: { 200: { description: 'Stored', schema: { type: 'object', properties: { upserted_count: { type: 'integer' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = await indexes.upsertRecords(project(ctx), String(ctx.params.name), ctx.state.body.records);
    },
  };

  const query: RouteSpec<QueryInput, Record<string, never>> = {
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/query`,
    operationId: 'queryIndex',
    summary: 'The top_k nearest vectors to a vector, a text (managed indexes) or a stored id, best first, optionally filtered by metadata.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        vector: VALUES,
        text: { type: 'string', minLength: 1, maxLength: 8192 },
        id: VECTOR_ID,
        top_k: { type: 'integer', minimum: 1, maximum: INDEX_LIMITS.maxTopK, default: 10 },
        filter: FILTER,
        include_values: { type: 'boolean', default: false },
        include_metadata: { type: 'boolean', default: false },
      },
    },
    responses: {
      200: {
        description: 'Matches, best first. Scores: cosine similarity and dot product (higher is closer), squared euclidean distance (lower is closer).',
        schema: {
          type: 'object',
          properties: {
            matches: {
              type: 'array',
              items: {
                type: 'object',
                properties: { id: { type: 'string' }, score: { type: 'number' }, values: { type: 'array', items: { type: 'number' } }, metadata: { type: 'object' } },
              },
            },
          },
        },
      },
      ...errors(),
    },
    async handler(ctx) {
      ctx.body = { matches: await indexes.query(project(ctx), String(ctx.params.name), ctx.state.body) };
    },
  };

  const fetch: RouteSpec<{ ids: string[] }, Record<string, never>> = {
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/fetch`,
    operationId: 'fetchVectors',
    summary: 'Stored vectors by id; ids that are not stored are left out.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['ids'], properties: { ids: IDS } },
    responses: {
      200: {
        description: 'Vectors by id',
        schema: { type: 'object', properties: { vectors: { type: 'object', additionalProperties: { type: 'object' } } } },
      },
      ...errors(),
    },
    async handler(ctx) {
      ctx.body = { vectors: await indexes.fetch(project(ctx), String(ctx.params.name), ctx.state.body.ids) };
    },
  };

  const deleteVectors: RouteSpec<DeleteVectorsInput, Record<string, never>> = {
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/delete`,
    operationId: 'deleteVectors',
    summary: 'Delete vectors by ids, by filter, or all of them (delete_all: true); exactly one of the three.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { ids: IDS, filter: FILTER, delete_all: { type: 'boolean' } },
    },
    responses: { 200: { description: 'Deleted', schema: { type: 'object' } }, ...errors() },
    async handler(ctx) {
      await indexes.deleteVectors(project(ctx), String(ctx.params.name), ctx.state.body);
      ctx.body = {};
    },
  };

  const stats: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: `/v1/indexes/${NAME_PARAM}/stats`,
    operationId: 'indexStats',
    summary: 'How many vectors the index holds, with its dimension and metric.',
    tag: TAG,
    auth: 'token',
    responses: {
      200: {
        description: 'Statistics',
        schema: {
          type: 'object',
          properties: { name: { type: 'string' }, dimension: { type: 'integer' }, metric: { type: 'string' }, vector_count: { type: 'integer' } },
        },
      },
      ...errors(),
    },
    async handler(ctx) {
      ctx.body = await indexes.stats(project(ctx), String(ctx.params.name));
    },
  };

  return [create, list, get, configure, remove, upsert, upsertRecords, query, fetch, deleteVectors, stats] as Array<RouteSpec<never, never>>;
}
