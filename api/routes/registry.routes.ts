import type { Context } from 'koa';
import type { Registry, RegistryMemberView, RegistryVersionView } from '../../core/registry/registry.js';
import { badRequest } from '../../lib/errors.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { REGISTRY_ERROR, route, type ResponseSpec, type RouteSpec } from '../route.js';
import { PAGING_QUERY } from '../schemas/common.js';
import { DEPRECATE_VERSION, MEMBER_VIEW, PUBLISH_VERSION, PUT_MEMBER, VERSION_VIEW } from '../schemas/registry.js';

const TAG = 'Registry';
const BASE = '/projects/:owner/:project';

const showVersion = (v: RegistryVersionView) => ({
  ...v,
  published_at: iso(v.published_at),
  deprecated_at: isoOrNull(v.deprecated_at),
});

const showMember = (m: RegistryMemberView) => ({ name: m.name, access: m.access, added_by: m.added_by, added_at: iso(m.added_at) });

/** The error responses of a registry route: 400, 401, 404 (`notFound` says of what), 503 and any others. */
function errors(notFound: string | null, extra: Record<number, string> = {}): Record<number, ResponseSpec> {
  const all: Record<number, string> = {
    400: 'Invalid input (invalid_argument)',
    401: 'Missing or invalid ID token (unauthenticated)',
    503: "The identity provider's keys cannot be fetched (unavailable)",
    ...extra,
  };
  if (notFound !== null) all[404] = notFound;
  return Object.fromEntries(Object.entries(all).map(([status, description]) => [status, { description, schema: REGISTRY_ERROR }]));
}

const param = (ctx: Context, name: string): string => String((ctx.params as Record<string, string>)[name]);

const AUTH_NOTE = 'Authorization: Bearer <ID_TOKEN> (an OIDC ID token).';

/**
 * The registry of published project versions (`/projects/{owner}/{project}/…`): OIDC ID tokens,
 * and errors as `{error: {code, message}}`.
 */
