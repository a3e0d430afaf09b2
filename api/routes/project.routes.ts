import type { ApplyResult, ProjectSpecs } from '../../core/project/project-specs.js';
import type { ProjectSettings } from '../../core/project/settings.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { APPLY_PROJECT, APPLY_RESULT, PATCH_SETTINGS, PROJECT_SETTINGS, PROJECT_SPEC } from '../schemas/project.js';

const TAG = 'Project';

/** `/v1/project/export` and `/v1/project/apply`: a project's whole configuration as one document; `/v1/project/settings`. */
export function projectRoutes({ projectSpecs, projectSettings }: { projectSpecs: ProjectSpecs; projectSettings: ProjectSettings }): RouteSpec[] {
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

  const getSettings = route({
    method: 'get',
    path: '/v1/project/settings',
    operationId: 'getProjectSettings',
    summary:
      'The calling project’s settings: memory_embed_model (null: the server’s MEMORY_EMBED_MODEL), and memory_embedding — the model memory search uses now and, while the memories are re-embedded into another, its target and progress.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The settings', schema: PROJECT_SETTINGS } },
    async handler(ctx) {
      ctx.body = await projectSettings.get(ctx.state.principal.projectId);
    },
  });

  const patchSettings = route({
    method: 'patch',
    path: '/v1/project/settings',
    operationId: 'updateProjectSettings',
    summary:
      'Change the project’s settings (fields left out stay). A new memory_embed_model re-embeds every memory and typed record of the project in the background while search keeps answering from the current model, then switches; a change while one runs replaces its target, and changing back to the model in use cancels it. Progress in memory_embedding.',
    tag: TAG,
    auth: 'token',
    body: PATCH_SETTINGS,
    responses: {
      200: { description: 'The settings, with the re-embedding the change started', schema: PROJECT_SETTINGS },
      400: { description: 'An unknown model, or one this server is not set up for (nothing changed)', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.body = await projectSettings.update(ctx.state.principal.projectId, ctx.state.body);
    },
  });

  return [exportSpec, apply, getSettings, patchSettings];
}
