import { PassThrough } from 'node:stream';
import {
  AGENT_LIMITS,
  FLOW_LIMITS,
  FLOW_NODE_TYPES,
  HTTP_METHODS,
  RULE_TYPES,
  STREAM_MODES,
  UI_ACTIONS,
  type AgentInput,
  type AgentView,
  type RuleInput,
  type RuleType,
  type RuleView,
  type ToolInput,
  type ToolView,
} from '../../core/agents/agents.js';
import { GUARDRAIL_CHECKS } from '../../core/agents/guardrails.js';
import type { ChatInput } from '../../core/agents/turn/types.js';
import type { RunDetail, RunSummary } from '../../core/agents/runs.js';
import { SECRET_NAME } from '../../core/secrets.js';
import { AppError } from '../../lib/errors.js';
import { iso } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import { errorResponses, PAGING_QUERY, projectOf, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';
import { KNOWLEDGE_NAME } from './knowledge.routes.js';

const TAG = 'Agents';
/** Agent names, as paths refer to them. */
export const AGENT_NAME = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$';
/** Tool names: what function-calling models accept. */
const TOOL_NAME = '^[a-zA-Z0-9_-]{1,64}$';
const NODE_ID = '^[A-Za-z0-9_-]{1,64}$';

const GUARDRAIL_SIDE = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', description: 'Default true when the side is sent.' },
    failOpen: { type: 'boolean', description: 'Whether a check that errors lets the text through (the verdict then says failed_open). Default false.' },
    checks: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...GUARDRAIL_CHECKS] }, description: 'Default: all five.' },
    riskThreshold: { type: 'number', minimum: 0, maximum: 1, description: 'A check scoring at least this blocks. Default 0.5.' },
  },
} as const;

const GUARDRAILS = {
  type: 'object',
  additionalProperties: false,
  properties: { version: { type: 'string', maxLength: 32 }, input: GUARDRAIL_SIDE, output: GUARDRAIL_SIDE },
  description: 'Input checks run before the model (a block answers with fallback_message); output checks run on the answer (a block replaces it).',
} as const;

const TOOL_POLICY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: { type: 'string', maxLength: 32 },
    maxCallsPerTurn: { type: 'integer', minimum: 0, maximum: 50, description: 'Hard cap on tool calls in one turn; default 5.' },
    allow: { type: 'array', maxItems: AGENT_LIMITS.tools, items: { type: 'string', maxLength: 64 }, description: 'Tool names the model is offered; "*" (default) is all.' },
  },
} as const;

const FLOW_NODE = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: [...FLOW_NODE_TYPES] },
    next: { type: 'string', pattern: NODE_ID },
    knowledge: { type: 'array', items: { type: 'string', pattern: KNOWLEDGE_NAME }, description: 'retrieve: bases to search; default the agent’s.' },
    top_k: { type: 'integer', minimum: 1, maximum: 20, description: 'retrieve: passages; default 5.' },
    instructions: { type: 'string', maxLength: 16_384, description: 'llm: instructions added for this step.' },
    tools: { type: 'boolean', description: 'llm: offer the agent’s tools (default true).' },
    tool: { type: 'string', pattern: TOOL_NAME, description: 'tool: the tool to call.' },
    arguments: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 1024 }, description: 'tool: CEL expression per argument; without it the model reads them from the conversation.' },
    if: { type: 'string', minLength: 1, maxLength: 4096, description: 'condition: CEL over message, messages, turn, user_id, metadata, retrieved, tools, answer, extracted.' },
    then: { type: 'string', pattern: NODE_ID },
    else: { type: 'string', pattern: NODE_ID },
    text: { type: 'string', maxLength: 16_384, description: 'respond / escalate: the text (respond without it answers with the last llm answer).' },
    schema: { type: 'string', maxLength: 64, description: 'extract: the record schema to store from the conversation.' },
  },
} as const;

