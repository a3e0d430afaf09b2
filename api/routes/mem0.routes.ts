import type { Context } from 'koa';
import { mem0AddAnswer, type MemoryInference } from '../../core/memory/inference.js';
import type { Idempotency, IdempotentAnswer } from '../../core/idempotency.js';
import type { HistoryView, Memories, MemoryView } from '../../core/memory/memories.js';
import { withCategories } from '../../core/memory/categories.js';
import { mem0Add, mem0Owner } from '../mem0/add-body.js';
import { queryFilters } from '../mem0/query-filters.js';
import { iso } from '../../lib/time.js';
import { eventTimeOf } from '../../core/memory/expiry.js';
import { showValidity } from '../../core/memory/validity.js';
import type { MemoryEntityIndex } from '../../core/memory/entity-index.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { IDEMPOTENCY_HEADERS } from '../schemas/common.js';
import {
  ADD_MEMORIES,
  ADD_MEMORIES_BATCH,
  DELETE_MEMORIES,
  DELETE_MEMORY,
  ENTITY_VIEW,
  HISTORY_ENTRY,
  INDEXING_STATUS,
  LIST_ENTITIES,
  LIST_MEMORIES,
  MEMORY_PAGE,
  MEMORY_STATUS_QUERY,
  MEMORY_VIEW,
  UPDATE_MEMORY,
} from '../schemas/mem0.js';

// mem0 platform v3 wire compatibility, as mem0's official clients call it (paths end in "/",
// which Cairn accepts everywhere; every answer is a JSON body, deletes included).

const TAG = 'Memories (mem0 compatible)';

const show = (m: MemoryView) => ({ ...m, ...showValidity(m), created_at: iso(m.created_at), updated_at: iso(m.updated_at) });
const showHistory = (h: HistoryView) => ({ ...h, created_at: iso(h.created_at), updated_at: iso(h.updated_at) });
const notFound = { 404: { description: 'No such memory in this project', schema: ERROR_SCHEMA } };
const invalid = { 400: { description: 'Invalid input', schema: ERROR_SCHEMA } };
const idempotent = {
  422: { description: 'The Idempotency-Key was sent before with another body (code idempotency_key_mismatch)', schema: ERROR_SCHEMA },
  503: {
    description:
      'The work did not finish in time, or the first request with this Idempotency-Key is still running (code idempotency_key_in_progress): retry (with the same key, which answers what the work stored)',
    schema: ERROR_SCHEMA,
  },
};

