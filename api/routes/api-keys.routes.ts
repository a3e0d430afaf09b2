import type { ApiKeys, ApiKeyView, CreatedApiKey } from '../../core/api-keys.js';
import { iso } from '../../lib/time.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { CREATE_API_KEY, KEY_VIEW } from '../schemas/api-keys.js';
import { PAGING_QUERY } from '../schemas/common.js';

const show = (k: ApiKeyView) => ({ id: k.id, name: k.name, prefix: k.prefix, created_at: iso(k.created_at) });

/** `/v1/api-keys`: the calling project's keys. */
export function apiKeyRoutes({ apiKeys }: { apiKeys: ApiKeys }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key for the calling project. The key is shown once.',
    tag: 'API keys',
    auth: 'token',
    body: CREATE_API_KEY,
    responses: {
      201: {
        description: 'The new key',
        schema: { ...KEY_VIEW, properties: { ...KEY_VIEW.properties, key: { type: 'string' }, project: { type: 'string' } } },
      },
      400: { description: 'Invalid body', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const { projectId, projectName } = ctx.state.principal;
      const created: CreatedApiKey = await apiKeys.create(projectId, projectName, ctx.state.body.name);
      ctx.status = 201;
      ctx.body = { ...show(created), key: created.key, project: created.project };
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/api-keys',
    operationId: 'listApiKeys',
    summary: "List the calling project's API keys, newest first (never the keys themselves).",
    tag: 'API keys',
    auth: 'token',
    query: PAGING_QUERY,
    responses: {
      200: { description: 'Keys', schema: { type: 'object', properties: { api_keys: { type: 'array', items: KEY_VIEW } } } },
    },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      const keys = await apiKeys.list(ctx.state.principal.projectId, limit, offset);
      ctx.body = { api_keys: keys.map(show) };
    },
  });

  const revoke = route({
    method: 'delete',
    path: '/v1/api-keys/:id',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key of the calling project. The last key of a project cannot be revoked.',
    tag: 'API keys',
    auth: 'token',
    responses: {
      204: { description: 'Revoked' },
      404: { description: 'No such key in this project', schema: ERROR_SCHEMA },
      409: { description: 'It is the last key', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      await apiKeys.revoke(ctx.state.principal.projectId, String(ctx.params.id));
      ctx.status = 204;
    },
  });

  return [create, list, revoke];
}