const FLOW = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['start', 'nodes'],
  properties: {
    version: { type: 'string', maxLength: 32 },
    start: { type: 'string', pattern: NODE_ID },
    nodes: { type: 'object', minProperties: 1, maxProperties: FLOW_LIMITS.nodes, propertyNames: { pattern: NODE_ID }, additionalProperties: FLOW_NODE },
  },
  description: `Nodes keyed by id, each {type, next?}; types ${FLOW_NODE_TYPES.join(', ')}. A turn takes at most ${FLOW_LIMITS.steps} steps. null removes the flow.`,
} as const;

/** Settable agent fields (create, PATCH, project specs). */
export const AGENT_FIELDS = {
  name: { type: 'string', pattern: AGENT_NAME },
  instructions: { type: 'string', maxLength: 32_768 },
  model: { type: 'string', minLength: 1, maxLength: 128, description: 'local (default), cohere/<model> or openai/<model>.' },
  fallback_message: { type: 'string', minLength: 1, maxLength: 4096 },
  ui_actions: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...UI_ACTIONS] } },
  guardrails: GUARDRAILS,
  tool_policy: TOOL_POLICY,
  flow: FLOW,
  stream_mode: { type: 'string', enum: [...STREAM_MODES], description: 'buffered (default) or sse (server-sent events).' },
  knowledge: { type: 'array', maxItems: 20, items: { type: 'string', pattern: KNOWLEDGE_NAME }, description: 'Names of attached knowledge bases.' },
} as const;

const PARAMETERS = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { const: 'object' },
    properties: { type: 'object', maxProperties: 32 },
    required: { type: 'array', items: { type: 'string' } },
  },
  description: 'JSON Schema of the call arguments: {type: "object", properties, required}.',
} as const;

/** Tool fields (create, PATCH, project specs). */
export const TOOL_FIELDS = {
  name: { type: 'string', pattern: TOOL_NAME },
  description: { type: 'string', maxLength: 2048 },
  http: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL; {param} placeholders in the path are filled from the arguments.' },
      method: { type: 'string', pattern: `^(${[...HTTP_METHODS, ...HTTP_METHODS.map((m) => m.toLowerCase())].join('|')})$`, description: 'Default GET.' },
    },
  },
  parameters: PARAMETERS,
  auth_header: { type: 'string', pattern: '^[A-Za-z0-9-]{1,128}$', description: 'Header the secret is sent in; default Authorization.' },
  secret_ref: { type: ['string', 'null'], pattern: SECRET_NAME, description: 'Name of a project secret (PUT /v1/secrets/{name}) sent as the auth_header value.' },
  rate_per_min: { type: 'integer', minimum: 1, maximum: 100_000, description: 'Calls per minute across all API processes; default 60.' },
  allowed_hosts: {
    type: 'array',
    maxItems: 32,
    items: { type: 'string', pattern: '^(\\*\\.)?[A-Za-z0-9.:_-]{1,253}$' },
    description: 'Hosts calls and redirects may reach (default: the host of http.url; *.example.com for subdomains). Private, loopback and link-local addresses are reachable only for a host listed here exactly.',
  },
} as const;

/** Rule fields (create, PATCH, project specs). */
export const RULE_FIELDS = {
  rule_type: { type: 'string', enum: [...RULE_TYPES] },
  condition: { type: 'string', minLength: 1, maxLength: 4096, description: 'CEL over message, messages, turn, user_id, metadata, e.g. message.lowerAscii().contains("refund").' },
  action: { type: 'string', maxLength: 4096, description: 'escalation: the message shown; response: the answer; ui_action: the action name; block: the refusal.' },
  priority: { type: 'integer', minimum: -1000, maximum: 1000, description: 'Higher runs first; default 0.' },
} as const;

