import { INDEX_LIMITS, type Indexes, type IndexView } from '../../core/indexes.js';
import { iso } from '../../lib/time.js';
import { errorResponses, route, type RouteSpec } from '../route.js';
import { PAGING_QUERY } from '../schemas/common.js';
import {
  CONFIGURE_INDEX,
  CREATE_INDEX,
  DELETE_VECTORS,
  FETCH_VECTORS,
  INDEX_VIEW,
  QUERY_INDEX,
  UPSERT_RECORDS,
  UPSERT_VECTORS,
} from '../schemas/indexes.js';

const TAG = 'Vector indexes';

const show = (v: IndexView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });

const NAME_PARAM = ':name';
const errors = (extra: Record<number, string> = {}) => errorResponses('No such index in this project', extra);

/** `/v1/indexes`: named vector indexes of the calling project, and their data plane. */
export function indexRoutes({ indexes }: { indexes: Indexes }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/indexes',
    operationId: 'createIndex',
    summary: 'Create an index: raw (dimension + metric) or managed (embed: {model, field_map?} or embed_model), not both.',
    tag: TAG,
    auth: 'token',
    body: CREATE_INDEX,
    responses: { 201: { description: 'The index', schema: INDEX_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await indexes.create(ctx.state.principal.projectId, ctx.state.body));
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/indexes',
    operationId: 'listIndexes',
    summary: "List the project's indexes, newest first.",
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Indexes', schema: { type: 'object', properties: { indexes: { type: 'array', items: INDEX_VIEW } } } } },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { indexes: (await indexes.list(ctx.state.principal.projectId, limit, offset)).map(show) };
    },
  });

  const get = route({
    method: 'get',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'getIndex',
    summary: 'Describe an index.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The index', schema: INDEX_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = show(await indexes.get(ctx.state.principal.projectId, String(ctx.params.name)));
    },
  });

  const configure = route({
    method: 'patch',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'configureIndex',
    summary: 'Set deletion protection and merge tags. {} returns the index unchanged; any other field is rejected.',
    tag: TAG,
    auth: 'token',
    body: CONFIGURE_INDEX,
    responses: { 200: { description: 'The index', schema: INDEX_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = show(await indexes.configure(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const remove = route({
    method: 'delete',
    path: `/v1/indexes/${NAME_PARAM}`,
    operationId: 'deleteIndex',
    summary: 'Delete an index and all its vectors. Refused while deletion protection is enabled.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors({ 409: 'Deletion protection is enabled' }) },
    async handler(ctx) {
      await indexes.remove(ctx.state.principal.projectId, String(ctx.params.name));
      ctx.status = 204;
    },
  });

  const upsert = route({
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/upsert`,
    operationId: 'upsertVectors',
    summary: `Insert or replace vectors by id (at most ${INDEX_LIMITS.batch} per call; values must match the index dimension).`,
    tag: TAG,
    auth: 'token',
    body: UPSERT_VECTORS,
    responses: { 200: { description: 'Stored', schema: { type: 'object', properties: { upserted_count: { type: 'integer' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = await indexes.upsert(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body.vectors);
    },
  });

  const upsertRecords = route({
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/records/upsert`,
    operationId: 'upsertRecords',
    summary:
      'Managed indexes: insert or replace records by id (`_id` or `id`); the field named by field_map.text is embedded server-side, the other fields are metadata.',
    tag: TAG,
    auth: 'token',
    body: UPSERT_RECORDS,
    responses: { 200: { description: 'Stored', schema: { type: 'object', properties: { upserted_count: { type: 'integer' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = await indexes.upsertRecords(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body.records);
    },
  });

  const query = route({
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/query`,
    operationId: 'queryIndex',
    summary: 'The top_k nearest vectors to a vector, a text (managed indexes) or a stored id, best first, optionally filtered by metadata.',
    tag: TAG,
    auth: 'token',
    body: QUERY_INDEX,
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
      ctx.body = { matches: await indexes.query(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body) };
    },
  });

  const fetch = route({
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/fetch`,
    operationId: 'fetchVectors',
    summary: 'Stored vectors by id; ids that are not stored are left out.',
    tag: TAG,
    auth: 'token',
    body: FETCH_VECTORS,
    responses: {
      200: {
        description: 'Vectors by id',
        schema: { type: 'object', properties: { vectors: { type: 'object', additionalProperties: { type: 'object' } } } },
      },
      ...errors(),
    },
    async handler(ctx) {
      ctx.body = { vectors: await indexes.fetch(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body.ids) };
    },
  });

  const deleteVectors = route({
    method: 'post',
    path: `/v1/indexes/${NAME_PARAM}/vectors/delete`,
    operationId: 'deleteVectors',
    summary: 'Delete vectors by ids, by filter, or all of them (delete_all: true); exactly one of the three.',
    tag: TAG,
    auth: 'token',
    body: DELETE_VECTORS,
    responses: { 200: { description: 'Deleted', schema: { type: 'object' } }, ...errors() },
    async handler(ctx) {
      await indexes.deleteVectors(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body);
      ctx.body = {};
    },
  });

  const stats = route({
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
      ctx.body = await indexes.stats(ctx.state.principal.projectId, String(ctx.params.name));
    },
  });

  return [create, list, get, configure, remove, upsert, upsertRecords, query, fetch, deleteVectors, stats];
}