export function registryRoutes({ registry }: { registry: Registry }): RouteSpec[] {
  const publish = route({
    method: 'post',
    path: `${BASE}/versions`,
    operationId: 'publishVersion',
    summary: `Publish a version: {version (semver), spec (object), release_notes?}. The first publish of a project must come from {owner}, who then owns it; later ones need write access (the owner or a member). Versions are immutable: the same version again → 409. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    body: PUBLISH_VERSION,
    responses: { 201: { description: 'Published', schema: VERSION_VIEW }, ...errors(null, { 403: 'Not the owner (first publish) or no write access', 409: 'That version is published already' }) },
    async handler(ctx) {
      const view = await registry.publish(ctx.state.principal, param(ctx, 'owner'), param(ctx, 'project'), ctx.state.body);
      ctx.status = 201;
      ctx.set('Location', `/projects/${encodeURIComponent(view.owner)}/${encodeURIComponent(view.project)}/versions/${encodeURIComponent(view.version)}`);
      ctx.body = showVersion(view);
    },
  });

  const list = route({
    method: 'get',
    path: `${BASE}/versions`,
    operationId: 'listVersions',
    summary: `List a project's versions in semantic-version order, newest first (deprecated ones included). Any signed-in user. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    query: PAGING_QUERY,
    responses: {
      200: { description: 'Versions', schema: { type: 'object', properties: { versions: { type: 'array', items: VERSION_VIEW } } } },
      ...errors('No such registry project'),
    },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { versions: (await registry.list(param(ctx, 'owner'), param(ctx, 'project'), limit, offset)).map(showVersion) };
    },
  });

  const get = route({
    method: 'get',
    path: `${BASE}/versions/:version`,
    operationId: 'getVersion',
    summary: `A published version (without its spec). Any signed-in user. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    responses: { 200: { description: 'The version', schema: VERSION_VIEW }, ...errors('No such project or version') },
    async handler(ctx) {
      ctx.body = showVersion(await registry.get(param(ctx, 'owner'), param(ctx, 'project'), param(ctx, 'version')));
    },
  });

  const pull = route({
    method: 'get',
    path: `${BASE}/versions/:version/spec`,
    operationId: 'pullVersion',
    summary: `Pull a version: {version, spec_digest, spec, deprecated, deprecation_reason}. Deprecated versions can still be pulled. Any signed-in user. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    responses: {
      200: {
        description: 'The spec',
        schema: {
          type: 'object',
          properties: {
            version: { type: 'string' },
            spec_digest: { type: 'string' },
            spec: { type: 'object' },
            deprecated: { type: 'boolean' },
            deprecation_reason: { type: ['string', 'null'] },
          },
        },
      },
      ...errors('No such project or version'),
    },
    async handler(ctx) {
      const { version, spec } = await registry.pull(param(ctx, 'owner'), param(ctx, 'project'), param(ctx, 'version'));
      ctx.body = { version: version.version, spec_digest: version.spec_digest, spec, deprecated: version.deprecated, deprecation_reason: version.deprecation_reason };
    },
  });

  const deprecate = route({
    method: 'post',
    path: `${BASE}/versions/:version/deprecate`,
    operationId: 'deprecateVersion',
    summary: `Deprecate a version: {reason?} (also accepted under the names deprecation_reason or message; send one). Needs write access. Idempotent: a repeat keeps the first deprecated_at; a new reason replaces the stored one. The version stays published and pullable. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    body: DEPRECATE_VERSION,
    responses: {
      200: { description: 'Deprecated', schema: { type: 'object', properties: { version: VERSION_VIEW } } },
      ...errors('No such project or version', { 403: 'No write access' }),
    },
    async handler(ctx) {
      const body = ctx.state.body;
      const given = [body.reason, body.deprecation_reason, body.message].filter((r): r is string => r !== undefined);
      if (new Set(given).size > 1) {
        throw badRequest('conflicting_reasons', 'reason, deprecation_reason and message are names for the same field; send one of them.');
      }
      // an empty reason says nothing: the stored one (if any) stays
      const reason = given[0]?.trim() ? (given[0] as string) : null;
      const view = await registry.deprecate(ctx.state.principal, param(ctx, 'owner'), param(ctx, 'project'), param(ctx, 'version'), reason);
      ctx.body = { version: showVersion(view) };
    },
  });

  const putMember = route({
    method: 'put',
    path: `${BASE}/members/:name`,
    operationId: 'putRegistryMember',
    summary: `Give a user write access (publish, deprecate): 201 when added, 200 when they had it. Body optional: {access: "write"}. Only the owner manages members. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    body: PUT_MEMBER,
    responses: {
      200: { description: 'Already a member', schema: MEMBER_VIEW },
      201: { description: 'Added', schema: MEMBER_VIEW },
      ...errors('No such registry project', { 403: 'Not the owner' }),
    },
    async handler(ctx) {
      const { member, created } = await registry.addMember(ctx.state.principal, param(ctx, 'owner'), param(ctx, 'project'), param(ctx, 'name'));
      ctx.status = created ? 201 : 200;
      ctx.body = showMember(member);
    },
  });

  const removeMember = route({
    method: 'delete',
    path: `${BASE}/members/:name`,
    operationId: 'deleteRegistryMember',
    summary: `Take a member's write access away. Only the owner manages members. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    responses: { 204: { description: 'Removed' }, ...errors('No such project, or not a member', { 403: 'Not the owner' }) },
    async handler(ctx) {
      await registry.removeMember(ctx.state.principal, param(ctx, 'owner'), param(ctx, 'project'), param(ctx, 'name'));
      ctx.status = 204;
    },
  });

  const listMembers = route({
    method: 'get',
    path: `${BASE}/members`,
    operationId: 'listRegistryMembers',
    summary: `The owner and the members with write access (newest first). Any signed-in user. ${AUTH_NOTE}`,
    tag: TAG,
    auth: 'oidc',
    query: PAGING_QUERY,
    responses: {
      200: { description: 'Members', schema: { type: 'object', properties: { owner: { type: 'string' }, members: { type: 'array', items: MEMBER_VIEW } } } },
      ...errors('No such registry project'),
    },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      const owner = param(ctx, 'owner');
      ctx.body = { owner, members: (await registry.members(owner, param(ctx, 'project'), limit, offset)).map(showMember) };
    },
  });

  return [publish, list, get, pull, deprecate, putMember, removeMember, listMembers];
}