const TOOL_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    http_url: { type: 'string' },
    http_method: { type: 'string' },
    parameters: { type: 'object' },
    auth_header: { type: 'string' },
    secret_ref: { type: ['string', 'null'] },
    rate_per_min: { type: 'integer' },
    allowed_hosts: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const RULE_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    rule_type: { type: 'string', enum: [...RULE_TYPES] },
    condition: { type: 'string' },
    action: { type: 'string' },
    priority: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const AGENT_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    ...AGENT_FIELDS,
    tools: { type: 'array', items: TOOL_VIEW },
    rules: { type: 'array', items: RULE_VIEW },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const CITATION = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    score: { type: 'number' },
    document_id: { type: 'string' },
    filename: { type: 'string' },
    chunk_id: { type: 'string' },
    knowledge_base: { type: 'string' },
  },
} as const;

const VERDICT = {
  type: 'object',
  properties: {
    allowed: { type: 'boolean' },
    risk: { type: 'number' },
    checks: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, score: { type: 'number' }, flagged: { type: 'boolean' } } } },
    failed_open: { type: 'boolean' },
    error: { type: 'string' },
  },
} as const;

const TOOL_CALL = {
  type: 'object',
  properties: {
    tool: { type: 'string' },
    arguments: { type: 'string' },
    result: { type: 'string' },
    status: { type: 'string', enum: ['ok', 'error', 'timeout', 'denied', 'rate_limited', 'limit_exceeded'] },
    http_status: { type: 'integer' },
    duration_ms: { type: 'integer' },
  },
} as const;

const CHAT_RESPONSE = {
  type: 'object',
  properties: {
    run_id: { type: 'string' },
    conversation_id: { type: 'string' },
    message: { type: 'object', properties: { role: { type: 'string' }, content: { type: 'string' } } },
    citations: { type: 'array', items: CITATION },
    ui_actions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, source: { type: 'string' }, rule_id: { type: 'string' } } } },
    escalated: { type: 'boolean' },
    usage: { type: 'object', properties: { tokens_in: { type: 'integer' }, tokens_out: { type: 'integer' } } },
    trace: {
      type: 'object',
      properties: {
        matched_rules: { type: 'array', items: RULE_VIEW },
        retrieved: { type: 'array', items: CITATION },
        available_tools: { type: 'array', items: { type: 'string' } },
        tool_calls: { type: 'array', items: TOOL_CALL },
        plan: { type: 'array', items: { type: 'string' } },
        flow_path: { type: 'array', items: { type: 'string' } },
        input_verdict: VERDICT,
        output_verdict: VERDICT,
        errors: { type: 'array', items: { type: 'object' } },
        timings_ms: { type: 'object', description: 'Server time by stage: rules, guardrails, retrieval, model, tools, persistence, total.' },
      },
    },
  },
} as const;

const RUN_SUMMARY_PROPS = {
  id: { type: 'string' },
  created_at: { type: 'string', format: 'date-time' },
  status: { type: 'string', enum: ['ok', 'escalated', 'blocked', 'failed'] },
  escalated: { type: 'boolean' },
  conversation_id: { type: 'string' },
  llm_calls: { type: 'integer' },
  tokens_in: { type: 'integer' },
  tokens_out: { type: 'integer' },
  latency_ms: { type: 'integer' },
} as const;

const RUN_DETAIL = {
  type: 'object',
  properties: {
    ...RUN_SUMMARY_PROPS,
    messages: { type: 'array', items: { type: 'object' } },
    input_verdict: VERDICT,
    output_verdict: VERDICT,
    retrieved: { type: 'array', items: CITATION },
    tool_calls: { type: 'array', items: TOOL_CALL },
    matched_rules: { type: 'array', items: RULE_VIEW },
    plan: { type: 'array', items: { type: 'string' } },
    flow_path: { type: 'array', items: { type: 'string' } },
    response: { type: ['object', 'null'], description: 'The chat response as sent; null for a failed turn.' },
    error: { type: ['object', 'null'], description: '{status, code, detail} of a failed turn.' },
  },
} as const;

