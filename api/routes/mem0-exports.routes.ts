import type { MemoryExports } from '../../core/memory/exports.js';
import { ownProject } from '../own-project.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { CREATE_EXPORT, EXPORT_CREATED, EXPORT_VIEW, GET_EXPORT } from '../schemas/mem0-exports.js';

// mem0's memory exports: a JSON Schema filled from an entity's memories, created and then read back.

const TAG = 'Memories (mem0 compatible)';
const invalid = { 400: { description: 'Invalid input', schema: ERROR_SCHEMA } };

/** 404 unless the `org_id` and `project_id` a body names, if any, are the caller's project. */
function checkProjectIds(projectId: string, body: { org_id?: string; project_id?: string }): void {
  for (const named of [body.org_id, body.project_id]) if (named !== undefined) ownProject(projectId, named);
}

/** mem0's create_memory_export and get_memory_export. */
export function mem0ExportRoutes({ memoryExports }: { memoryExports: MemoryExports }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/exports',
    operationId: 'createMemoryExport',
    summary:
      "Export memories into a JSON Schema (mem0's create_memory_export): the memories that filters (and/or top-level user_id, agent_id, app_id, run_id) choose, as a memory list does, are read newest first and the schema's fields filled from them by MEMORY_MODEL, in the background. Answers the export's id at once; read the result with POST /v1/exports/get.",
    tag: TAG,
    auth: 'token',
    body: CREATE_EXPORT,
    responses: {
      201: { description: 'The export is queued', schema: EXPORT_CREATED },
      ...invalid,
      404: { description: 'org_id or project_id is not this project', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const { projectId } = ctx.state.principal;
      checkProjectIds(projectId, ctx.state.body);
      const id = await memoryExports.create(projectId, ctx.state.body);
      ctx.status = 201;
      ctx.body = { message: 'Memory export request received. The export will be ready in a few seconds.', id };
    },
  });

  const get = route({
    method: 'post',
    path: '/v1/exports/get',
    operationId: 'getMemoryExport',
    summary:
      "Read a memory export (mem0's get_memory_export): by memory_export_id, or the latest export of the entity that filters (or top-level ids) name. Once completed, the answer holds every top-level field of the schema (null when not found) beside memory_export, which holds the export's id, status (pending, running, completed, failed), memory_count, unsupported_fields and error; before that, memory_export alone.",
    tag: TAG,
    auth: 'token',
    body: GET_EXPORT,
    responses: {
      200: { description: 'The export', schema: EXPORT_VIEW },
      ...invalid,
      404: { description: 'No such export in this project (export_not_found), or org_id/project_id is not this project', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const { projectId } = ctx.state.principal;
      checkProjectIds(projectId, ctx.state.body);
      ctx.body = await memoryExports.get(projectId, ctx.state.body);
    },
  });

  return [create, get];
}
