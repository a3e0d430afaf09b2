import { isDeepStrictEqual } from 'node:util';
import type { Metric } from '../../contracts/vector-store.js';
import type { JsonSchema } from '../../lib/validation.js';
import {
  checkToolTarget,
  DEFAULT_AGENT_MODEL,
  DEFAULT_FALLBACK,
  DEFAULT_TOOL_POLICY,
  side,
  type AgentInput,
  type AgentView,
  type RuleType,
  type RuleView,
  type ToolInput,
} from '../agents/agents.js';
import type { McpServerDefinition } from '../agents/mcp-client.js';
import { checkMcpTarget, type McpServerInput } from '../agents/mcp-servers.js';
import type { ToolDefinition } from '../agents/tool-runner.js';
import { DEFAULT_EMBED_MODEL, DEFAULT_LANGUAGE_MODEL } from '../../providers/registry.js';
import type { DeletionProtection, IndexView } from '../indexes.js';
import { chunking, type CreateKnowledgeInput, type KnowledgeBaseView } from '../knowledge/knowledge.js';
import { defaultEmbedTemplate, type RecordJsonSchema, type RecordSchemaView, type Retention } from '../schemas.js';

/*
 * The project spec: a project's configuration as one JSON document, without ids, timestamps,
 * data or secret values. Everything here is pure: the spec as sent (fields optional, defaults
 * as the API's), its canonical form (every field explicit, lists in a fixed order — what export
 * writes), and the conversions between them and the domain views.
 */

export const SPEC_KIND = 'cairn.project';
export const SPEC_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// The spec as sent

export interface ToolSpec extends ToolInput {
  name: string;
  http: { url: string; method?: string };
}

export interface RuleSpec {
  rule_type: RuleType;
  condition: string;
  action?: string;
  priority?: number;
}

export interface McpServerSpec extends McpServerInput {
  name: string;
  url: string;
}

export interface AgentSpec extends Omit<AgentInput, 'name'> {
  name: string;
  tools?: ToolSpec[];
  mcp_servers?: McpServerSpec[];
  rules?: RuleSpec[];
}

export type KnowledgeSpec = CreateKnowledgeInput;

export interface SchemaVersionSpec {
  json_schema: Record<string, unknown>;
  /** Omitted or null: the default template. */
  embed_template?: string | null;
  retention?: Retention | null;
  description?: string | null;
}

export interface SchemaSpec {
  name: string;
  /** Every version, oldest first. */
  versions: SchemaVersionSpec[];
}

export interface IndexSpec {
  name: string;
  dimension?: number;
  metric?: Metric;
  embed?: { model: string; field_map?: { text: string } };
  deletion_protection?: DeletionProtection | boolean;
  tags?: Record<string, string>;
}

/** Project settings in a spec; a field left out is its default. */
export interface SettingsSpec {
  /** null or left out: the server's MEMORY_EMBED_MODEL. */
  memory_embed_model?: string | null;
}

/** A project spec as `POST /v1/project/apply` takes it. */
export interface ProjectSpec {
  kind: typeof SPEC_KIND;
  version: typeof SPEC_VERSION;
  agents?: AgentSpec[];
  knowledge?: KnowledgeSpec[];
  schemas?: SchemaSpec[];
  indexes?: IndexSpec[];
  /** Left out: the project's settings stay as they are. */
  settings?: SettingsSpec;
}

// ---------------------------------------------------------------------------------------------
// The canonical form

export interface CanonicalTool {
  name: string;
  description: string;
  http: { url: string; method: string };
  parameters: JsonSchema;
  auth_header: string;
  /** The secret's name; its value never leaves the project. */
  secret_ref: string | null;
  rate_per_min: number;
  /** Present only when the hosts were set explicitly; otherwise the host of `http.url`. */
  allowed_hosts?: string[];
}

export interface CanonicalMcpServer {
  name: string;
  url: string;
  auth_header: string;
  /** The secret's name; its value never leaves the project. */
  secret_ref: string | null;
  tools: string[] | null;
  rate_per_min: number;
  /** Present only when the hosts were set explicitly; otherwise the host of `url`. */
  allowed_hosts?: string[];
}

