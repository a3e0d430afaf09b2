import type { AgentRow, AgentsRepository, McpServerRow, RuleRow, ToolRow } from '../../db/repositories/agents.repository.js';
import { isUniqueViolation } from '../../db/repositories/indexes.repository.js';
import { badRequest, conflict, notFound, type FieldError } from '../../lib/errors.js';
import { newId, nowMs } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import type { ConfigCache } from '../config-cache.js';
import type { Knowledge } from '../knowledge/knowledge.js';
import type { Schemas } from '../schemas.js';
import { targetUrlProblems } from '../outbound/outbound.js';
import type { Secrets } from '../secrets.js';
import { compileCondition, compileValue } from './conditions.js';
import { GUARDRAIL_CHECKS, type GuardrailSide } from './guardrails.js';
import type { LanguageModels } from '../../providers/registry.js';
import type { McpServerDefinition } from './mcp-client.js';
import { checkMcpTarget, hostListed, mcpServerDefinition, mcpServerView, targetHosts, type McpServerInput, type McpServerView } from './mcp-servers.js';
import type { ToolDefinition } from './tool-runner.js';

/** The model an agent uses when none is named: the deterministic offline one. */
export const DEFAULT_AGENT_MODEL = 'local';
export const DEFAULT_FALLBACK = "Sorry, I don't have an answer to that.";
/** `stream_mode` values: the whole response at once, or server-sent events. */
export const STREAM_MODES = ['buffered', 'sse'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
/** `ui_actions` an agent or a rule may ask the client to show. */
export const UI_ACTIONS = ['SHOW_FEEDBACK_FORM', 'SHOW_CONTACT_FORM', 'HANDOFF_TO_HUMAN', 'SHOW_RATING', 'SHOW_SOURCES'] as const;
export const RULE_TYPES = ['escalation', 'response', 'ui_action', 'block'] as const;
export type RuleType = (typeof RULE_TYPES)[number];
export const FLOW_NODE_TYPES = ['retrieve', 'llm', 'tool', 'condition', 'respond', 'escalate', 'extract'] as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Most nodes a flow may have, and most steps one turn of a flow may take. */
export const FLOW_LIMITS = { nodes: 50, steps: 32 } as const;
/** Most tools, rules and MCP servers per agent. */
export const AGENT_LIMITS = { tools: 64, rules: 100, mcpServers: 16 } as const;

export interface GuardrailsConfig {
  version: string;
  input: GuardrailSide;
  output: GuardrailSide;
}

export interface ToolPolicy {
  version: string;
  /** A hard cap on tool calls in one turn. */
  maxCallsPerTurn: number;
  /** Tool names the model is offered; `*` is all. */
  allow: string[];
}

/** One node of a flow; which fields apply depends on `type`. */
export interface FlowNode {
  type: (typeof FLOW_NODE_TYPES)[number];
  next?: string;
  /** retrieve: bases to search (default: the agent's); top_k (default 5). */
  knowledge?: string[];
  top_k?: number;
  /** llm: extra instructions for this step; whether to offer the agent's tools (default true). */
  instructions?: string;
  tools?: boolean;
  /** tool: the tool's name, and CEL expressions giving its arguments (else the model reads them). */
  tool?: string;
  arguments?: Record<string, string>;
  /** condition */
  if?: string;
  then?: string;
  else?: string;
  /** respond / escalate: the text (respond without text answers with the last model answer). */
  text?: string;
  /** extract: the record schema to store from the conversation. */
  schema?: string;
}

export interface Flow {
  version: string;
  start: string;
  nodes: Record<string, FlowNode>;
}

/** A flow as it is sent: without a version it is version "1". */
export type FlowInput = Omit<Flow, 'version'> & { version?: string };

/** A tool as the API shows it: what the runner uses, but whether its hosts were listed, plus dates. */
export type ToolView = Omit<ToolDefinition, 'hosts_explicit'> & { created_at: number; updated_at: number };

export interface RuleView {
  id: string;
  rule_type: RuleType;
  condition: string;
  action: string;
  priority: number;
  created_at: number;
  updated_at: number;
}

export interface AgentView {
  id: string;
  name: string;
  instructions: string;
  model: string;
  fallback_message: string;
  ui_actions: string[];
  guardrails: GuardrailsConfig;
  tool_policy: ToolPolicy;
  flow: Flow | null;
  stream_mode: StreamMode;
  knowledge: string[];
  tools: ToolView[];
  mcp_servers: McpServerView[];
  rules: RuleView[];
  created_at: number;
  updated_at: number;
}

/** An agent as a chat turn needs it: its view, and its tools and MCP servers as the clients take them. */
export interface LoadedAgent {
  view: AgentView;
  projectId: string;
  tools: ToolDefinition[];
  mcpServers: McpServerDefinition[];
}

/** Settable agent fields (create and PATCH); guardrail sides may be partial. */
export interface AgentInput {
  name?: string;
  instructions?: string;
  model?: string;
  fallback_message?: string;
  ui_actions?: string[];
  guardrails?: { version?: string; input?: Partial<GuardrailSide>; output?: Partial<GuardrailSide> };
  tool_policy?: Partial<ToolPolicy>;
  flow?: FlowInput | null;
  stream_mode?: StreamMode;
  knowledge?: string[];
}

export interface ToolInput {
  name?: string;
  description?: string;
  http?: { url: string; method?: string };
  parameters?: JsonSchema;
  auth_header?: string;
  secret_ref?: string | null;
  rate_per_min?: number;
  allowed_hosts?: string[];
}

export interface RuleInput {
  rule_type?: RuleType;
  condition?: string;
  action?: string;
  priority?: number;
}

const GUARDRAIL_SIDE_DEFAULT: GuardrailSide = { enabled: false, failOpen: false, checks: [...GUARDRAIL_CHECKS], riskThreshold: 0.5 };
/** The tool policy of an agent that sets none; a partial policy is merged over it. */
export const DEFAULT_TOOL_POLICY: ToolPolicy = { version: '1', maxCallsPerTurn: 5, allow: ['*'] };

/** A guardrail side with defaults filled in: a side that is sent is enabled unless it says otherwise. */
export function side(given: Partial<GuardrailSide> | undefined): GuardrailSide {
  if (given === undefined) return { ...GUARDRAIL_SIDE_DEFAULT };
  return {
    enabled: given.enabled ?? true,
    failOpen: given.failOpen ?? false,
    checks: given.checks !== undefined ? [...new Set(given.checks)] : [...GUARDRAIL_CHECKS],
    riskThreshold: given.riskThreshold ?? 0.5,
  };
}

const json = (value: unknown): string => JSON.stringify(value);
const parse = <T>(text: string): T => JSON.parse(text) as T;

/** The fields a tool's view and its runner definition share. */
function toolFields(row: ToolRow): Omit<ToolDefinition, 'hosts_explicit'> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    http_url: row.http_url,
    http_method: row.http_method,
    parameters: parse<JsonSchema>(row.parameters),
    auth_header: row.auth_header,
    secret_ref: row.secret_ref,
    rate_per_min: row.rate_per_min,
    allowed_hosts: parse<string[]>(row.allowed_hosts),
  };
}

