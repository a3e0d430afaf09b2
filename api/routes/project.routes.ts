import { AGENT_LIMITS } from '../../core/agents/agents.js';
import { INDEX_LIMITS, INDEX_NAME } from '../../core/indexes.js';
import type { ApplyResult } from '../../core/project/project-specs.js';
import { SPEC_KIND, SPEC_VERSION, type ProjectSpec } from '../../core/project/spec.js';
import { RETENTION_SCHEMA, SCHEMA_LIMITS, SCHEMA_NAME } from '../../core/schemas.js';
import { METRICS } from '../../contracts/vector-store.js';
import type { JsonSchema } from '../../lib/validation.js';
import { ERROR_SCHEMA, projectOf, type RouteSpec } from '../route.js';
import { AGENT_FIELDS, RULE_FIELDS, TOOL_FIELDS } from './agents.routes.js';
import type { RouteDeps } from './deps.js';
import { PROTECTION, TAGS } from './indexes.routes.js';
import { KNOWLEDGE_FIELDS } from './knowledge.routes.js';
import { DESCRIPTION, EMBED_TEMPLATE, JSON_SCHEMA_IN } from './schemas.routes.js';

const TAG = 'Project';

/** Most agents, knowledge bases and indexes one spec may name; most versions of one schema. */
const SPEC_LIMITS = { items: 500, versions: 500 } as const;

const closed = (properties: Record<string, unknown>, required: string[] = []): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  ...(required.length > 0 ? { required } : {}),
  properties,
});

const TOOL = closed(TOOL_FIELDS, ['name', 'http']);
const RULE = closed(RULE_FIELDS, ['rule_type', 'condition']);

const AGENT = closed(
  {
    ...AGENT_FIELDS,
    tools: { type: 'array', maxItems: AGENT_LIMITS.tools, items: TOOL, description: 'Every tool of the agent; apply deletes the agent’s others.' },
    rules: { type: 'array', maxItems: AGENT_LIMITS.rules, items: RULE, description: 'Every rule of the agent; apply deletes the agent’s others.' },
  },
  ['name'],
);

const SCHEMA_VERSION = closed({ json_schema: JSON_SCHEMA_IN, embed_template: EMBED_TEMPLATE, retention: RETENTION_SCHEMA, description: DESCRIPTION }, ['json_schema']);

const RECORD_SCHEMA = closed(
  {
    name: { type: 'string', pattern: SCHEMA_NAME },
    versions: { type: 'array', minItems: 1, maxItems: SPEC_LIMITS.versions, items: SCHEMA_VERSION, description: 'Every version, oldest first; embed_template null is the default template.' },
  },
  ['name', 'versions'],
);

const INDEX = closed(
  {
    name: { type: 'string', pattern: INDEX_NAME },
    dimension: { type: 'integer', minimum: 1, maximum: INDEX_LIMITS.maxDimension, description: 'Raw indexes.' },
    metric: { type: 'string', enum: [...METRICS], description: 'Default cosine.' },
    embed: {
      type: 'object',
      additionalProperties: false,
      required: ['model'],
      properties: {
        model: { type: 'string', minLength: 1, maxLength: 128 },
        field_map: { type: 'object', additionalProperties: false, required: ['text'], properties: { text: { type: 'string', minLength: 1, maxLength: 64 } } },
      },
      description: 'Managed indexes (text embedded server-side).',
    },
    deletion_protection: PROTECTION,
    tags: TAGS,
  },
  ['name'],
);

/** A project spec: what export writes and apply takes. Unknown fields anywhere are rejected. */
const PROJECT_SPEC = closed(
  {
    kind: { const: SPEC_KIND },
    version: { const: SPEC_VERSION, description: 'The spec format version.' },
    agents: { type: 'array', maxItems: SPEC_LIMITS.items, items: AGENT },
    knowledge: { type: 'array', maxItems: SPEC_LIMITS.items, items: closed(KNOWLEDGE_FIELDS, ['name']), description: 'Knowledge base definitions (not their documents).' },
    schemas: { type: 'array', maxItems: SCHEMA_LIMITS.schemasPerProject, items: RECORD_SCHEMA },
    indexes: { type: 'array', maxItems: SPEC_LIMITS.items, items: INDEX, description: 'Index definitions (not their vectors).' },
  },
  ['kind', 'version'],
);

const CHANGE = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['agent', 'tool', 'rule', 'knowledge', 'schema', 'index'] },
    name: { type: 'string', description: 'Tools are agent/tool, rules agent/condition.' },
    action: { type: 'string', enum: ['create', 'update', 'delete', 'unchanged', 'conflict'] },
    detail: { type: 'string' },
  },
} as const;

const APPLY_RESULT = {
  type: 'object',
  properties: { dry_run: { type: 'boolean' }, changes: { type: 'array', items: CHANGE } },
} as const;

/** `/v1/project/export` and `/v1/project/apply`: a project's whole configuration as one document. */
export function projectRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const specs = runtime.projectSpecs;

  const exportSpec: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: '/v1/project/export',
    operationId: 'exportProject',
    summary:
      'The calling project’s configuration as a spec: agents with tools (secret_ref names only, never values) and rules, knowledge base definitions, record schemas with every version, index definitions. No ids, timestamps, documents, records or vectors; lists ordered by name (rules in the order they run), so equal projects export equal documents.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The spec', schema: PROJECT_SPEC } },
    async handler(ctx) {
      ctx.body = await specs.export(projectOf(ctx));
    },
  };

  const apply: RouteSpec<{ spec: ProjectSpec; dry_run?: boolean }, Record<string, never>> = {
    method: 'post',
    path: '/v1/project/apply',
    operationId: 'applyProject',
    summary:
      'Make the project match a spec: knowledge bases, then schemas, indexes and agents are created or updated; an agent’s tools and rules are made exactly the spec’s. Nothing the spec does not name is deleted. The whole spec is checked first (400 invalid_spec, nothing changed); what cannot be reconciled (a base with other settings, a schema whose history diverges, an index of another dimension) is reported as a conflict and left alone. dry_run: true only reports.',
    tag: TAG,
    auth: 'token',
    body: closed({ spec: PROJECT_SPEC, dry_run: { type: 'boolean', description: 'Report the changes without making them. Default false.' } }, ['spec']),
    responses: {
      200: { description: 'The changes, in the order they were (or would be) made', schema: APPLY_RESULT },
      400: { description: 'The spec is malformed or cannot be applied (every problem listed); nothing was changed', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const result: ApplyResult = await specs.apply(projectOf(ctx), ctx.state.body.spec, ctx.state.body.dry_run === true);
      ctx.body = result;
    },
  };

  return [exportSpec, apply] as Array<RouteSpec<never, never>>;
}
