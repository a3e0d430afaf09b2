import { Type } from '@sinclair/typebox';
import { AGENT_LIMITS, FLOW_LIMITS, FLOW_NODE_TYPES, HTTP_METHODS, RULE_TYPES, STREAM_MODES, UI_ACTIONS } from '../../core/agents/agents.js';
import { GUARDRAIL_CHECKS } from '../../core/agents/guardrails.js';
import { SECRET_NAME } from '../../core/secrets.js';
import { AnyObject, Const, Dictionary, Nullable, PAGING, StringEnum } from './common.js';
import { KNOWLEDGE_NAME } from './knowledge.js';

/** Agent names, as paths refer to them. */
const AGENT_NAME = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$';
/** Tool names: what function-calling models accept. */
const TOOL_NAME = '^[a-zA-Z0-9_-]{1,64}$';
const NODE_ID = '^[A-Za-z0-9_-]{1,64}$';

const GUARDRAIL_SIDE = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Default true when the side is sent.' })),
    failOpen: Type.Optional(Type.Boolean({ description: 'Whether a check that errors lets the text through (the verdict then says failed_open). Default false.' })),
    checks: Type.Optional(Type.Array(StringEnum(GUARDRAIL_CHECKS), { uniqueItems: true, description: 'Default: all five.' })),
    riskThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'A check scoring at least this blocks. Default 0.5.' })),
  },
  { additionalProperties: false },
);

const GUARDRAILS = Type.Object(
  { version: Type.Optional(Type.String({ maxLength: 32 })), input: Type.Optional(GUARDRAIL_SIDE), output: Type.Optional(GUARDRAIL_SIDE) },
  {
    additionalProperties: false,
    description: 'Input checks run before the model (a block answers with fallback_message); output checks run on the answer (a block replaces it).',
  },
);

const TOOL_POLICY = Type.Object(
  {
    version: Type.Optional(Type.String({ maxLength: 32 })),
    maxCallsPerTurn: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, description: 'Hard cap on tool calls in one turn; default 5.' })),
    allow: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), { maxItems: AGENT_LIMITS.tools, description: 'Tool names the model is offered; "*" (default) is all.' }),
    ),
  },
  { additionalProperties: false },
);

const FLOW_NODE = Type.Object(
  {
    type: StringEnum(FLOW_NODE_TYPES),
    next: Type.Optional(Type.String({ pattern: NODE_ID })),
    knowledge: Type.Optional(Type.Array(Type.String({ pattern: KNOWLEDGE_NAME }), { description: 'retrieve: bases to search; default the agent’s.' })),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'retrieve: passages; default 5.' })),
    instructions: Type.Optional(Type.String({ maxLength: 16_384, description: 'llm: instructions added for this step.' })),
    tools: Type.Optional(Type.Boolean({ description: 'llm: offer the agent’s tools (default true).' })),
    tool: Type.Optional(Type.String({ pattern: TOOL_NAME, description: 'tool: the tool to call.' })),
    arguments: Type.Optional(
      Dictionary(Type.String({ maxLength: 1024 }), {
        maxProperties: 32,
        description: 'tool: CEL expression per argument; without it the model reads them from the conversation.',
      }),
    ),
    if: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'condition: CEL over message, messages, turn, user_id, metadata, retrieved, tools, answer, extracted.',
      }),
    ),
    then: Type.Optional(Type.String({ pattern: NODE_ID })),
    else: Type.Optional(Type.String({ pattern: NODE_ID })),
    text: Type.Optional(
      Type.String({ maxLength: 16_384, description: 'respond / escalate: the text (respond without it answers with the last llm answer).' }),
    ),
    schema: Type.Optional(Type.String({ maxLength: 64, description: 'extract: the record schema to store from the conversation.' })),
  },
  { additionalProperties: false },
);

const FLOW = Nullable(
  Type.Object(
    {
      version: Type.Optional(Type.String({ maxLength: 32 })),
      start: Type.String({ pattern: NODE_ID }),
      nodes: Dictionary(FLOW_NODE, { minProperties: 1, maxProperties: FLOW_LIMITS.nodes, propertyNames: { pattern: NODE_ID } }),
    },
    {
      additionalProperties: false,
      description: `Nodes keyed by id, each {type, next?}; types ${FLOW_NODE_TYPES.join(', ')}. A turn takes at most ${FLOW_LIMITS.steps} steps. null removes the flow.`,
    },
  ),
);