/** Answers what an idempotent write answered (again, when `replayed`). */
function reply(ctx: Context, answer: IdempotentAnswer & { replayed: boolean }): void {
  if (answer.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.status = answer.status;
  ctx.body = answer.body;
}

/** mem0-compatible memory endpoints over Cairn's memories (free-form and typed). */
export function mem0Routes({
  memories,
  entityIndex,
  inference,
  idempotency,
  memoryModel,
}: {
  memories: Memories;
  entityIndex: MemoryEntityIndex;
  inference: MemoryInference;
  idempotency: Idempotency;
  memoryModel: string;
}): RouteSpec[] {
  const add = route({
    method: 'post',
    path: '/v3/memories/add',
    operationId: 'addMemories',
    summary:
      "Add memories from messages. infer: false stores each message as given (every one an ADD); otherwise (mem0's default) the language model (MEMORY_MODEL) picks out the facts the user stated and compares each with the entity's most similar memories: ADD stores a new fact, UPDATE rewrites the memory it supersedes (previous_memory holds the old text), DELETE removes the memory it retracts, NOOP leaves the memory that already holds it. local decides by rules, cohere/… and openai/… models decide themselves; if that step fails the facts are added. The owner may be given at the top level or, as mem0's v3 clients send it, under filters; timestamp sets the event time; custom_categories is the catalogue the memories are categorized by when indexed (default mem0's 15); custom_instructions (and agent_custom_instructions for an agent's memories) go to the model picking the facts; structured_data_schema names values extracted from the messages onto each memory stored (structured_data); expiration_date (YYYY-MM-DD, UTC) is set on every memory the add writes or updates. Every change is in /v1/memories/{id}/history/. Indexed in the background.",
    tag: TAG,
    auth: 'token',
    body: ADD_MEMORIES,
    headers: IDEMPOTENCY_HEADERS,
    responses: {
      200: {
        description: 'The memories the add touched, in the order of the facts; a DELETE shows the memory as it was',
        schema: {
          type: 'object',
          properties: {
            results: {
              type: 'array',
              items: {
                ...MEMORY_VIEW,
                properties: {
                  ...MEMORY_VIEW.properties,
                  event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NOOP'] },
                  previous_memory: { type: 'string', description: "UPDATE only: the memory's text before" },
                },
              },
            },
          },
        },
      },
      ...invalid,
      ...idempotent,
    },
    async handler(ctx) {
      const { projectId } = ctx.state.principal;
      // read before the key is claimed: a body refused here is a 400 that leaves the key unused
      const input = mem0Add(ctx.state.body);
      const answer = await idempotency.run(projectId, ctx.state.headers['Idempotency-Key'], 'addMemories', ctx.state.body, async (claim) => ({
        status: 200,
        body: mem0AddAnswer(await inference.addMemories(projectId, input, memoryModel, claim)),
      }));
      reply(ctx, answer);
    },
  });

  const addMany = route({
    method: 'post',
    path: '/v1/batch',
    operationId: 'addMemoriesBatch',
    summary:
      "Add many memories in one transaction (a history import), as mem0's PUT and DELETE /v1/batch/ change and delete many: each item is the body of POST /v3/memories/add with infer false, its messages stored as given (each an ADD), at most 1000 messages in all. If any item is invalid, nothing is stored and the 400 lists every problem by the item's index (/memories/3/messages/0/content). Indexed in the background.",
    tag: TAG,
    auth: 'token',
    body: ADD_MEMORIES_BATCH,
    headers: IDEMPOTENCY_HEADERS,
    responses: {
      201: {
        description: "The memories stored, item by item in the order sent, each message's in order",
        schema: { type: 'object', properties: { results: { type: 'array', items: { ...MEMORY_VIEW, properties: { ...MEMORY_VIEW.properties, event: { const: 'ADD' } } } } } },
      },
      ...invalid,
      413: { description: 'The body is larger than BODY_LIMIT_MB', schema: ERROR_SCHEMA },
      ...idempotent,
    },
    async handler(ctx) {
      const { projectId } = ctx.state.principal;
      const answer = await idempotency.run(projectId, ctx.state.headers['Idempotency-Key'], 'addMemoriesBatch', ctx.state.body, async () => ({
        status: 201,
        body: { results: (await memories.addMany(projectId, ctx.state.body.memories)).map((m) => ({ ...show(m), event: 'ADD' })) },
      }));
      reply(ctx, answer);
    },
  });

  const list = route({
    method: 'post',
    path: '/v3/memories',
    operationId: 'listMemories',
    summary:
      'List memories matching filters (which must name an entity id), newest first, paged. Memories past their expiration_date are left out unless show_expired is true; the facts valid now are listed, or those valid at as_of, or (include_superseded) every version; entity keeps those that mention a named entity; start_date and end_date bound created_at (a date: its whole UTC day); embedding_status keeps the memories in one indexing state.',
    tag: TAG,
    auth: 'token',
    body: LIST_MEMORIES,
    query: MEMORY_PAGE,
    responses: {
      200: {
        description: 'A page of memories',
        schema: {
          type: 'object',
          properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: MEMORY_VIEW } },
        },
      },
      ...invalid,
    },
    async handler(ctx) {
      const { page, page_size } = ctx.state.query;
      const { filters, categories, show_expired, start_date, end_date, embedding_status, as_of, include_superseded, entity } = ctx.state.body;
      const { projectId } = ctx.state.principal;
      const within = entity === undefined ? undefined : await entityIndex.mentioning(projectId, filters, entity);
      const { count, results } = await memories.list(projectId, withCategories(filters, categories), page, page_size, {
        within,
        showExpired: show_expired,
        startDate: start_date,
        endDate: end_date,
        embeddingStatus: embedding_status,
        validity: { asOf: as_of === undefined ? undefined : eventTimeOf(as_of), includeSuperseded: include_superseded },
      });
      // Absolute links on the origin the client called, as mem0's client follows them (Koa's
      // ctx.origin is the Origin request header, absent on most API calls).
      const link = (p: number) => `${ctx.protocol}://${ctx.host}${ctx.path}?page=${p}&page_size=${page_size}`;
      ctx.body = {
        count,
        next: page * page_size < count ? link(page + 1) : null,
        previous: page > 1 ? link(page - 1) : null,
        results: results.map(show),
      };
    },
  });

  const status = route({
    method: 'get',
    path: '/v3/memories/status',
    operationId: 'memoryIndexingStatus',
    summary:
      "How many memories of a user, agent, run or app (query parameters, combined; none: the whole project) are pending (stored, not searchable yet), indexed (searchable) or failed, and in all. Every row is counted, the versions updates superseded included, since they are indexed too. An add or a /v1/batch import answers before its memories are indexed: poll this (it is cheap, every second is fine) until pending is 0 to know the import is searchable.",
    tag: TAG,
    auth: 'token',
    query: MEMORY_STATUS_QUERY,
    responses: { 200: { description: 'The counts', schema: INDEXING_STATUS }, ...invalid },
    async handler(ctx) {
      ctx.body = await memories.indexingStatus(ctx.state.principal.projectId, ctx.state.query ?? {});
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/memories/:id',
    operationId: 'getMemory',
    summary: 'Get a memory (an expired one too).',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The memory', schema: MEMORY_VIEW }, ...notFound },
    async handler(ctx) {
      ctx.body = show(await memories.get(ctx.state.principal.projectId, String(ctx.params.id)));
    },
  });

  const update = route({
    method: 'put',
    path: '/v1/memories/:id',
    operationId: 'updateMemory',
    summary:
      "Change a memory's text, metadata, event time (timestamp: unix seconds or ISO 8601, its created_at) and/or expiration_date (null clears it); each change is a new revision, in its history, indexed again. A typed record's values change through PATCH /v1/records.",
    tag: TAG,
    auth: 'token',
    body: UPDATE_MEMORY,
    responses: { 200: { description: 'The updated memory', schema: MEMORY_VIEW }, ...invalid, ...notFound },
    async handler(ctx) {
      ctx.body = show(await memories.update(ctx.state.principal.projectId, String(ctx.params.id), ctx.state.body));
    },
  });

  const history = route({
    method: 'get',
    path: '/v1/memories/:id/history',
    operationId: 'memoryHistory',
    summary: "A memory's changes, oldest first (ADD, UPDATE, DELETE).",
    tag: TAG,
    auth: 'token',
    responses: {
      200: {
        description: 'History',
        schema: { type: 'array', items: HISTORY_ENTRY },
      },
      ...notFound,
    },
    async handler(ctx) {
      ctx.body = (await memories.history(ctx.state.principal.projectId, String(ctx.params.id))).map(showHistory);
    },
  });

  const entities = route({
    method: 'post',
    path: '/v3/memories/entities',
    operationId: 'listMemoryEntities',
    summary:
      "The named entities (people, places, organisations, products, dates) the memories valid now of one owner mention, the most mentioned first: each with its kind, how many memories mention it, and the first and last event times. Read from each memory's text when it is indexed, without a language model. filters names the owner ({\"user_id\": \"alice\"}); kind keeps one kind; the memories mentioning one are listed or searched with entity.",
    tag: TAG,
    auth: 'token',
    body: LIST_ENTITIES,
    responses: { 200: { description: 'Entities, the most mentioned first', schema: { type: 'object', properties: { results: { type: 'array', items: ENTITY_VIEW } } } }, ...invalid },
    async handler(ctx) {
      const { filters, kind, limit } = ctx.state.body;
      const found = await entityIndex.list(ctx.state.principal.projectId, filters, { kind, limit });
      ctx.body = { results: found.map((e) => ({ ...e, first_seen: iso(e.first_seen), last_seen: iso(e.last_seen) })) };
    },
  });

  const versions = route({
    method: 'get',
    path: '/v1/memories/:id/versions',
    operationId: 'memoryVersions',
    summary:
      "A memory's chain of versions, the current text first, then each text an update superseded, the latest first, with the time each held (valid_from, valid_to; superseded_by names the memory). The id of any version gives its memory's chain.",
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The versions', schema: { type: 'array', items: MEMORY_VIEW } }, ...notFound },
    async handler(ctx) {
      ctx.body = (await memories.versions(ctx.state.principal.projectId, String(ctx.params.id))).map(show);
    },
  });

  const remove = route({
    method: 'delete',
    path: '/v1/memories/:id',
    operationId: 'deleteMemory',
    summary:
      'Delete a memory (a typed record included) and its vector, with the texts its updates superseded (its versions). delete_linked is accepted; the versions always go with the memory.',
    tag: TAG,
    auth: 'token',
    query: DELETE_MEMORY,
    responses: { 200: { description: 'Deleted', schema: { type: 'object', properties: { message: { type: 'string' } } } }, ...notFound },
    async handler(ctx) {
      await memories.delete(ctx.state.principal.projectId, String(ctx.params.id));
      ctx.body = { message: 'Memory deleted successfully!' };
    },
  });

  const removeAll = route({
    method: 'delete',
    path: '/v1/memories',
    operationId: 'deleteMemories',
    summary:
      "Delete every memory of one user, agent, run or app (at least one must be given), as query parameters or under filters (mem0's delete_all(filters=...)).",
    tag: TAG,
    auth: 'token',
    query: DELETE_MEMORIES,
    responses: { 200: { description: 'Deleted', schema: { type: 'object', properties: { message: { type: 'string' } } } }, ...invalid },
    async handler(ctx) {
      const { filters, ...top } = ctx.state.query ?? {};
      const deleted = await memories.deleteAll(ctx.state.principal.projectId, mem0Owner(top, filters === undefined ? {} : queryFilters(filters)));
      ctx.body = { message: `${deleted} memories deleted successfully!` };
    },
  });

  return [add, addMany, list, entities, status, get, update, history, versions, remove, removeAll];
}