function toolView(row: ToolRow): ToolView {
  return { ...toolFields(row), created_at: Number(row.created_at), updated_at: Number(row.updated_at) };
}

function toolDefinition(row: ToolRow): ToolDefinition {
  return { ...toolFields(row), hosts_explicit: Boolean(row.hosts_explicit) };
}

function ruleView(row: RuleRow): RuleView {
  return {
    id: row.id,
    rule_type: row.rule_type as RuleType,
    condition: row.condition,
    action: row.action,
    priority: row.priority,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

function agentView(row: AgentRow, tools: ToolRow[], rules: RuleRow[], servers: McpServerRow[]): AgentView {
  return {
    id: row.id,
    name: row.name,
    instructions: row.instructions,
    model: row.model,
    fallback_message: row.fallback_message,
    ui_actions: parse<string[]>(row.ui_actions),
    guardrails: parse<GuardrailsConfig>(row.guardrails),
    tool_policy: parse<ToolPolicy>(row.tool_policy),
    flow: row.flow === null ? null : parse<Flow>(row.flow),
    stream_mode: row.stream_mode as StreamMode,
    knowledge: parse<string[]>(row.knowledge),
    tools: tools.map(toolView),
    mcp_servers: servers.map(mcpServerView),
    rules: rules.map(ruleView),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** The hostname of a URL as allow-lists compare it: lower-case, IPv6 without brackets. */
export function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
}

/** Path `{param}` placeholders of a tool URL. */
function pathParams(url: string): string[] {
  return [...url.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
}

/** What a flow's nodes may refer to; a set left out is not checked. */
export interface FlowReferences {
  knowledge?: ReadonlySet<string>;
  schemas?: ReadonlySet<string>;
  tools?: ReadonlySet<string>;
  /** Names of the agent's MCP servers: a tool node may name `<server>__<tool>` of one of them. */
  mcpServers?: ReadonlySet<string>;
}

/** Whether `tool` is a namespaced `<server>__<tool>` name of one of `servers`. */
function mcpToolOf(tool: string, servers: ReadonlySet<string> | undefined): boolean {
  return [...(servers ?? [])].some((server) => tool.startsWith(`${server}__`) && tool.length > server.length + 2);
}

/** The knowledge bases and record schemas a flow's nodes name. */
export function flowReferences(flow: FlowInput): { knowledge: string[]; schemas: string[] } {
  const nodes = Object.values(flow.nodes);
  return {
    knowledge: [...new Set(nodes.flatMap((n) => (n.type === 'retrieve' ? (n.knowledge ?? []) : [])))],
    schemas: [...new Set(nodes.flatMap((n) => (n.type === 'extract' && n.schema !== undefined ? [n.schema] : [])))],
  };
}

/**
 * Checks a flow: the start and every `next`/`then`/`else` name a node, each node has the fields
 * its type needs, and its CEL compiles; with `known`, the knowledge bases, record schemas and
 * tools its nodes name exist. Every problem is listed in one 400.
 */
export function validateFlow(flow: FlowInput, known: FlowReferences = {}): void {
  const problems: FieldError[] = [];
  const ids = Object.keys(flow.nodes);
  if (ids.length > FLOW_LIMITS.nodes) problems.push({ path: '/flow/nodes', message: `at most ${FLOW_LIMITS.nodes} nodes` });
  if (!(flow.start in flow.nodes)) problems.push({ path: '/flow/start', message: `"${flow.start}" is not a node of the flow` });
  const ref = (path: string, target: string | undefined) => {
    if (target !== undefined && !(target in flow.nodes)) problems.push({ path, message: `"${target}" is not a node of the flow` });
  };
  for (const [id, node] of Object.entries(flow.nodes)) {
    const at = `/flow/nodes/${id}`;
    ref(`${at}/next`, node.next);
    const need = (field: keyof FlowNode) => {
      if (node[field] === undefined) problems.push({ path: `${at}/${field}`, message: `a ${node.type} node needs ${field}` });
    };
    try {
      switch (node.type) {
        case 'condition':
          need('if');
          need('then');
          need('else');
          ref(`${at}/then`, node.then);
          ref(`${at}/else`, node.else);
          if (node.if !== undefined) compileCondition(node.if, 'flow', `${at}/if`);
          break;
        case 'retrieve':
          (node.knowledge ?? []).forEach((kb, i) => {
            if (known.knowledge && !known.knowledge.has(kb)) problems.push({ path: `${at}/knowledge/${i}`, message: `names no knowledge base of this project ("${kb}")` });
          });
          break;
        case 'tool':
          need('tool');
          if (node.tool !== undefined && known.tools && !known.tools.has(node.tool) && !mcpToolOf(node.tool, known.mcpServers)) problems.push({ path: `${at}/tool`, message: `names no tool of this agent ("${node.tool}")` });
          for (const [arg, expression] of Object.entries(node.arguments ?? {})) compileValue(expression, `${at}/arguments/${arg}`);
          break;
        case 'extract':
          need('schema');
          if (node.schema !== undefined && known.schemas && !known.schemas.has(node.schema)) problems.push({ path: `${at}/schema`, message: `names no record schema of this project ("${node.schema}")` });
          break;
        default:
          break;
      }
    } catch (err) {
      const fieldErrors = (err as { errors?: FieldError[] }).errors;
      if (fieldErrors) problems.push(...fieldErrors);
      else throw err;
    }
  }
  if (problems.length > 0) throw badRequest('invalid_flow', `The flow is not valid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}.`, problems);
}

/** The stored fields of a tool's target (URL, method, hosts). */
export type ToolTarget = Pick<ToolRow, 'http_url' | 'http_method' | 'allowed_hosts' | 'hosts_explicit'>;

/**
 * URL, method and hosts of a tool, `input` over `current`, checked: an http(s) URL without
 * credentials, a known method, path parameters declared, the host allowed. Throws 400 listing all.
 */
export function checkToolTarget(input: ToolInput, current: ToolTarget & Pick<ToolRow, 'parameters'>): ToolTarget {
  const url = input.http?.url ?? current.http_url;
  const method = (input.http?.method ?? (input.http ? 'GET' : current.http_method)).toUpperCase();
  const problems: FieldError[] = [];
  let host = '';
  try {
    const parsed = new URL(url.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, 'x'));
    for (const message of targetUrlProblems(parsed)) problems.push({ path: '/http/url', message });
    host = hostOf(parsed.href);
  } catch {
    problems.push({ path: '/http/url', message: 'must be an absolute http or https URL' });
  }
  if (!(HTTP_METHODS as readonly string[]).includes(method)) problems.push({ path: '/http/method', message: `must be one of ${HTTP_METHODS.join(', ')}` });
  const parameters = parse<{ properties?: Record<string, unknown> }>(current.parameters);
  for (const param of pathParams(url)) {
    if (!(param in (parameters.properties ?? {}))) problems.push({ path: '/http/url', message: `{${param}} is not one of the tool's parameters` });
  }
  const { hosts, explicit } = targetHosts(input.allowed_hosts, input.http !== undefined, current, host);
  if (host !== '' && !hostListed(hosts, host)) {
    problems.push({ path: '/allowed_hosts', message: `must include the host of http.url (${host})` });
  }
  if (problems.length > 0) throw badRequest('validation_failed', `The tool is not valid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}.`, problems);
  return { http_url: url, http_method: method, allowed_hosts: json(hosts), hosts_explicit: explicit };
}

/** Checks a rule's action against its type: a known UI action, or non-empty text. Throws 400. */
export function checkRuleAction(type: RuleType, action: string): void {
  if (type === 'ui_action' && !(UI_ACTIONS as readonly string[]).includes(action)) {
    throw badRequest('validation_failed', `A ui_action rule's action names a UI action, one of ${UI_ACTIONS.join(', ')}.`, [{ path: '/action', message: `must be one of ${UI_ACTIONS.join(', ')}` }]);
  }
  if (type !== 'ui_action' && action.trim() === '') {
    const what = { escalation: 'the message shown when escalating', response: 'the fixed answer', block: 'the refusal shown', ui_action: '' }[type];
    throw badRequest('validation_failed', `A ${type} rule's action is ${what}; it must not be empty.`, [{ path: '/action', message: 'must not be empty' }]);
  }
}

/**
 * Agents and what hangs off them: tools, rules and attached knowledge. Every operation is
 * scoped to a project; names are unique per project (agents) and per agent (tools). An agent
 * is read (with its tools and rules) from the project's configuration cache; every write goes
 * through `ConfigCache.write`, so the next read on any process sees it.
 */
export class Agents {
  constructor(
    private readonly rows: AgentsRepository,
    private readonly knowledge: Knowledge,
    private readonly secrets: Secrets,
    private readonly models: LanguageModels,
    private readonly schemas: Schemas,
    private readonly cache: ConfigCache,
  ) {}

  async create(projectId: string, input: AgentInput & { name: string }): Promise<AgentView> {
    return this.cache.write(projectId, () => this.insert(projectId, input));
  }

  private async insert(projectId: string, input: AgentInput & { name: string }): Promise<AgentView> {
    const now = nowMs();
    const row: AgentRow = {
      id: newId(),
      project_id: projectId,
      name: input.name,
      instructions: input.instructions ?? '',
      model: this.models.validate(input.model ?? DEFAULT_AGENT_MODEL),
      fallback_message: input.fallback_message ?? DEFAULT_FALLBACK,
      ui_actions: json([...new Set(input.ui_actions ?? [])]),
      guardrails: json(this.guardrails(input.guardrails ?? {})),
      tool_policy: json({ ...DEFAULT_TOOL_POLICY, ...(input.tool_policy ?? {}) }),
      // A new agent has no tools yet: its tool nodes are checked when the flow is next set.
      flow: input.flow ? json(await this.flow(projectId, input.flow, null)) : null,
      stream_mode: input.stream_mode ?? 'buffered',
      knowledge: json(await this.knowledgeNames(projectId, input.knowledge ?? [])),
      created_at: now,
      updated_at: now,
    };
    try {
      await this.rows.insertAgent(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`An agent named "${input.name}" already exists in this project.`, 'agent_exists');
      throw err;
    }
    return agentView(row, [], [], []);
  }

  async get(projectId: string, name: string): Promise<AgentView> {
    return (await this.load(projectId, name)).view;
  }

  /** An agent for a chat turn: its view and its tools as the runner takes them (shared: do not change). */
  async load(projectId: string, name: string): Promise<LoadedAgent> {
    const loaded = await (await this.cache.at(projectId)).read(`agent:${name}`, () => this.loadRows(projectId, name));
    if (loaded === null) throw notFound(`There is no agent "${name}" in this project.`);
    return loaded;
  }

  /** An agent's id (404 when the project has no such agent). */
  async idOf(projectId: string, name: string): Promise<string> {
    return (await this.load(projectId, name)).view.id;
  }

  async list(projectId: string, limit: number, offset: number): Promise<AgentView[]> {
    const rows = await this.rows.listAgents(projectId, limit, offset);
    const ids = rows.map((r) => r.id);
    const [tools, rules, servers] = await Promise.all([this.rows.tools(projectId, ids), this.rows.rules(projectId, ids), this.rows.mcpServers(projectId, ids)]);
    return rows.map((r) =>
      agentView(
        r,
        tools.filter((t) => t.agent_id === r.id),
        rules.filter((u) => u.agent_id === r.id),
        servers.filter((m) => m.agent_id === r.id),
      ),
    );
  }

  /** Sets the given fields; each replaces the stored value whole. `{}` changes nothing. */
  async update(projectId: string, name: string, input: AgentInput): Promise<AgentView> {
    const renamed = await this.cache.write(projectId, () => this.change(projectId, name, input));
    return this.get(projectId, renamed);
  }

  /** Stores the changes of `update`; the agent's name after them. */
  private async change(projectId: string, name: string, input: AgentInput): Promise<string> {
    const row = await this.agent(projectId, name);
    const changes: Partial<AgentRow> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.instructions !== undefined) changes.instructions = input.instructions;
    if (input.model !== undefined) changes.model = this.models.validate(input.model);
    if (input.fallback_message !== undefined) changes.fallback_message = input.fallback_message;
    if (input.ui_actions !== undefined) changes.ui_actions = json([...new Set(input.ui_actions)]);
    if (input.guardrails !== undefined) changes.guardrails = json(this.guardrails(input.guardrails));
    if (input.tool_policy !== undefined) changes.tool_policy = json({ ...DEFAULT_TOOL_POLICY, ...input.tool_policy });
    if (input.flow !== undefined) changes.flow = input.flow === null ? null : json(await this.flow(projectId, input.flow, row.id));
    if (input.stream_mode !== undefined) changes.stream_mode = input.stream_mode;
    if (input.knowledge !== undefined) changes.knowledge = json(await this.knowledgeNames(projectId, input.knowledge));
    if (Object.keys(changes).length > 0) {
      changes.updated_at = nowMs();
      try {
        await this.rows.updateAgent(projectId, row.id, changes);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`An agent named "${input.name}" already exists in this project.`, 'agent_exists');
        throw err;
      }
    }
    return changes.name ?? name;
  }

  async delete(projectId: string, name: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.agent(projectId, name);
      await this.rows.deleteAgent(projectId, row.id);
    });
  }

  /** Attaches a knowledge base (404 when the project has none of that name); attaching twice is a no-op. */
  async attach(projectId: string, name: string, kb: string): Promise<string> {
    return this.cache.write(projectId, async () => {
      const row = await this.agent(projectId, name);
      await this.knowledgeNames(projectId, [kb]);
      const names = parse<string[]>(row.knowledge);
      if (!names.includes(kb)) {
        await this.rows.updateAgent(projectId, row.id, { knowledge: json([...names, kb]), updated_at: nowMs() });
      }
      return kb;
    });
  }

  async detach(projectId: string, name: string, kb: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.agent(projectId, name);
      const names = parse<string[]>(row.knowledge);
      if (!names.includes(kb)) throw notFound(`Knowledge base "${kb}" is not attached to agent "${name}".`);
      await this.rows.updateAgent(projectId, row.id, { knowledge: json(names.filter((n) => n !== kb)), updated_at: nowMs() });
    });
  }

  async addTool(projectId: string, agentName: string, input: ToolInput & { name: string; http: { url: string; method?: string } }): Promise<ToolView> {
    return this.cache.write(projectId, () => this.insertTool(projectId, agentName, input));
  }

  private async insertTool(projectId: string, agentName: string, input: ToolInput & { name: string; http: { url: string; method?: string } }): Promise<ToolView> {
    const agent = await this.agent(projectId, agentName);
    const existing = await this.rows.tools(projectId, [agent.id]);
    if (existing.length >= AGENT_LIMITS.tools) throw badRequest('limit_exceeded', `An agent has at most ${AGENT_LIMITS.tools} tools.`);
    const now = nowMs();
    const row: ToolRow = {
      id: newId(),
      project_id: projectId,
      agent_id: agent.id,
      name: input.name,
      description: input.description ?? '',
      http_url: '',
      http_method: 'GET',
      parameters: json(input.parameters ?? { type: 'object', properties: {} }),
      auth_header: input.auth_header ?? 'Authorization',
      secret_ref: input.secret_ref ?? null,
      rate_per_min: input.rate_per_min ?? 60,
      allowed_hosts: '[]',
      hosts_explicit: false,
      created_at: now,
      updated_at: now,
    };
    Object.assign(row, await this.toolTarget(projectId, input, row));
    try {
      await this.rows.insertTool(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`Agent "${agentName}" already has a tool named "${input.name}".`, 'tool_exists');
      throw err;
    }
    return toolView(row);
  }

  async listTools(projectId: string, agentName: string): Promise<ToolView[]> {
    return (await this.get(projectId, agentName)).tools;
  }

  async getTool(projectId: string, agentName: string, toolName: string): Promise<ToolView> {
    const tool = (await this.get(projectId, agentName)).tools.find((t) => t.name === toolName || t.id === toolName);
    if (!tool) throw notFound(`Agent "${agentName}" has no tool "${toolName}".`);
    return tool;
  }

  /** Changes the given fields of a tool; `http` replaces the target, and hosts default again to its host unless given. */
  async updateTool(projectId: string, agentName: string, toolName: string, input: ToolInput): Promise<ToolView> {
    return this.cache.write(projectId, () => this.changeTool(projectId, agentName, toolName, input));
  }

  private async changeTool(projectId: string, agentName: string, toolName: string, input: ToolInput): Promise<ToolView> {
    const row = await this.tool(projectId, agentName, toolName);
    const changes: Partial<ToolRow> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (input.parameters !== undefined) changes.parameters = json(input.parameters);
    if (input.auth_header !== undefined) changes.auth_header = input.auth_header;
    if (input.secret_ref !== undefined) changes.secret_ref = input.secret_ref;
    if (input.rate_per_min !== undefined) changes.rate_per_min = input.rate_per_min;
    if (input.http !== undefined || input.allowed_hosts !== undefined || input.secret_ref !== undefined || input.parameters !== undefined) {
      Object.assign(changes, await this.toolTarget(projectId, input, { ...row, ...changes }));
    }
    if (Object.keys(changes).length > 0) {
      changes.updated_at = nowMs();
      try {
        await this.rows.updateTool(projectId, row.id, changes);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`Agent "${agentName}" already has a tool named "${input.name}".`, 'tool_exists');
        throw err;
      }
    }
    return toolView({ ...row, ...changes });
  }

  async deleteTool(projectId: string, agentName: string, toolName: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.tool(projectId, agentName, toolName);
      await this.rows.deleteTool(projectId, row.id);
    });
  }

  async addMcpServer(projectId: string, agentName: string, input: McpServerInput & { name: string; url: string }): Promise<McpServerView> {
    return this.cache.write(projectId, () => this.insertMcpServer(projectId, agentName, input));
  }

  private async insertMcpServer(projectId: string, agentName: string, input: McpServerInput & { name: string; url: string }): Promise<McpServerView> {
    const agent = await this.agent(projectId, agentName);
    const existing = await this.rows.mcpServers(projectId, [agent.id]);
    if (existing.length >= AGENT_LIMITS.mcpServers) throw badRequest('limit_exceeded', `An agent has at most ${AGENT_LIMITS.mcpServers} MCP servers.`);
    const now = nowMs();
    const row: McpServerRow = {
      id: newId(),
      project_id: projectId,
      agent_id: agent.id,
      name: input.name,
      url: '',
      allowed_hosts: '[]',
      hosts_explicit: false,
      auth_header: input.auth_header ?? 'Authorization',
      secret_ref: input.secret_ref ?? null,
      tools: input.tools === undefined || input.tools === null ? null : json([...new Set(input.tools)]),
      rate_per_min: input.rate_per_min ?? 60,
      created_at: now,
      updated_at: now,
    };
    Object.assign(row, checkMcpTarget(input, row));
    await this.checkSecret(projectId, input.secret_ref);
    try {
      await this.rows.insertMcpServer(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`Agent "${agentName}" already has an MCP server named "${input.name}".`, 'mcp_server_exists');
      throw err;
    }
    return mcpServerView(row);
  }

  async listMcpServers(projectId: string, agentName: string): Promise<McpServerView[]> {
    return (await this.get(projectId, agentName)).mcp_servers;
  }

  async getMcpServer(projectId: string, agentName: string, serverName: string): Promise<McpServerView> {
    const server = (await this.get(projectId, agentName)).mcp_servers.find((m) => m.name === serverName || m.id === serverName);
    if (!server) throw notFound(`Agent "${agentName}" has no MCP server "${serverName}".`);
    return server;
  }

  /** Changes the given fields of a server; a new url without allowed_hosts resets them to its host. */
  async updateMcpServer(projectId: string, agentName: string, serverName: string, input: McpServerInput): Promise<McpServerView> {
    return this.cache.write(projectId, () => this.changeMcpServer(projectId, agentName, serverName, input));
  }

  private async changeMcpServer(projectId: string, agentName: string, serverName: string, input: McpServerInput): Promise<McpServerView> {
    const row = await this.mcpServer(projectId, agentName, serverName);
    const changes: Partial<McpServerRow> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.auth_header !== undefined) changes.auth_header = input.auth_header;
    if (input.secret_ref !== undefined) changes.secret_ref = input.secret_ref;
    if (input.tools !== undefined) changes.tools = input.tools === null ? null : json([...new Set(input.tools)]);
    if (input.rate_per_min !== undefined) changes.rate_per_min = input.rate_per_min;
    if (input.url !== undefined || input.allowed_hosts !== undefined) Object.assign(changes, checkMcpTarget(input, row));
    await this.checkSecret(projectId, input.secret_ref);
    if (Object.keys(changes).length > 0) {
      changes.updated_at = Math.max(nowMs(), Number(row.updated_at) + 1);
      try {
        await this.rows.updateMcpServer(projectId, row.id, changes);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`Agent "${agentName}" already has an MCP server named "${input.name}".`, 'mcp_server_exists');
        throw err;
      }
    }
    return mcpServerView({ ...row, ...changes });
  }

  async deleteMcpServer(projectId: string, agentName: string, serverName: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.mcpServer(projectId, agentName, serverName);
      await this.rows.deleteMcpServer(projectId, row.id);
    });
  }

  async addRule(projectId: string, agentName: string, input: RuleInput & { rule_type: RuleType; condition: string }): Promise<RuleView> {
    return this.cache.write(projectId, () => this.insertRule(projectId, agentName, input));
  }

  private async insertRule(projectId: string, agentName: string, input: RuleInput & { rule_type: RuleType; condition: string }): Promise<RuleView> {
    const agent = await this.agent(projectId, agentName);
    const existing = await this.rows.rules(projectId, [agent.id]);
    if (existing.length >= AGENT_LIMITS.rules) throw badRequest('limit_exceeded', `An agent has at most ${AGENT_LIMITS.rules} rules.`);
    compileCondition(input.condition, 'rule', '/condition');
    const action = input.action ?? '';
    checkRuleAction(input.rule_type, action);
    const now = nowMs();
    const row: RuleRow = {
      id: newId(),
      project_id: projectId,
      agent_id: agent.id,
      rule_type: input.rule_type,
      condition: input.condition,
      action,
      priority: input.priority ?? 0,
      created_at: now,
      updated_at: now,
    };
    await this.rows.insertRule(row);
    return ruleView(row);
  }

  async listRules(projectId: string, agentName: string): Promise<RuleView[]> {
    return (await this.get(projectId, agentName)).rules;
  }

  async getRule(projectId: string, agentName: string, id: string): Promise<RuleView> {
    const rule = (await this.get(projectId, agentName)).rules.find((r) => r.id === id);
    if (!rule) throw notFound(`Agent "${agentName}" has no rule "${id}".`);
    return rule;
  }

  async updateRule(projectId: string, agentName: string, id: string, input: RuleInput): Promise<RuleView> {
    return this.cache.write(projectId, async () => {
      const row = await this.rule(projectId, agentName, id);
      const merged = { ...row, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as RuleRow;
      if (input.condition !== undefined) compileCondition(input.condition, 'rule', '/condition');
      checkRuleAction(merged.rule_type as RuleType, merged.action);
      const changes: Partial<RuleRow> = { ...input, updated_at: nowMs() };
      await this.rows.updateRule(projectId, row.id, changes);
      return ruleView({ ...row, ...changes });
    });
  }

  async deleteRule(projectId: string, agentName: string, id: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.rule(projectId, agentName, id);
      await this.rows.deleteRule(projectId, row.id);
    });
  }

  /** An agent with its tools and rules, read from the database; null when the project has no such agent. */
  private async loadRows(projectId: string, name: string): Promise<LoadedAgent | null> {
    const row = await this.rows.findAgent(projectId, name);
    if (!row) return null;
    const [tools, rules, servers] = await Promise.all([this.rows.tools(projectId, [row.id]), this.rows.rules(projectId, [row.id]), this.rows.mcpServers(projectId, [row.id])]);
    return { view: agentView(row, tools, rules, servers), projectId, tools: tools.map(toolDefinition), mcpServers: servers.map(mcpServerDefinition) };
  }

  /** The stored row, read from the database (for writes, which must start from what is stored). */
  private async agent(projectId: string, name: string): Promise<AgentRow> {
    const row = await this.rows.findAgent(projectId, name);
    if (!row) throw notFound(`There is no agent "${name}" in this project.`);
    return row;
  }

  private async tool(projectId: string, agentName: string, toolName: string): Promise<ToolRow> {
    const agent = await this.agent(projectId, agentName);
    const row = (await this.rows.tools(projectId, [agent.id])).find((t) => t.name === toolName || t.id === toolName);
    if (!row) throw notFound(`Agent "${agentName}" has no tool "${toolName}".`);
    return row;
  }

  private async mcpServer(projectId: string, agentName: string, serverName: string): Promise<McpServerRow> {
    const agent = await this.agent(projectId, agentName);
    const row = (await this.rows.mcpServers(projectId, [agent.id])).find((m) => m.name === serverName || m.id === serverName);
    if (!row) throw notFound(`Agent "${agentName}" has no MCP server "${serverName}".`);
    return row;
  }

  private async rule(projectId: string, agentName: string, id: string): Promise<RuleRow> {
    const agent = await this.agent(projectId, agentName);
    const row = (await this.rows.rules(projectId, [agent.id])).find((r) => r.id === id);
    if (!row) throw notFound(`Agent "${agentName}" has no rule "${id}".`);
    return row;
  }

  private guardrails(input: NonNullable<AgentInput['guardrails']>): GuardrailsConfig {
    return { version: input.version ?? '1', input: side(input.input), output: side(input.output) };
  }

  /** A flow checked, its references included (the tools of agent `agentId`, when it exists). */
  private async flow(projectId: string, flow: FlowInput, agentId: string | null): Promise<Flow> {
    validateFlow(flow);
    const wanted = flowReferences(flow);
    const [knowledge, schemas, tools, servers] = await Promise.all([
      this.knowledge.existing(projectId, wanted.knowledge),
      Promise.all(wanted.schemas.map(async (name) => ((await this.schemas.exists(projectId, name)) ? [name] : []))),
      agentId === null ? null : this.rows.tools(projectId, [agentId]),
      agentId === null ? [] : this.rows.mcpServers(projectId, [agentId]),
    ]);
    validateFlow(flow, {
      knowledge: new Set(knowledge),
      schemas: new Set(schemas.flat()),
      ...(tools === null ? {} : { tools: new Set(tools.map((t) => t.name)), mcpServers: new Set(servers.map((m) => m.name)) }),
    });
    return { version: flow.version ?? '1', start: flow.start, nodes: flow.nodes };
  }

  /** The names, checked to exist (404 naming the first unknown one), without repeats. */
  private async knowledgeNames(projectId: string, names: string[]): Promise<string[]> {
    const unique = [...new Set(names)];
    const found = new Set(await this.knowledge.existing(projectId, unique));
    const missing = unique.find((n) => !found.has(n));
    if (missing !== undefined) throw notFound(`There is no knowledge base "${missing}" in this project.`);
    return unique;
  }

  /** URL, method and hosts of a tool, checked: host allowed, path parameters declared, the secret set. */
  private async toolTarget(projectId: string, input: ToolInput, current: ToolRow): Promise<Partial<ToolRow>> {
    const target = checkToolTarget(input, current);
    await this.checkSecret(projectId, input.secret_ref);
    return target;
  }

  /** A secret_ref that is sent must name a secret of the project (400 `unknown_secret`). */
  private async checkSecret(projectId: string, secretRef: string | null | undefined): Promise<void> {
    if (secretRef !== null && secretRef !== undefined && !(await this.secrets.exists(projectId, secretRef))) {
      throw badRequest('unknown_secret', `There is no secret "${secretRef}" in this project; create it first with PUT /v1/secrets/${secretRef}.`, [{ path: '/secret_ref', message: 'no such secret' }]);
    }
  }
}
