import { Type } from '@sinclair/typebox';
import { AGENT_LIMITS } from '../../core/agents/agents.js';
import { INDEX_LIMITS, INDEX_NAME } from '../../core/indexes.js';
import { SPEC_KIND, SPEC_VERSION } from '../../core/project/spec.js';
import { SCHEMA_LIMITS, SCHEMA_NAME } from '../../core/schemas.js';
import { METRICS } from '../../contracts/vector-store.js';
import { CREATE_AGENT, NEW_MCP_SERVER, NEW_RULE, NEW_TOOL } from './agents.js';
import { Const, Nullable, StringEnum } from './common.js';
import { PROTECTION, TAGS } from './indexes.js';
import { CREATE_KNOWLEDGE } from './knowledge.js';
import { PUBLISH_SCHEMA } from './record-schemas.js';

/** Most agents, knowledge bases and indexes one spec may name; most versions of one schema. */
const SPEC_LIMITS = { items: 500, versions: 500 } as const;

const AGENT = Type.Object(
  {
    ...CREATE_AGENT.properties,
    tools: Type.Optional(
      Type.Array(NEW_TOOL, { maxItems: AGENT_LIMITS.tools, description: 'Every tool of the agent; apply deletes the agent’s others.' }),
    ),
    mcp_servers: Type.Optional(
      Type.Array(NEW_MCP_SERVER, { maxItems: AGENT_LIMITS.mcpServers, description: 'Every MCP server of the agent; apply deletes the agent’s others. Secret values are never part of a spec.' }),
    ),
    rules: Type.Optional(
      Type.Array(NEW_RULE, { maxItems: AGENT_LIMITS.rules, description: 'Every rule of the agent; apply deletes the agent’s others.' }),
    ),
  },
  { additionalProperties: false },
);

const RECORD_SCHEMA = Type.Object(
  {
    name: Type.String({ pattern: SCHEMA_NAME }),
    versions: Type.Array(PUBLISH_SCHEMA, {
      minItems: 1,
      maxItems: SPEC_LIMITS.versions,
      description: 'Every version, oldest first; embed_template null is the default template.',
    }),
  },
  { additionalProperties: false },
);

const INDEX = Type.Object(
  {
    name: Type.String({ pattern: INDEX_NAME }),
    dimension: Type.Optional(Type.Integer({ minimum: 1, maximum: INDEX_LIMITS.maxDimension, description: 'Raw indexes.' })),
    metric: Type.Optional(StringEnum(METRICS, { description: 'Default cosine.' })),
    embed: Type.Optional(
      Type.Object(
        {
          model: Type.String({ minLength: 1, maxLength: 128 }),
          field_map: Type.Optional(Type.Object({ text: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })),
        },
        { additionalProperties: false, description: 'Managed indexes (text embedded server-side).' },
      ),
    ),
    deletion_protection: Type.Optional(PROTECTION),
    tags: Type.Optional(TAGS),
  },
  { additionalProperties: false },
);

const MEMORY_EMBED_MODEL = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 128,
    description: 'The embedding model of the project’s memories and typed records (provider/model, e.g. local, cohere/embed-v4.0, openai/<model>); null: the server’s MEMORY_EMBED_MODEL.',
  }),
);

/** The project's settings as a spec holds them; a field left out is its default. */
const SETTINGS = Type.Object(
  { memory_embed_model: Type.Optional(MEMORY_EMBED_MODEL) },
  { additionalProperties: false, description: 'Project settings; a spec without them leaves the project’s settings as they are.' },
);

/** `PATCH /v1/project/settings`: the fields given change, the others stay. */
export const PATCH_SETTINGS = Type.Object({ memory_embed_model: Type.Optional(MEMORY_EMBED_MODEL) }, { additionalProperties: false });

/** `GET /v1/project/settings`. */
export const PROJECT_SETTINGS = {
  type: 'object',
  properties: {
    memory_embed_model: { type: ['string', 'null'], description: 'What the project asked for; null: the server’s MEMORY_EMBED_MODEL.' },
    memory_embedding: {
      type: 'object',
      properties: {
        model: { type: 'string', description: 'The model memory search and indexing use now.' },
        target: { type: ['string', 'null'], description: 'The model the memories are being re-embedded into; null when none is under way.' },
        status: { type: 'string', enum: ['ready', 'migrating', 'failed'] },
        embedded: { type: 'integer', description: 'Memories re-embedded so far.' },
        total: { type: ['integer', 'null'], description: 'Memories the project held when the re-embedding started.' },
        started_at: { type: ['string', 'null'], format: 'date-time' },
        error: { type: ['string', 'null'] },
      },
    },
  },
} as const;

/** A project spec: what export writes and apply takes. Unknown fields anywhere are rejected. */
export const PROJECT_SPEC = Type.Object(
  {
    kind: Const(SPEC_KIND),
    version: Const(SPEC_VERSION, { description: 'The spec format version.' }),
    agents: Type.Optional(Type.Array(AGENT, { maxItems: SPEC_LIMITS.items })),
    knowledge: Type.Optional(
      Type.Array(CREATE_KNOWLEDGE, { maxItems: SPEC_LIMITS.items, description: 'Knowledge base definitions (not their documents).' }),
    ),
    schemas: Type.Optional(Type.Array(RECORD_SCHEMA, { maxItems: SCHEMA_LIMITS.schemasPerProject })),
    indexes: Type.Optional(Type.Array(INDEX, { maxItems: SPEC_LIMITS.items, description: 'Index definitions (not their vectors).' })),
    settings: Type.Optional(SETTINGS),
  },
  { additionalProperties: false },
);

/** `POST /v1/project/apply`. */
export const APPLY_PROJECT = Type.Object(
  { spec: PROJECT_SPEC, dry_run: Type.Optional(Type.Boolean({ description: 'Report the changes without making them. Default false.' })) },
  { additionalProperties: false },
);

// Responses

const CHANGE = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['agent', 'tool', 'mcp_server', 'rule', 'knowledge', 'schema', 'index', 'setting'] },
    name: { type: 'string', description: 'Tools are agent/tool, MCP servers agent/server, rules agent/condition, settings their field.' },
    action: { type: 'string', enum: ['create', 'update', 'delete', 'unchanged', 'conflict'] },
    detail: { type: 'string' },
  },
} as const;

/** What apply did (or would do). */
export const APPLY_RESULT = {
  type: 'object',
  properties: { dry_run: { type: 'boolean' }, changes: { type: 'array', items: CHANGE } },
} as const;
