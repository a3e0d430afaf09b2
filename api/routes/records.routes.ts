import type { ExtractOutcome, RecordExtraction } from '../../core/memory/record-extraction.js';
import type { RecordView, Records } from '../../core/memory/records.js';
import { withCategories } from '../../core/memory/categories.js';
import type { MemorySearch, MemorySearchResult } from '../../core/memory/search.js';
import type { MemoryEntityIndex } from '../../core/memory/entity-index.js';
import { iso } from '../../lib/time.js';
import { showValidity } from '../../core/memory/validity.js';
import { searchAnswer } from '../search-answer.js';
import { RERANK_REPORT } from '../schemas/knowledge.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { EXTRACT_RECORD, LIST_RECORDS, PATCH_RECORD, RECORD_VIEW, SEARCH_MEMORIES, SEARCH_RESULT, STORE_RECORD, STORE_RECORDS } from '../schemas/records.js';

const TAG = 'Typed memory';

const showRecord = (r: RecordView) => ({ ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });
const showResult = (r: MemorySearchResult) => ({ ...r, ...showValidity(r), created_at: iso(r.created_at), updated_at: iso(r.updated_at) });

const errors = {
  400: { description: 'Invalid input, or a record that fails its schema', schema: ERROR_SCHEMA },
  404: { description: 'No such schema or record in this project', schema: ERROR_SCHEMA },
};