const AGENT_NAME_FIELD = Type.String({ pattern: AGENT_NAME });

/** Settable agent fields (create, PATCH, project specs); only create requires the name. */
export const AGENT_FIELDS = {
  name: Type.Optional(AGENT_NAME_FIELD),
  instructions: Type.Optional(Type.String({ maxLength: 32_768 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'local (default), cohere/<model> or openai/<model>.' })),
  fallback_message: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  ui_actions: Type.Optional(Type.Array(StringEnum(UI_ACTIONS), { uniqueItems: true })),
  guardrails: Type.Optional(GUARDRAILS),
  tool_policy: Type.Optional(TOOL_POLICY),
  flow: Type.Optional(FLOW),
  stream_mode: Type.Optional(StringEnum(STREAM_MODES, { description: 'buffered (default) or sse (server-sent events).' })),
  knowledge: Type.Optional(Type.Array(Type.String({ pattern: KNOWLEDGE_NAME }), { maxItems: 20, description: 'Names of attached knowledge bases.' })),
};

/** `POST /v1/agents`. */
export const CREATE_AGENT = Type.Object({ ...AGENT_FIELDS, name: AGENT_NAME_FIELD }, { additionalProperties: false });

/** `PATCH /v1/agents/{name}`. */
export const UPDATE_AGENT = Type.Object(AGENT_FIELDS, { additionalProperties: false });

/** `POST /v1/agents/{name}/knowledge`. */
export const ATTACH_KNOWLEDGE = Type.Object({ kb: Type.String({ pattern: KNOWLEDGE_NAME }) }, { additionalProperties: false });

const PARAMETERS = Type.Object(
  {
    type: Const('object'),
    properties: Type.Optional(AnyObject({ maxProperties: 32 })),
    required: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'JSON Schema of the call arguments: {type: "object", properties, required}.' },
);

const HTTP_TARGET = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL; {param} placeholders in the path are filled from the arguments.' }),
    method: Type.Optional(
      Type.String({ pattern: `^(${[...HTTP_METHODS, ...HTTP_METHODS.map((m) => m.toLowerCase())].join('|')})$`, description: 'Default GET.' }),
    ),
  },
  { additionalProperties: false },
);

const TOOL_NAME_FIELD = Type.String({ pattern: TOOL_NAME });

/** Tool fields (create, PATCH, project specs); only create requires the name and the target. */
export const TOOL_FIELDS = {
  name: Type.Optional(TOOL_NAME_FIELD),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  http: Type.Optional(HTTP_TARGET),
  parameters: Type.Optional(PARAMETERS),
  auth_header: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9-]{1,128}$', description: 'Header the secret is sent in; default Authorization.' })),
  secret_ref: Type.Optional(
    Nullable(Type.String({ pattern: SECRET_NAME, description: 'Name of a project secret (PUT /v1/secrets/{name}) sent as the auth_header value.' })),
  ),
  rate_per_min: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Calls per minute across all API processes; default 60.' })),
  allowed_hosts: Type.Optional(
    Type.Array(Type.String({ pattern: '^(\\*\\.)?[A-Za-z0-9.:_-]{1,253}$' }), {
      maxItems: 32,
      description:
        'Hosts calls and redirects may reach (default: the host of http.url; *.example.com for subdomains). Private, loopback and link-local addresses are reachable only for a host listed here exactly.',
    }),
  ),
};

/** A new tool (`POST /v1/agents/{name}/tools`, project specs): named, with its target. */
export const NEW_TOOL = Type.Object({ ...TOOL_FIELDS, name: TOOL_NAME_FIELD, http: HTTP_TARGET }, { additionalProperties: false });

/** `PATCH /v1/agents/{name}/tools/{tool}`. */
export const UPDATE_TOOL = Type.Object(TOOL_FIELDS, { additionalProperties: false });

/** MCP server names: short, so that `<server>__<tool>` leaves room for the tool's own name. */
const MCP_SERVER_NAME = Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9-]{0,31}$', description: 'Prefixes its tools as <server>__<tool>; letters, digits and -.' });
const MCP_URL = Type.String({ minLength: 1, maxLength: 2048, description: 'The server’s Streamable HTTP endpoint, http(s).' });

