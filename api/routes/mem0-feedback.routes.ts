import type { Memories } from '../../core/memory/memories.js';
import { notFound } from '../../lib/errors.js';
import { AnyObject } from '../schemas/common.js';
import { FEEDBACK_VIEW, MEMORY_FEEDBACK_BODY, MEMORY_SUMMARY_BODY, SUMMARY_VIEW } from '../schemas/mem0-feedback.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';

// mem0 platform feedback and summary, and the platform's organisation and project management,
// which Cairn answers with a 404 that says so.

const TAG = 'Memories (mem0 compatible)';
const invalid = { 400: { description: 'Invalid input', schema: ERROR_SCHEMA } };

/** mem0's feedback on a memory and summary of an entity's memories. */
export function mem0FeedbackRoutes({ memories }: { memories: Memories }): RouteSpec[] {
  const feedback = route({
    method: 'post',
    path: '/v1/feedback',
    operationId: 'memoryFeedback',
    summary:
      "Give feedback on a memory (mem0's feedback): POSITIVE, NEGATIVE or VERY_NEGATIVE with an optional reason; each call replaces the memory's feedback, and null (or leaving a field out) withdraws it. Shown on the memory (feedback, feedback_reason); a VERY_NEGATIVE memory is left out of summaries. The memory itself does not change.",
    tag: TAG,
    auth: 'token',
    body: MEMORY_FEEDBACK_BODY,
    responses: { 200: { description: 'The feedback the memory now carries', schema: FEEDBACK_VIEW }, ...invalid, 404: { description: 'No such memory in this project', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      const { memory_id, feedback = null, feedback_reason = null } = ctx.state.body;
      const memory = await memories.feedback(ctx.state.principal.projectId, memory_id, feedback, feedback_reason);
      ctx.body = { message: 'Feedback recorded.', id: memory.id, feedback: memory.feedback, feedback_reason: memory.feedback_reason };
    },
  });

  const summary = route({
    method: 'post',
    path: '/v1/summary',
    operationId: 'memorySummary',
    summary:
      "Summarise an entity's memories (mem0's get_summary): filters as a memory list takes them (naming user_id, agent_id, app_id or run_id). Deterministic, no language model: each memory's statement once, newest first, at most 50 statements and 4000 characters, then how many more; memories with VERY_NEGATIVE feedback are left out. No memories: an empty summary.",
    tag: TAG,
    auth: 'token',
    body: MEMORY_SUMMARY_BODY,
    responses: { 200: { description: 'The summary', schema: SUMMARY_VIEW }, ...invalid },
    async handler(ctx) {
      ctx.body = await memories.summary(ctx.state.principal.projectId, ctx.state.body.filters);
    },
  });

  return [feedback, summary, ...platformManagementRoutes()];
}

/** mem0's organisation and project management paths (its clients' Project and get/update_project). */
const PLATFORM_PATHS: ReadonlyArray<readonly [RouteSpec['method'], string, string]> = [
  ['get', '/api/v1/orgs/organizations', 'listOrganizations'],
  ['post', '/api/v1/orgs/organizations', 'createOrganization'],
  ['get', '/api/v1/orgs/organizations/:org_id', 'getOrganization'],
  ['delete', '/api/v1/orgs/organizations/:org_id', 'deleteOrganization'],
  ['get', '/api/v1/orgs/organizations/:org_id/members', 'listOrganizationMembers'],
  ['post', '/api/v1/orgs/organizations/:org_id/members', 'addOrganizationMember'],
  ['put', '/api/v1/orgs/organizations/:org_id/members', 'updateOrganizationMember'],
  ['delete', '/api/v1/orgs/organizations/:org_id/members', 'removeOrganizationMember'],
  ['get', '/api/v1/orgs/organizations/:org_id/projects', 'listPlatformProjects'],
  ['post', '/api/v1/orgs/organizations/:org_id/projects', 'createPlatformProject'],
  ['get', '/api/v1/orgs/organizations/:org_id/projects/:project_id', 'getPlatformProject'],
  ['patch', '/api/v1/orgs/organizations/:org_id/projects/:project_id', 'updatePlatformProject'],
  ['delete', '/api/v1/orgs/organizations/:org_id/projects/:project_id', 'deletePlatformProject'],
  ['get', '/api/v1/orgs/organizations/:org_id/projects/:project_id/members', 'listPlatformProjectMembers'],
  ['post', '/api/v1/orgs/organizations/:org_id/projects/:project_id/members', 'addPlatformProjectMember'],
  ['put', '/api/v1/orgs/organizations/:org_id/projects/:project_id/members', 'updatePlatformProjectMember'],
  ['delete', '/api/v1/orgs/organizations/:org_id/projects/:project_id/members', 'removePlatformProjectMember'],
];

/**
 * Each answers 404 `not_supported`, whatever its query or body: Cairn has no organisations, and a
 * project is what an API key belongs to (keys: /v1/api-keys and `npm run keys`).
 */
function platformManagementRoutes(): RouteSpec[] {
  return PLATFORM_PATHS.map(([method, path, operationId]) =>
    route({
      method,
      path,
      operationId,
      summary: "mem0's organisation and project management, which Cairn does not have: always 404 not_supported.",
      tag: 'mem0 platform management (not supported)',
      auth: 'token',
      // anything the clients send in the query (get_project's fields, a member's email) is let through to the 404
      query: AnyObject({ additionalProperties: true }),
      responses: { 404: { description: 'Not supported by Cairn', schema: ERROR_SCHEMA } },
      handler(ctx) {
        throw notFound(
          `Cairn does not implement mem0's organization and project management (${ctx.method} ${ctx.path}): there are no organizations, and a project is the one its API key belongs to. ` +
            'Create and revoke keys with /v1/api-keys or `npm run keys`; project settings such as custom instructions and categories are not supported.',
          'not_supported',
        );
      },
    }),
  );
}
