import type { ApplyResult, ProjectSpecs } from '../../core/project/project-specs.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { APPLY_PROJECT, APPLY_RESULT, PROJECT_SPEC } from '../schemas/project.js';

const TAG = 'Project';

/** `/v1/project/export` and `/v1/project/apply`: a project's whole configuration as one document. */
export function projectRoutes({ projectSpecs }: { projectSpecs: ProjectSpecs }): RouteSpec[] {
  const exportSpec = route({
    method: 'get',
    path: '/v1/project/export',
    operationId: 'exportProject',
    summary:
      'The calling project’s configuration as a spec: agents with tools (secret_ref names only, never values) and rules, knowledge base definitions, record schemas with every version, index definitions. No ids, timestamps, documents, records or vectors; lists ordered by name (rules in the order they run), so equal projects export equal documents.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The spec', schema: PROJECT_SPEC } },
    async handler(ctx) {
      ctx.body = await projectSpecs.export(ctx.state.principal.projectId);
    },
  });

  const apply = route({
    method: 'post',
    path: '/v1/project/apply',
    operationId: 'applyProject',
    summary:
      'Make the project match a spec: knowledge bases, then schemas, indexes and agents are created or updated; an agent’s tools, MCP servers and rules are made exactly the spec’s. Nothing the spec does not name is deleted. The whole spec is checked first (400 invalid_spec, nothing changed); what cannot be reconciled (a base with other settings, a schema whose history diverges, an index of another dimension) is reported as a conflict and left alone. dry_run: true only reports.',
    tag: TAG,
    auth: 'token',
    body: APPLY_PROJECT,
    responses: {
      200: { description: 'The changes, in the order they were (or would be) made', schema: APPLY_RESULT },
      400: { description: 'The spec is malformed or cannot be applied (every problem listed); nothing was changed', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const result: ApplyResult = await projectSpecs.apply(ctx.state.principal.projectId, ctx.state.body.spec, ctx.state.body.dry_run === true);
      ctx.body = result;
    },
  });

  return [exportSpec, apply];
}