/** `/v1/records/{schema}`: typed records; `/v3/memories/search/`: semantic search over memories. */
export function recordRoutes({
  records,
  memorySearch,
  extraction,
  entityIndex,
}: {
  records: Records;
  memorySearch: MemorySearch;
  extraction: RecordExtraction;
  entityIndex: MemoryEntityIndex;
}): RouteSpec[] {
  const store = route({
    method: 'post',
    path: '/v1/records/:schema',
    operationId: 'storeRecord',
    summary: "Store a typed record, validated against the schema's latest version and pinned to it; its embedding is derived in the background.",
    tag: TAG,
    auth: 'token',
    body: STORE_RECORD,
    responses: { 201: { description: 'The record (embedding_status pending)', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showRecord(await records.store(ctx.state.principal.projectId, String(ctx.params.schema), ctx.state.body));
    },
  });

  const storeMany = route({
    method: 'post',
    path: '/v1/records/:schema/batch',
    operationId: 'storeRecords',
    summary:
      "Store many records of a schema in one transaction (a bulk import): each item is the body of POST /v1/records/{schema}, checked as that checks it. If any is invalid, nothing is stored and the 400 lists every problem by the item's index (/records/3/record/email). Their embeddings are derived in the background.",
    tag: TAG,
    auth: 'token',
    body: STORE_RECORDS,
    responses: {
      201: { description: 'The records, in the order sent (embedding_status pending)', schema: { type: 'object', properties: { records: { type: 'array', items: RECORD_VIEW } } } },
      ...errors,
      413: { description: 'The body is larger than BODY_LIMIT_MB', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = { records: (await records.storeMany(ctx.state.principal.projectId, String(ctx.params.schema), ctx.state.body.records)).map(showRecord) };
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/records/:schema',
    operationId: 'listRecords',
    summary: 'List records of a schema, newest first, optionally for one user, agent, run or app.',
    tag: TAG,
    auth: 'token',
    query: LIST_RECORDS,
    responses: { 200: { description: 'Records', schema: { type: 'object', properties: { records: { type: 'array', items: RECORD_VIEW } } } }, ...errors },
    async handler(ctx) {
      const { limit, offset, ...entities } = ctx.state.query;
      const page = await records.list(ctx.state.principal.projectId, String(ctx.params.schema), entities, limit, offset);
      ctx.body = { records: page.map(showRecord) };
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/records/:schema/:id',
    operationId: 'getRecord',
    summary: 'Get a record.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The record', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.body = showRecord(await records.get(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id)));
    },
  });

  const patch = route({
    method: 'patch',
    path: '/v1/records/:schema/:id',
    operationId: 'patchRecord',
    summary:
      "Update a record's values with a JSON merge patch (RFC 7396: given fields replace, null removes). The result is validated against the version the record is pinned to, and its embedding is rewritten.",
    tag: TAG,
    auth: 'token',
    mergePatch: true,
    body: PATCH_RECORD,
    responses: { 200: { description: 'The updated record', schema: RECORD_VIEW }, ...errors },
    async handler(ctx) {
      ctx.body = showRecord(await records.patch(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id), ctx.state.body));
    },
  });

  const remove = route({
    method: 'delete',
    path: '/v1/records/:schema/:id',
    operationId: 'deleteRecord',
    summary: 'Delete a record; its vector goes with it.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors },
    async handler(ctx) {
      await records.delete(ctx.state.principal.projectId, String(ctx.params.schema), String(ctx.params.id));
      ctx.status = 204;
    },
  });

  const search = route({
    method: 'post',
    path: '/v3/memories/search',
    operationId: 'searchMemories',
    summary:
      "Search over memories and typed records. mode hybrid (the default) fuses dense (embedding) search, BM25 keyword search and, when the query names a day, month or year (and no as_of is given), the memories whose event time falls in it; dense and keyword rank by one side alone. filters must name an entity id (user_id, agent_id, run_id or app_id) and may add schema, created_at (the event time) and metadata conditions with AND/OR/NOT. categories keeps memories in any of the named categories. top_k and threshold (the least cosine similarity) bound the results, fields keeps only the named fields of each (id always). rerank reorders the best max(4 × top_k, 40) with the server's reranker (RERANK_MODEL) when it has one; the answer's rerank says whether its order was used (a reranker that fails or is late leaves the search's own). Results are the facts valid now: as_of (a time) finds what was true then, include_superseded adds the texts updates superseded (each after its successor) and the memories add decisions ended; each result carries valid_from, valid_to and superseded_by; entity keeps the memories that mention a named entity. keyword_search and latest_only are accepted for mem0's clients and not used.",
    tag: TAG,
    auth: 'token',
    body: SEARCH_MEMORIES,
    responses: {
      200: {
        description: 'Results, best first',
        schema: { type: 'object', properties: { results: { type: 'array', items: SEARCH_RESULT }, rerank: RERANK_REPORT } },
      },
      400: errors[400],
      503: { description: 'The vector store or the embedding model is unavailable', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      // keyword_search, latest_only and output_format are accepted and not used
      const { query, filters, top_k, threshold, mode, show_expired, fields, categories, rerank, as_of, include_superseded, entity } = ctx.state.body;
      const { projectId } = ctx.state.principal;
      const within = entity === undefined ? undefined : await entityIndex.mentioning(projectId, filters, entity);
      const input = { query, filters: withCategories(filters, categories), top_k, threshold, mode, show_expired, rerank, as_of, include_superseded, within };
      const found = await memorySearch.searchReported(projectId, input);
      const results = found.results.map(showResult);
      const shown = fields ? results.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k === 'id' || (fields as string[]).includes(k)))) : results;
      ctx.body = searchAnswer(ctx, shown, found.rerank);
    },
  });

  const extract = route({
    method: 'post',
    path: '/v1/records/:schema/extract',
    operationId: 'extractRecord',
    summary:
      'Extract a record from text or messages with a language model (only explicitly stated values). Stored (201, metered as memory.add) when it passes the schema; otherwise 200 with stored: false, the values found, and the required fields missing.',
    tag: TAG,
    auth: 'token',
    body: EXTRACT_RECORD,
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
      const outcome: ExtractOutcome = await extraction.request(ctx.state.principal.projectId, String(ctx.params.schema), ctx.state.body);
      ctx.status = outcome.stored ? 201 : 200;
      ctx.body = outcome.stored ? { stored: true, record: showRecord(outcome.record) } : outcome;
    },
  });

  return [store, storeMany, list, get, patch, remove, extract, search];
}