export interface CanonicalRule {
  rule_type: RuleType;
  condition: string;
  action: string;
  priority: number;
}

/** The agent fields apply compares and PATCHes. */
export const AGENT_SETTINGS = ['instructions', 'model', 'fallback_message', 'ui_actions', 'guardrails', 'tool_policy', 'flow', 'stream_mode', 'knowledge'] as const;

/**
 * An agent as the spec holds it: its view without ids and dates, tools, rules and MCP servers in
 * spec form. `mcp_servers` is there only when the agent has some, so agents without keep the
 * document they always had.
 */
export type CanonicalAgent = Omit<AgentView, 'id' | 'created_at' | 'updated_at' | 'tools' | 'rules' | 'mcp_servers'> & {
  tools: CanonicalTool[];
  mcp_servers?: CanonicalMcpServer[];
  rules: CanonicalRule[];
};

/** A knowledge base's definition: its view without ids, dates and documents. */
export type CanonicalKnowledge = Omit<KnowledgeBaseView, 'id' | 'document_count' | 'created_at' | 'updated_at'>;

export interface CanonicalSchemaVersion {
  json_schema: RecordJsonSchema;
  /** null: the default template (one `field: {{field}}` line per property). */
  embed_template: string | null;
  retention: Retention | null;
  description: string | null;
}

export interface CanonicalSchema {
  name: string;
  versions: CanonicalSchemaVersion[];
}

/** Raw indexes carry `dimension`, managed ones `embed`; never both. */
export interface CanonicalIndex {
  name: string;
  dimension?: number;
  embed?: { model: string; field_map: { text: string } };
  metric: Metric;
  deletion_protection: DeletionProtection;
  tags: Record<string, string>;
}

/** What `GET /v1/project/export` answers: a spec with every field explicit, in a fixed order. */
export interface ProjectDocument {
  kind: typeof SPEC_KIND;
  version: typeof SPEC_VERSION;
  agents: CanonicalAgent[];
  knowledge: CanonicalKnowledge[];
  schemas: CanonicalSchema[];
  indexes: CanonicalIndex[];
  settings: CanonicalSettings;
}

/** The project's settings, every one written out. */
export interface CanonicalSettings {
  memory_embed_model: string | null;
}

/** Canonical model names, as the services store them (throwing 400 for unusable ones). */
export interface ModelNames {
  chat(name: string): string;
  knowledge(name: string): string;
  embed(name: string): string;
}

// ---------------------------------------------------------------------------------------------
// Ordering and comparison

/** Code-unit order: the same on every machine, unlike localeCompare. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const byName = <T extends { name: string }>(a: T, b: T): number => compareText(a.name, b.name);

/** Rules in the order they run: priority high to low, then condition, action and type. */
export const ruleOrder = (a: CanonicalRule, b: CanonicalRule): number =>
  b.priority - a.priority || compareText(a.condition, b.condition) || compareText(a.action, b.action) || compareText(a.rule_type, b.rule_type);

/** Whether two JSON values are equal (object key order aside). */
export const sameJson = (a: unknown, b: unknown): boolean => isDeepStrictEqual(a, b);

/** The keys whose values differ between `a` and `b`, in the order given. */
export function changedKeys<T extends object>(a: T, b: T, keys: readonly (keyof T)[]): Array<keyof T> {
  return keys.filter((key) => !sameJson(a[key], b[key]));
}

// ---------------------------------------------------------------------------------------------
// From the domain views (export)

export function toolOf(tool: ToolDefinition): CanonicalTool {
  return {
    name: tool.name,
    description: tool.description,
    http: { url: tool.http_url, method: tool.http_method },
    parameters: tool.parameters,
    auth_header: tool.auth_header,
    secret_ref: tool.secret_ref,
    rate_per_min: tool.rate_per_min,
    ...(tool.hosts_explicit ? { allowed_hosts: tool.allowed_hosts } : {}),
  };
}

export function mcpServerOf(server: McpServerDefinition): CanonicalMcpServer {
  return {
    name: server.name,
    url: server.url,
    auth_header: server.auth_header,
    secret_ref: server.secret_ref,
    tools: server.tools,
    rate_per_min: server.rate_per_min,
    ...(server.hosts_explicit ? { allowed_hosts: server.allowed_hosts } : {}),
  };
}

