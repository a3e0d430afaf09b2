import { Type } from '@sinclair/typebox';
import { EXPORT_KEY } from '../../core/memory/exports.js';
import { AnyObject } from './common.js';
import { ENTITY_PROPS } from './records.js';

/** mem0's `org_id` and `project_id`: when sent, the caller's project id (as /v1/ping/ gives both). */
const PROJECT_IDS = {
  org_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "The project's id (/v1/ping/ gives it as org_id too); any other is a 404." })),
  project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "The project's id, as /v1/ping/ gives it; any other is a 404." })),
};

/** `POST /v1/exports/`: mem0's create_memory_export. */
export const CREATE_EXPORT = Type.Object(
  {
    schema: Type.Union([AnyObject(), Type.String({ minLength: 1 })], {
      description:
        "The JSON Schema to fill (a Pydantic model's model_json_schema()), as an object or a string holding one. Filled: string (and enum), number, integer, boolean and list-of-strings fields, Optional ones and $ref'd enums included; nested objects and lists of objects are exported as null and listed in unsupported_fields.",
    }),
    filters: Type.Optional(AnyObject({ description: 'Which memories to export, as a memory list takes them: must name user_id, agent_id, app_id or run_id.' })),
    ...ENTITY_PROPS,
    export_instructions: Type.Optional(Type.String({ maxLength: 8192, description: 'Accepted, not used: the fields are filled by MEMORY_MODEL with its own instructions.' })),
    ...PROJECT_IDS,
  },
  { additionalProperties: false },
);

/** `POST /v1/exports/get/`: mem0's get_memory_export. */
export const GET_EXPORT = Type.Object(
  {
    memory_export_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The export (the id its create answered).' })),
    filters: Type.Optional(AnyObject({ description: 'Entity ids only (user_id, agent_id, app_id, run_id): the latest export of that entity.' })),
    ...ENTITY_PROPS,
    ...PROJECT_IDS,
  },
  { additionalProperties: false },
);

/** What a create answers. */
export const EXPORT_CREATED = {
  type: 'object',
  properties: { message: { type: 'string' }, id: { type: 'string', description: 'The export: memory_export_id for a get' } },
} as const;

/** What a get answers: the schema's fields once completed, and the export itself. */
export const EXPORT_VIEW = {
  type: 'object',
  description: `Once completed, every top-level field of the schema (null when the memories do not state it, or extraction cannot fill it); "${EXPORT_KEY}" holds the export itself.`,
  additionalProperties: true,
  properties: {
    [EXPORT_KEY]: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        status: { type: 'string', enum: ['pending', 'running', 'completed', 'failed'], description: 'The fields are there only once completed' },
        memory_count: { type: ['integer', 'null'], description: 'How many memories it read; null until completed' },
        unsupported_fields: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, reason: { type: 'string' } } },
          description: 'Fields extraction cannot fill (nested objects, lists of objects), exported as null',
        },
        error: { type: ['string', 'null'], description: 'Why it failed, or the last error while it is retried' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
    },
  },
} as const;
