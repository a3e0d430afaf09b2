import { SECRET_NAME, type Secrets, type SecretView } from '../../core/secrets.js';
import { badRequest } from '../../lib/errors.js';
import { iso } from '../../lib/time.js';
import { errorResponses, route, type RouteSpec } from '../route.js';
import { PAGING_QUERY } from '../schemas/common.js';
import { PUT_SECRET, SECRET_VIEW } from '../schemas/secrets.js';

const TAG = 'Secrets';
const SECRET_NAME_RE = new RegExp(SECRET_NAME);

const show = (s: SecretView) => ({ name: s.name, created_at: iso(s.created_at), updated_at: iso(s.updated_at) });
const errors = (extra: Record<number, string> = {}) => errorResponses('No such secret in this project', extra);

/** Write-only project secrets that tools send as credentials. */
export function secretRoutes({ secrets }: { secrets: Secrets }): RouteSpec[] {
  const put = route({
    method: 'put',
    path: '/v1/secrets/:name',
    operationId: 'putSecret',
    summary: 'Store or replace a secret (encrypted at rest with SECRETS_KEY). Its value is never returned, logged or traced; tools name it in secret_ref.',
    tag: TAG,
    auth: 'token',
    body: PUT_SECRET,
    responses: { 200: { description: 'Replaced', schema: SECRET_VIEW }, 201: { description: 'Created', schema: SECRET_VIEW }, ...errors() },
    async handler(ctx) {
      const name = String(ctx.params.name);
      if (!SECRET_NAME_RE.test(name)) {
        throw badRequest('validation_failed', `Secret names match ${SECRET_NAME}.`, [{ path: '/name', message: `must match ${SECRET_NAME}` }]);
      }
      const { secret, created } = await secrets.put(ctx.state.principal.projectId, name, ctx.state.body.value);
      ctx.status = created ? 201 : 200;
      ctx.body = show(secret);
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/secrets',
    operationId: 'listSecrets',
    summary: 'List secret names, newest first.',
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Secrets', schema: { type: 'object', properties: { secrets: { type: 'array', items: SECRET_VIEW } } } } },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { secrets: (await secrets.list(ctx.state.principal.projectId, limit, offset)).map(show) };
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/secrets/:name',
    operationId: 'getSecret',
    summary: 'Whether a secret is set, and when; never its value.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The secret', schema: SECRET_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = show(await secrets.get(ctx.state.principal.projectId, String(ctx.params.name)));
    },
  });

  const remove = route({
    method: 'delete',
    path: '/v1/secrets/:name',
    operationId: 'deleteSecret',
    summary: 'Delete a secret; tools that name it fail their calls until it is set again.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await secrets.delete(ctx.state.principal.projectId, String(ctx.params.name));
      ctx.status = 204;
    },
  });

  return [put, list, get, remove];
}