const CHAT_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['messages'],
  properties: {
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['role', 'content'],
        properties: { role: { type: 'string', enum: ['user', 'assistant', 'system'] }, content: { type: 'string', maxLength: 32_768 } },
      },
      description: 'The turn’s messages; the last user message is what rules, guardrails and retrieval look at. system messages add to the instructions.',
    },
    conversation_id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$', description: 'Threads turns: earlier turns of the conversation are context. A new one is made when absent.' },
    user_id: { type: 'string', minLength: 1, maxLength: 128 },
    metadata: { type: 'object', maxProperties: 32, description: 'Visible to rule conditions as metadata.' },
    stream: { type: 'boolean', description: 'Server-sent events instead of one JSON body; default: the agent’s stream_mode.' },
  },
};

const at = <T extends { created_at: number; updated_at: number }>(v: T) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });
const showTool = (t: ToolView) => at(t);
const showRule = (r: RuleView) => at(r);
const showAgent = (a: AgentView) => ({ ...at(a), tools: a.tools.map(showTool), rules: a.rules.map(showRule) });
const showRun = <T extends RunSummary>(r: T) => ({ ...r, created_at: iso(r.created_at) });

const errors = (extra: Record<number, string> = {}) => errorResponses('No such agent (or tool, rule, run, knowledge base) in this project', extra);

type NoQuery = Record<string, never>;
type ChatBody = ChatInput & { stream?: boolean };