/** MCP server fields (create, PATCH, project specs); only create requires the name and the url. */
export const MCP_SERVER_FIELDS = {
  name: Type.Optional(MCP_SERVER_NAME),
  url: Type.Optional(MCP_URL),
  allowed_hosts: TOOL_FIELDS.allowed_hosts,
  auth_header: TOOL_FIELDS.auth_header,
  secret_ref: TOOL_FIELDS.secret_ref,
  tools: Type.Optional(
    Nullable(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: AGENT_LIMITS.tools,
        uniqueItems: true,
        description: 'The server’s tool names the agent is offered (its own names, not namespaced); null or absent: all of them.',
      }),
    ),
  ),
  rate_per_min: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Calls per minute of each of its tools, across all API processes; default 60.' })),
};

/** A new MCP server (`POST /v1/agents/{name}/mcp-servers`, project specs): named, with its url. */
export const NEW_MCP_SERVER = Type.Object({ ...MCP_SERVER_FIELDS, name: MCP_SERVER_NAME, url: MCP_URL }, { additionalProperties: false });

/** `PATCH /v1/agents/{name}/mcp-servers/{server}`. */
export const UPDATE_MCP_SERVER = Type.Object(MCP_SERVER_FIELDS, { additionalProperties: false });

const RULE_TYPE = StringEnum(RULE_TYPES);
const CONDITION = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'CEL over message, messages, turn, user_id, metadata, e.g. message.lowerAscii().contains("refund").',
});

/** Rule fields (create, PATCH, project specs); only create requires the type and the condition. */
export const RULE_FIELDS = {
  rule_type: Type.Optional(RULE_TYPE),
  condition: Type.Optional(CONDITION),
  action: Type.Optional(
    Type.String({ maxLength: 4096, description: 'escalation: the message shown; response: the answer; ui_action: the action name; block: the refusal.' }),
  ),
  priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000, description: 'Higher runs first; default 0.' })),
};

/** A new rule (`POST /v1/agents/{name}/rules`, project specs): its type and condition. */
export const NEW_RULE = Type.Object({ ...RULE_FIELDS, rule_type: RULE_TYPE, condition: CONDITION }, { additionalProperties: false });

/** `PATCH /v1/agents/{name}/rules/{id}`. */
export const UPDATE_RULE = Type.Object(RULE_FIELDS, { additionalProperties: false });

/** `POST /v1/agents/{name}/chat`. */
export const CHAT = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        { role: StringEnum(['user', 'assistant', 'system']), content: Type.String({ maxLength: 32_768 }) },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: 100,
        description:
          'The turn’s messages; the last user message is what rules, guardrails and retrieval look at. system messages add to the instructions.',
      },
    ),
    conversation_id: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.:-]{1,128}$',
        description: 'Threads turns: earlier turns of the conversation are context. A new one is made when absent.',
      }),
    ),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    metadata: Type.Optional(AnyObject({ maxProperties: 32, description: 'Visible to rule conditions as metadata.' })),
    stream: Type.Optional(Type.Boolean({ description: 'Server-sent events instead of one JSON body; default: the agent’s stream_mode.' })),
  },
  { additionalProperties: false },
);

/** `GET /v1/agents/{name}/runs`. */
export const LIST_RUNS = Type.Object({ ...PAGING, conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) }, { additionalProperties: false });

// Responses

/** A tool as the API shows it. */
export const TOOL_VIEW = {
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

/** An MCP server as the API shows it. */
export const MCP_SERVER_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string' },
    allowed_hosts: { type: 'array', items: { type: 'string' } },
    auth_header: { type: 'string' },
    secret_ref: { type: ['string', 'null'] },
    tools: { type: ['array', 'null'], items: { type: 'string' } },
    rate_per_min: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** A rule as the API shows it. */
export const RULE_VIEW = {
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

/** An agent as the API shows it, with its tools and rules. */
export const AGENT_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    ...AGENT_FIELDS,
    tools: { type: 'array', items: TOOL_VIEW },
    mcp_servers: { type: 'array', items: MCP_SERVER_VIEW },
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

/** A chat turn's answer. */
export const CHAT_RESPONSE = {
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

/** A run in a list. */
export const RUN_SUMMARY_PROPS = {
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

/** A run's full trace. */
export const RUN_DETAIL = {
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