export const ruleOf = (rule: Pick<RuleView, 'rule_type' | 'condition' | 'action' | 'priority'>): CanonicalRule => ({
  rule_type: rule.rule_type,
  condition: rule.condition,
  action: rule.action,
  priority: rule.priority,
});

export function agentOf(view: AgentView, tools: ToolDefinition[], servers: McpServerDefinition[] = []): CanonicalAgent {
  return {
    name: view.name,
    instructions: view.instructions,
    model: view.model,
    fallback_message: view.fallback_message,
    ui_actions: view.ui_actions,
    guardrails: view.guardrails,
    tool_policy: view.tool_policy,
    flow: view.flow,
    stream_mode: view.stream_mode,
    knowledge: view.knowledge,
    tools: tools.map(toolOf).sort(byName),
    ...(servers.length > 0 ? { mcp_servers: servers.map(mcpServerOf).sort(byName) } : {}),
    rules: view.rules.map(ruleOf).sort(ruleOrder),
  };
}

export const knowledgeOf = (view: KnowledgeBaseView): CanonicalKnowledge => ({
  name: view.name,
  instructions: view.instructions,
  model: view.model,
  embed_model: view.embed_model,
  chunk_size: view.chunk_size,
  chunk_overlap: view.chunk_overlap,
});

/** A stored version; a template equal to the default is the default (null). */
export const schemaVersionOf = (view: RecordSchemaView): CanonicalSchemaVersion => ({
  json_schema: view.json_schema,
  embed_template: view.embed_template === defaultEmbedTemplate(view.json_schema) ? null : view.embed_template,
  retention: view.retention,
  description: view.description,
});

export function indexOf(view: IndexView): CanonicalIndex {
  const kind = view.embed_model === null ? { dimension: view.dimension } : { embed: { model: view.embed_model, field_map: view.field_map ?? { text: 'text' } } };
  return { name: view.name, ...kind, metric: view.metric, deletion_protection: view.deletion_protection, tags: view.tags };
}

// ---------------------------------------------------------------------------------------------
// From the spec (apply): defaults filled in as the services fill them. Each may throw 400.

export function canonicalTool(spec: ToolSpec): CanonicalTool {
  const parameters = spec.parameters ?? { type: 'object', properties: {} };
  const target = checkToolTarget(spec, { http_url: '', http_method: 'GET', parameters: JSON.stringify(parameters), allowed_hosts: '[]', hosts_explicit: false });
  return {
    name: spec.name,
    description: spec.description ?? '',
    http: { url: target.http_url, method: target.http_method },
    parameters,
    auth_header: spec.auth_header ?? 'Authorization',
    secret_ref: spec.secret_ref ?? null,
    rate_per_min: spec.rate_per_min ?? 60,
    ...(target.hosts_explicit ? { allowed_hosts: JSON.parse(target.allowed_hosts) as string[] } : {}),
  };
}

export function canonicalMcpServer(spec: McpServerSpec): CanonicalMcpServer {
  const target = checkMcpTarget(spec, { url: '', allowed_hosts: '[]', hosts_explicit: false });
  return {
    name: spec.name,
    url: target.url,
    auth_header: spec.auth_header ?? 'Authorization',
    secret_ref: spec.secret_ref ?? null,
    tools: spec.tools === undefined || spec.tools === null ? null : [...new Set(spec.tools)],
    rate_per_min: spec.rate_per_min ?? 60,
    ...(target.hosts_explicit ? { allowed_hosts: JSON.parse(target.allowed_hosts) as string[] } : {}),
  };
}

export const canonicalRule = (spec: RuleSpec): CanonicalRule => ({
  rule_type: spec.rule_type,
  condition: spec.condition,
  action: spec.action ?? '',
  priority: spec.priority ?? 0,
});