/** Agents, their tools, rules and knowledge, chat and runs. */
export function agentRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const agents = runtime.agents;
  const chat = runtime.chat;
  const project = projectOf;

  const create: RouteSpec<AgentInput & { name: string }, NoQuery> = {
    method: 'post',
    path: '/v1/agents',
    operationId: 'createAgent',
    summary: 'Create an agent. Only name is required.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['name'], properties: AGENT_FIELDS },
    responses: { 201: { description: 'Created', schema: AGENT_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showAgent(await agents.create(project(ctx), ctx.state.body));
    },
  };

  const list: RouteSpec<undefined, { limit: number; offset: number }> = {
    method: 'get',
    path: '/v1/agents',
    operationId: 'listAgents',
    summary: 'List agents, newest first, with their tools and rules.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: { 200: { description: 'Agents', schema: { type: 'object', properties: { agents: { type: 'array', items: AGENT_VIEW } } } } },
    async handler(ctx) {
      ctx.body = { agents: (await agents.list(project(ctx), ctx.state.query.limit, ctx.state.query.offset)).map(showAgent) };
    },
  };

  const get: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name',
    operationId: 'getAgent',
    summary: 'Get an agent with its tools and rules.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The agent', schema: AGENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showAgent(await agents.get(project(ctx), String(ctx.params.name)));
    },
  };

  const update: RouteSpec<AgentInput, NoQuery> = {
    method: 'patch',
    path: '/v1/agents/:name',
    operationId: 'updateAgent',
    summary: 'Change an agent: each field sent replaces the stored one whole; {} returns the agent unchanged.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, properties: AGENT_FIELDS },
    responses: { 200: { description: 'The agent', schema: AGENT_VIEW }, ...errors({ 409: 'The new name is taken' }) },
    async handler(ctx) {
      ctx.body = showAgent(await agents.update(project(ctx), String(ctx.params.name), ctx.state.body));
    },
  };

  const remove: RouteSpec<undefined, NoQuery> = {
    method: 'delete',
    path: '/v1/agents/:name',
    operationId: 'deleteAgent',
    summary: 'Delete an agent with its tools, rules and runs.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.delete(project(ctx), String(ctx.params.name));
      ctx.status = 204;
    },
  };

  const attach: RouteSpec<{ kb: string }, NoQuery> = {
    method: 'post',
    path: '/v1/agents/:name/knowledge',
    operationId: 'attachKnowledge',
    summary: 'Attach a knowledge base to an agent (attaching it again changes nothing).',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['kb'], properties: { kb: { type: 'string', pattern: KNOWLEDGE_NAME } } },
    responses: { 200: { description: 'Attached', schema: { type: 'object', properties: { attached: { type: 'string' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { attached: await agents.attach(project(ctx), String(ctx.params.name), ctx.state.body.kb) };
    },
  };

  const detach: RouteSpec<undefined, NoQuery> = {
    method: 'delete',
    path: '/v1/agents/:name/knowledge/:kb',
    operationId: 'detachKnowledge',
    summary: 'Detach a knowledge base from an agent.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Detached' }, ...errors() },
    async handler(ctx) {
      await agents.detach(project(ctx), String(ctx.params.name), String(ctx.params.kb));
      ctx.status = 204;
    },
  };

  const addTool: RouteSpec<ToolInput & { name: string; http: { url: string; method?: string } }, NoQuery> = {
    method: 'post',
    path: '/v1/agents/:name/tools',
    operationId: 'addTool',
    summary: 'Add an HTTP tool the agent may call through function calling. The stored tool shows http as http_url and http_method.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['name', 'http'], properties: TOOL_FIELDS },
    responses: { 201: { description: 'Created', schema: TOOL_VIEW }, ...errors({ 409: 'The agent has a tool of that name' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showTool(await agents.addTool(project(ctx), String(ctx.params.name), ctx.state.body));
    },
  };

  const listTools: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name/tools',
    operationId: 'listTools',
    summary: 'List an agent’s tools, oldest first.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Tools', schema: { type: 'object', properties: { tools: { type: 'array', items: TOOL_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { tools: (await agents.listTools(project(ctx), String(ctx.params.name))).map(showTool) };
    },
  };

  const getTool: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'getTool',
    summary: 'Get a tool by name or id.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The tool', schema: TOOL_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showTool(await agents.getTool(project(ctx), String(ctx.params.name), String(ctx.params.tool)));
    },
  };

  const updateTool: RouteSpec<ToolInput, NoQuery> = {
    method: 'patch',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'updateTool',
    summary: 'Change a tool; fields sent replace the stored ones. A new http.url without allowed_hosts resets them to its host.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, properties: TOOL_FIELDS },
    responses: { 200: { description: 'The tool', schema: TOOL_VIEW }, ...errors({ 409: 'The agent has a tool of that name' }) },
    async handler(ctx) {
      ctx.body = showTool(await agents.updateTool(project(ctx), String(ctx.params.name), String(ctx.params.tool), ctx.state.body));
    },
  };

  const deleteTool: RouteSpec<undefined, NoQuery> = {
    method: 'delete',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'deleteTool',
    summary: 'Delete a tool.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.deleteTool(project(ctx), String(ctx.params.name), String(ctx.params.tool));
      ctx.status = 204;
    },
  };

  const addRule: RouteSpec<RuleInput & { rule_type: RuleType; condition: string }, NoQuery> = {
    method: 'post',
    path: '/v1/agents/:name/rules',
    operationId: 'addRule',
    summary: 'Add a rule: a CEL condition (checked now) and an action, evaluated first in every turn, highest priority first.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['rule_type', 'condition'], properties: RULE_FIELDS },
    responses: { 201: { description: 'Created', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showRule(await agents.addRule(project(ctx), String(ctx.params.name), ctx.state.body));
    },
  };

  const listRules: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name/rules',
    operationId: 'listRules',
    summary: 'List an agent’s rules in the order they run (highest priority first).',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Rules', schema: { type: 'object', properties: { rules: { type: 'array', items: RULE_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { rules: (await agents.listRules(project(ctx), String(ctx.params.name))).map(showRule) };
    },
  };

  const getRule: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'getRule',
    summary: 'Get a rule.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The rule', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showRule(await agents.getRule(project(ctx), String(ctx.params.name), String(ctx.params.id)));
    },
  };

  const updateRule: RouteSpec<RuleInput, NoQuery> = {
    method: 'patch',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'updateRule',
    summary: 'Change a rule; a new condition is checked now.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, properties: RULE_FIELDS },
    responses: { 200: { description: 'The rule', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showRule(await agents.updateRule(project(ctx), String(ctx.params.name), String(ctx.params.id), ctx.state.body));
    },
  };

  const deleteRule: RouteSpec<undefined, NoQuery> = {
    method: 'delete',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'deleteRule',
    summary: 'Delete a rule.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.deleteRule(project(ctx), String(ctx.params.name), String(ctx.params.id));
      ctx.status = 204;
    },
  };

  const converse: RouteSpec<ChatBody, NoQuery> = {
    method: 'post',
    path: '/v1/agents/:name/chat',
    operationId: 'chat',
    summary:
      'One chat turn: rules, input guardrails, retrieval across the attached knowledge, the tool-calling loop (or the agent’s flow), output guardrails; the answer with citations and a trace. Persisted as a run. With stream (or stream_mode sse): text/event-stream of `delta` events ({text}) ending with a `response` event carrying the full response (or an `error` event).',
    tag: TAG,
    auth: 'token',
    body: CHAT_BODY,
    responses: {
      200: { description: 'The response (JSON, or server-sent events)', schema: CHAT_RESPONSE, eventStream: true },
      ...errors({ 429: 'A provider rate-limited the turn', 503: 'The language model (or another dependency) is unavailable' }),
    },
    async handler(ctx) {
      const { stream, ...input } = ctx.state.body;
      const turn = await chat.open(project(ctx), String(ctx.params.name), input);
      if (!(stream ?? turn.streamMode === 'sse')) {
        ctx.body = await turn.run();
        return;
      }
      const events = new PassThrough();
      const send = (event: string, data: unknown) => events.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      ctx.status = 200;
      ctx.set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      ctx.body = events;
      turn
        .run((text) => send('delta', { text }))
        .then(
          (response) => send('response', response),
          (err: unknown) => {
            const failure = err instanceof AppError ? { detail: err.message, code: err.code } : { detail: 'The turn failed on the server.', code: 'internal_error' };
            if (!(err instanceof AppError)) runtime.log.error({ err }, 'chat turn failed');
            send('error', failure);
          },
        )
        .finally(() => events.end());
    },
  };

  const listRuns: RouteSpec<undefined, { limit: number; offset: number; conversation_id?: string }> = {
    method: 'get',
    path: '/v1/agents/:name/runs',
    operationId: 'listRuns',
    summary: 'The agent’s persisted turns, newest first; conversation_id narrows to one conversation.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: { ...PAGING_QUERY, conversation_id: { type: 'string', minLength: 1, maxLength: 128 } } },
    responses: {
      200: { description: 'Runs', schema: { type: 'object', properties: { runs: { type: 'array', items: { type: 'object', properties: RUN_SUMMARY_PROPS } } } } },
      ...errors(),
    },
    async handler(ctx) {
      const { limit, offset, conversation_id } = ctx.state.query;
      ctx.body = { runs: (await chat.runs(project(ctx), String(ctx.params.name), limit, offset, conversation_id)).map(showRun) };
    },
  };

  const getRun: RouteSpec<undefined, NoQuery> = {
    method: 'get',
    path: '/v1/agents/:name/runs/:runId',
    operationId: 'getRun',
    summary: 'A run’s full trace.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The run', schema: RUN_DETAIL }, ...errors() },
    async handler(ctx) {
      ctx.body = showRun<RunDetail>(await chat.run(project(ctx), String(ctx.params.name), String(ctx.params.runId)));
    },
  };

  return [create, list, get, update, remove, attach, detach, addTool, listTools, getTool, updateTool, deleteTool, addRule, listRules, getRule, updateRule, deleteRule, converse, listRuns, getRun] as Array<
    RouteSpec<never, never>
  >;
}
