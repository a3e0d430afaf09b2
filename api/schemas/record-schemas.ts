import { Type } from '@sinclair/typebox';
import { PROPERTY_NAME, RETENTION_SCHEMA, SCHEMA_LIMITS, SCHEMA_NAME, type Retention } from '../../core/schemas.js';
import { AnyObject, Nullable } from './common.js';

const SUBSET = `A restricted JSON Schema: {"type": "object", "properties": {...}, "required"?: [...], "additionalProperties"?: false, "description"?, "title"?}. At most ${SCHEMA_LIMITS.propertiesPerSchema} properties, one level only, names matching ${PROPERTY_NAME}; each property is exactly one of {"type": "string"|"number"|"integer"|"boolean"}, {"type": "string", "enum": [strings]} or {"type": "array", "items": {"type": "string"}}, each with an optional "description". No other keywords. Every violation is listed in errors (code invalid_schema).`;

/** A record schema as requests send it (checked against the subset by the service). */
export const JSON_SCHEMA_IN = AnyObject({ description: SUBSET });

/** A version's embed template in requests. */
export const EMBED_TEMPLATE = Nullable(
  Type.String({
    maxLength: SCHEMA_LIMITS.embedTemplateLength,
    description:
      'Text embedded for each record, with {{field}} placeholders naming properties (arrays are joined with ", "; a line whose placeholders are all empty is dropped). Omitted or null: one "field: {{field}}" line per property.',
  }),
);

/** A version's description in requests. */
export const DESCRIPTION = Nullable(Type.String({ maxLength: SCHEMA_LIMITS.descriptionLength }));

/** A version's retention in requests (the service checks it against the same schema). */
export const RETENTION = Type.Unsafe<Retention | null>(RETENTION_SCHEMA);

/** What a version is made of (publish, project specs). */
export const VERSION_FIELDS = {
  json_schema: JSON_SCHEMA_IN,
  embed_template: Type.Optional(EMBED_TEMPLATE),
  retention: Type.Optional(RETENTION),
  description: Type.Optional(DESCRIPTION),
};

/** `POST /v1/schemas`: register version 1. */
export const REGISTER_SCHEMA = Type.Object(
  {
    name: Type.String({ pattern: SCHEMA_NAME, description: 'Lowercase letters, digits, "_" and "-", starting with a letter; at most 64 characters.' }),
    ...VERSION_FIELDS,
  },
  { additionalProperties: false },
);

/** `POST /v1/schemas/{name}`: publish the next version. */
export const PUBLISH_SCHEMA = Type.Object(VERSION_FIELDS, { additionalProperties: false });

/** `GET /v1/schemas/{name}`. */
export const GET_SCHEMA = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1, description: 'The version to read; the latest when omitted.' })) },
  { additionalProperties: false },
);

// Responses

const JSON_SCHEMA_OUT = {
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
} as const;

/** A schema version as the API shows it. */
export const RECORD_SCHEMA_VIEW = {
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

/** A built-in starter schema. */
export const PRESET_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    json_schema: JSON_SCHEMA_OUT,
    embed_template: { type: 'string' },
  },
} as const;