/** An agent's settings with defaults; tools and rules are left to the caller (they are checked one by one). */
export function canonicalAgentSettings(spec: AgentSpec, models: ModelNames): Omit<CanonicalAgent, 'tools' | 'rules' | 'mcp_servers'> {
  const guardrails = spec.guardrails ?? {};
  return {
    name: spec.name,
    instructions: spec.instructions ?? '',
    model: models.chat(spec.model ?? DEFAULT_AGENT_MODEL),
    fallback_message: spec.fallback_message ?? DEFAULT_FALLBACK,
    ui_actions: [...new Set(spec.ui_actions ?? [])],
    guardrails: { version: guardrails.version ?? '1', input: side(guardrails.input), output: side(guardrails.output) },
    tool_policy: { ...DEFAULT_TOOL_POLICY, ...(spec.tool_policy ?? {}) },
    flow: spec.flow ? { version: spec.flow.version ?? '1', start: spec.flow.start, nodes: spec.flow.nodes } : null,
    stream_mode: spec.stream_mode ?? 'buffered',
    knowledge: [...new Set(spec.knowledge ?? [])],
  };
}

export function canonicalKnowledge(spec: KnowledgeSpec, models: ModelNames): CanonicalKnowledge {
  return {
    name: spec.name,
    instructions: spec.instructions ?? '',
    model: models.knowledge(spec.model ?? DEFAULT_LANGUAGE_MODEL),
    embed_model: models.embed(spec.embed_model ?? DEFAULT_EMBED_MODEL),
    ...chunking(spec),
  };
}

/** A version as it will be stored; the caller checks the definition (`assertDefinition`). */
export function canonicalSchemaVersion(spec: SchemaVersionSpec): CanonicalSchemaVersion {
  const jsonSchema = spec.json_schema as unknown as RecordJsonSchema;
  const template = spec.embed_template ?? null;
  return {
    json_schema: jsonSchema,
    embed_template: template !== null && template === defaultEmbedTemplate(jsonSchema) ? null : template,
    retention: spec.retention ?? null,
    description: spec.description ?? null,
  };
}

export function canonicalIndex(spec: IndexSpec, models: ModelNames): CanonicalIndex {
  const kind = spec.embed
    ? { embed: { model: models.embed(spec.embed.model), field_map: spec.embed.field_map ?? { text: 'text' } } }
    : { dimension: spec.dimension as number };
  const protection = spec.deletion_protection === true || spec.deletion_protection === 'enabled' ? 'enabled' : 'disabled';
  return { name: spec.name, ...kind, metric: spec.metric ?? 'cosine', deletion_protection: protection, tags: spec.tags ?? {} };
}

// ---------------------------------------------------------------------------------------------
// Reconciling rules (they have ids, not names)

export interface RuleMatch<Id> {
  unchanged: Array<{ id: Id; rule: CanonicalRule }>;
  update: Array<{ id: Id; from: CanonicalRule; to: CanonicalRule }>;
  create: CanonicalRule[];
  delete: Array<{ id: Id; rule: CanonicalRule }>;
}

/**
 * Pairs an agent's rules with the spec's: equal rules are unchanged; a spec rule with the same
 * condition as a leftover rule (the same type first) updates it; the rest are created or deleted.
 * Repeated rules count as many times as they appear.
 */
export function matchRules<Id>(existing: Array<{ id: Id; rule: CanonicalRule }>, desired: CanonicalRule[]): RuleMatch<Id> {
  const left = [...existing];
  const take = (test: (rule: CanonicalRule) => boolean) => {
    const at = left.findIndex((e) => test(e.rule));
    return at === -1 ? undefined : left.splice(at, 1)[0];
  };
  const result: RuleMatch<Id> = { unchanged: [], update: [], create: [], delete: [] };
  const rest: CanonicalRule[] = [];
  for (const rule of desired) {
    const same = take((r) => sameJson(r, rule));
    if (same) result.unchanged.push(same);
    else rest.push(rule);
  }
  // pair a changed rule with the one it most likely was: same condition and type, then same condition
  const pairings = [(a: CanonicalRule, b: CanonicalRule) => a.condition === b.condition && a.rule_type === b.rule_type, (a: CanonicalRule, b: CanonicalRule) => a.condition === b.condition];
  let unpaired = rest;
  for (const pairs of pairings) {
    unpaired = unpaired.filter((rule) => {
      const paired = take((r) => pairs(r, rule));
      if (paired) result.update.push({ id: paired.id, from: paired.rule, to: rule });
      return paired === undefined;
    });
  }
  result.create = unpaired;
  result.delete = left;
  return result;
}
