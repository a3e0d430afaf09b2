import { SCHEMA_LIMITS, toView, type Schemas, type SchemaVersion } from '../../core/schemas.js';
import { SCHEMA_PRESETS } from '../../core/schema-presets.js';
import { iso } from '../../lib/time.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { PAGING_QUERY } from '../schemas/common.js';
import { GET_SCHEMA, PRESET_VIEW, PUBLISH_SCHEMA, RECORD_SCHEMA_VIEW, REGISTER_SCHEMA } from '../schemas/record-schemas.js';

const TAG = 'Record schemas';

const show = (v: SchemaVersion) => ({ ...toView(v), created_at: iso(v.created_at) });

const errors = (extra: Record<number, string> = {}) => ({
  400: { description: 'Invalid input (invalid_schema lists every violation of the subset)', schema: ERROR_SCHEMA },
  ...Object.fromEntries(Object.entries(extra).map(([status, description]) => [status, { description, schema: ERROR_SCHEMA }])),
});

/** `/v1/schemas` and `/v1/schema-presets`: versioned record schemas of the calling project. */
export function schemaRoutes({ schemas }: { schemas: Schemas }): RouteSpec[] {
  const register = route({
    method: 'post',
    path: '/v1/schemas',
    operationId: 'registerSchema',
    summary: `Register a record schema (version 1). A taken name is 409; at most ${SCHEMA_LIMITS.schemasPerProject} schemas per project. A preset from /v1/schema-presets can be sent unchanged.`,
    tag: TAG,
    auth: 'token',
    body: REGISTER_SCHEMA,
    responses: { 201: { description: 'Version 1 of the schema', schema: RECORD_SCHEMA_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await schemas.register(ctx.state.principal.projectId, ctx.state.body));
    },
  });

  const publish = route({
    method: 'post',
    path: '/v1/schemas/:name',
    operationId: 'publishSchemaVersion',
    summary:
      'Publish the next version of a schema. embed_template, retention and description carry over from the previous version when omitted; null clears them (the template back to the default). Records stay pinned to the version they were written with.',
    tag: TAG,
    auth: 'token',
    body: PUBLISH_SCHEMA,
    responses: { 201: { description: 'The new version', schema: RECORD_SCHEMA_VIEW }, ...errors({ 404: 'No such schema in this project' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await schemas.publish(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/schemas/:name',
    operationId: 'getSchema',
    summary: 'A schema version: the latest, or the one named by ?version=N.',
    tag: TAG,
    auth: 'token',
    query: GET_SCHEMA,
    responses: { 200: { description: 'The schema version', schema: RECORD_SCHEMA_VIEW }, ...errors({ 404: 'No such schema or version' }) },
    async handler(ctx) {
      ctx.body = show(await schemas.get(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.query?.version));
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/schemas',
    operationId: 'listSchemas',
    summary: "The project's schemas, newest first, each at its latest version.",
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Schemas', schema: { type: 'object', properties: { schemas: { type: 'array', items: RECORD_SCHEMA_VIEW } } } } },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { schemas: (await schemas.list(ctx.state.principal.projectId, limit, offset)).map(show) };
    },
  });

  const versions = route({
    method: 'get',
    path: '/v1/schemas/:name/versions',
    operationId: 'listSchemaVersions',
    summary: 'Every version of a schema, newest first.',
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: {
      200: { description: 'Versions', schema: { type: 'object', properties: { versions: { type: 'array', items: RECORD_SCHEMA_VIEW } } } },
      ...errors({ 404: 'No such schema' }),
    },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { versions: (await schemas.versions(ctx.state.principal.projectId, String(ctx.params.name), limit, offset)).map(show) };
    },
  });

  const presets = route({
    method: 'get',
    path: '/v1/schema-presets',
    operationId: 'listSchemaPresets',
    summary: 'Built-in starter schemas (link, observation, action-item, decision, lead-profile). Adopt one by sending it unchanged to POST /v1/schemas.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Presets', schema: { type: 'object', properties: { presets: { type: 'array', items: PRESET_VIEW } } } } },
    handler(ctx) {
      // the built-in starter schemas; each can be sent unchanged to register
      ctx.body = { presets: SCHEMA_PRESETS };
    },
  });

  return [register, publish, get, list, versions, presets];
}
