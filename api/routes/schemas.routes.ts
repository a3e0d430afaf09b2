import {
  PROPERTY_NAME,
  RETENTION_SCHEMA,
  SCHEMA_LIMITS,
  SCHEMA_NAME,
  toView,
  type PublishSchemaInput,
  type RegisterSchemaInput,
  type SchemaVersion,
} from '../../core/schemas.js';
import { SCHEMA_PRESETS } from '../../core/schema-presets.js';
import { iso } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import { ERROR_SCHEMA, PAGING_QUERY, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';

const TAG = 'Record schemas';

const SUBSET = `A restricted JSON Schema: {"type": "object", "properties": {...}, "required"?: [...], "additionalProperties"?: false, "description"?, "title"?}. At most ${SCHEMA_LIMITS.propertiesPerSchema} properties, one level only, names matching ${PROPERTY_NAME}; each property is exactly one of {"type": "string"|"number"|"integer"|"boolean"}, {"type": "string", "enum": [strings]} or {"type": "array", "items": {"type": "string"}}, each with an optional "description". No other keywords. Every violation is listed in errors (code invalid_schema).`;

/** A record schema as requests send it (checked against the subset by the service). */
export const JSON_SCHEMA_IN: JsonSchema = { type: 'object', description: SUBSET };

const JSON_SCHEMA_OUT: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['object'] },
    properties: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean', 'array'] },
          enum: { type: 'array', items: { type: 'string' } },
          items: { type: 'object', properties: { type: { type: 'string', enum: ['string'] } } },
          description: { type: 'string' },
        },
      },
    },
    required: { type: 'array', items: { type: 'string' } },
  },
};

/** A version's embed template in requests. */
export const EMBED_TEMPLATE: JsonSchema = {
  type: ['string', 'null'],
  maxLength: SCHEMA_LIMITS.embedTemplateLength,
  description:
    'Text embedded for each record, with {{field}} placeholders naming properties (arrays are joined with ", "; a line whose placeholders are all empty is dropped). Omitted or null: one "field: {{field}}" line per property.',
};

/** A version's description in requests. */
export const DESCRIPTION: JsonSchema = { type: ['string', 'null'], maxLength: SCHEMA_LIMITS.descriptionLength };

const RECORD_SCHEMA_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    version: { type: 'integer', description: 'Registration creates 1; each publish adds one.' },
    json_schema: JSON_SCHEMA_OUT,
    embed_template: { type: 'string', description: 'The stored template, or the default one when none was given.' },
    retention: {
      type: ['object', 'null'],
      properties: { max_age_days: { type: 'integer' }, max_count: { type: 'integer' } },
    },
    description: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time', description: 'When this version was created.' },
  },
} as const;

const PRESET_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    json_schema: JSON_SCHEMA_OUT,
    embed_template: { type: 'string' },
  },
} as const;

const show = (v: SchemaVersion) => ({ ...toView(v), created_at: iso(v.created_at) });

const errors = (extra: Record<number, string> = {}) => ({
  400: { description: 'Invalid input (invalid_schema lists every violation of the subset)', schema: ERROR_SCHEMA },
  ...Object.fromEntries(Object.entries(extra).map(([status, description]) => [status, { description, schema: ERROR_SCHEMA }])),
});

/** `/v1/schemas` and `/v1/schema-presets`: versioned record schemas of the calling project. */
export function schemaRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const schemas = runtime.schemas;
  const project = (ctx: { state: { principal: { projectId: string } } }) => ctx.state.principal.projectId;

  const register: RouteSpec<RegisterSchemaInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/schemas',
    operationId: 'registerSchema',
    summary: `Register a record schema (version 1). A taken name is 409; at most ${SCHEMA_LIMITS.schemasPerProject} schemas per project. A preset from /v1/schema-presets can be sent unchanged.`,
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'json_schema'],
      properties: {
        name: { type: 'string', pattern: SCHEMA_NAME, description: 'Lowercase letters, digits, "_" and "-", starting with a letter; at most 64 characters.' },
        json_schema: JSON_SCHEMA_IN,
        embed_template: EMBED_TEMPLATE,
        retention: RETENTION_SCHEMA,
        description: DESCRIPTION,
      },
    },
    responses: { 201: { description: 'Version 1 of the schema', schema: RECORD_SCHEMA_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await schemas.register(project(ctx), ctx.state.body));
    },
  };

  const publish: RouteSpec<PublishSchemaInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/schemas/:name',
    operationId: 'publishSchemaVersion',
    summary:
      'Publish the next version of a schema. embed_template, retention and description carry over from the previous version when omitted; null clears them (the template back to the default). Records stay pinned to the version they were written with.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['json_schema'],
      properties: { json_schema: JSON_SCHEMA_IN, embed_template: EMBED_TEMPLATE, retention: RETENTION_SCHEMA, description: DESCRIPTION },
    },
    responses: { 201: { description: 'The new version', schema: RECORD_SCHEMA_VIEW }, ...errors({ 404: 'No such schema in this project' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = show(await schemas.publish(project(ctx), String(ctx.params.name), ctx.state.body));
    },
  };

  const get: RouteSpec<undefined, { version?: number }> = {
    method: 'get',
    path: '/v1/schemas/:name',
    operationId: 'getSchema',
    summary: 'A schema version: the latest, or the one named by ?version=N.',
    tag: TAG,
    auth: 'token',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { version: { type: 'integer', minimum: 1, description: 'The version to read; the latest when omitted.' } },
    },
    responses: { 200: { description: 'The schema version', schema: RECORD_SCHEMA_VIEW }, ...errors({ 404: 'No such schema or version' }) },
    async handler(ctx) {
      ctx.body = show(await schemas.get(project(ctx), String(ctx.params.name), ctx.state.query?.version));
    },
  };

  const list: RouteSpec<undefined, { limit?: number; offset?: number }> = {
    method: 'get',
    path: '/v1/schemas',
    operationId: 'listSchemas',
    summary: "The project's schemas, newest first, each at its latest version.",
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: { 200: { description: 'Schemas', schema: { type: 'object', properties: { schemas: { type: 'array', items: RECORD_SCHEMA_VIEW } } } } },
    async handler(ctx) {
      const { limit = 50, offset = 0 } = ctx.state.query ?? {};
      ctx.body = { schemas: (await schemas.list(project(ctx), limit, offset)).map(show) };
    },
  };

  const versions: RouteSpec<undefined, { limit?: number; offset?: number }> = {
    method: 'get',
    path: '/v1/schemas/:name/versions',
    operationId: 'listSchemaVersions',
    summary: 'Every version of a schema, newest first.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: {
      200: { description: 'Versions', schema: { type: 'object', properties: { versions: { type: 'array', items: RECORD_SCHEMA_VIEW } } } },
      ...errors({ 404: 'No such schema' }),
    },
    async handler(ctx) {
      const { limit = 50, offset = 0 } = ctx.state.query ?? {};
      ctx.body = { versions: (await schemas.versions(project(ctx), String(ctx.params.name), limit, offset)).map(show) };
    },
  };

  const presets: RouteSpec<undefined, Record<string, never>> = {
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
  };

  return [register, publish, get, list, versions, presets] as Array<RouteSpec<never, never>>;
}
