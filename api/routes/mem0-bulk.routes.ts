import type { BulkMemories } from '../../core/memory/bulk.js';
import { iso } from '../../lib/time.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { DELETE_MEMORIES_BATCH, ENTITY_PAGE, ENTITY_VIEW, MESSAGE, UPDATE_MEMORIES_BATCH } from '../schemas/mem0-bulk.js';

// mem0's entity list and delete and its batch update and delete, as mem0's clients call them
// (users(), delete_users(), batch_update(), batch_delete()).

const TAG = 'Memories (mem0 compatible)';
const invalid = { 400: { description: 'Invalid input', schema: ERROR_SCHEMA } };

/** mem0-compatible endpoints over many memories: entities and batch update and delete. */
export function mem0BulkRoutes({ bulk }: { bulk: BulkMemories }): RouteSpec[] {
  const entities = route({
    method: 'get',
    path: '/v1/entities',
    operationId: 'listEntities',
    summary:
      "The users, agents, apps and runs the project's memories belong to, each with its number of memories, the latest written first (mem0's users()). Every one unless page or page_size is given.",
    tag: TAG,
    auth: 'token',
    query: ENTITY_PAGE,
    responses: {
      200: {
        description: 'Entities',
        schema: {
          type: 'object',
          properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: ENTITY_VIEW } },
        },
      },
      ...invalid,
    },
    async handler(ctx) {
      const all = await bulk.entities(ctx.state.principal.projectId);
      const paged = ctx.state.query?.page !== undefined || ctx.state.query?.page_size !== undefined;
      const { page = 1, page_size = 100 } = ctx.state.query ?? {};
      const results = paged ? all.slice((page - 1) * page_size, page * page_size) : all;
      const link = (p: number) => `${ctx.protocol}://${ctx.host}${ctx.path}?page=${p}&page_size=${page_size}`;
      ctx.body = {
        count: all.length,
        next: paged && page * page_size < all.length ? link(page + 1) : null,
        previous: paged && page > 1 ? link(page - 1) : null,
        results: results.map((e) => ({ ...e, created_at: iso(e.created_at), updated_at: iso(e.updated_at) })),
      };
    },
  });

  const removeEntityAt = (path: string, operationId: string, summary: string) =>
    route({
      method: 'delete',
      path,
      operationId,
      summary,
      tag: TAG,
      auth: 'token',
      responses: {
        200: { description: 'Deleted', schema: MESSAGE },
        404: { description: 'An unknown type, or no memories of that entity in this project', schema: ERROR_SCHEMA },
      },
      async handler(ctx) {
        const deleted = await bulk.deleteEntity(ctx.state.principal.projectId, String(ctx.params.type), String(ctx.params.name));
        ctx.body = { message: `Entity deleted successfully! ${deleted} memories deleted.` };
      },
    });
  const removeEntity = removeEntityAt(
    '/v2/entities/:type/:name',
    'deleteEntity',
    "Delete an entity: every memory of that user, agent, app or run (type user, agent, app or run) and their vectors, each with its DELETE in the memory's history (mem0's delete_users()).",
  );
  const removeEntityV1 = removeEntityAt('/v1/entities/:type/:name', 'deleteEntityV1', "The same as DELETE /v2/entities/{type}/{name}, where mem0's JS client's deprecated deleteUser() sends it.");

  const updateMany = route({
    method: 'put',
    path: '/v1/batch',
    operationId: 'updateMemoriesBatch',
    summary:
      "Change the text and/or metadata of many memories in one transaction (mem0's batch_update), at most 1000. If any item is invalid (no such memory in this project, a typed record's text, a memory named twice), nothing changes and the 400 lists every problem by the item's index (/memories/3/memory_id). Indexed again in the background, as single updates are.",
    tag: TAG,
    auth: 'token',
    body: UPDATE_MEMORIES_BATCH,
    responses: { 200: { description: 'Updated', schema: MESSAGE }, ...invalid, 409: { description: 'A memory changed meanwhile; nothing was changed', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      const updated = await bulk.updateMany(ctx.state.principal.projectId, ctx.state.body.memories);
      ctx.body = { message: `Successfully updated ${updated} memories` };
    },
  });

  const deleteMany = route({
    method: 'delete',
    path: '/v1/batch',
    operationId: 'deleteMemoriesBatch',
    summary:
      "Delete many memories and their vectors in one transaction (mem0's batch_delete), at most 1000. If any item is invalid (no such memory in this project, a memory named twice), nothing is deleted and the 400 lists every problem by the item's index (/memories/3/memory_id).",
    tag: TAG,
    auth: 'token',
    body: DELETE_MEMORIES_BATCH,
    responses: { 200: { description: 'Deleted', schema: MESSAGE }, ...invalid, 409: { description: 'A memory was deleted meanwhile; nothing was deleted', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      const deleted = await bulk.deleteMany(
        ctx.state.principal.projectId,
        ctx.state.body.memories.map((m) => m.memory_id),
      );
      ctx.body = { message: `Successfully deleted ${deleted} memories` };
    },
  });

  return [entities, removeEntity, removeEntityV1, updateMany, deleteMany];
}
