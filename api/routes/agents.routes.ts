import { PassThrough } from 'node:stream';
import type { Agents, AgentView, RuleView, ToolView } from '../../core/agents/agents.js';
import type { McpServerView } from '../../core/agents/mcp-servers.js';
import type { RunDetail, RunSummary } from '../../core/agents/runs.js';
import type { ChatTurns } from '../../core/agents/turn.js';
import { AppError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { iso } from '../../lib/time.js';
import { errorResponses, route, type RouteSpec } from '../route.js';
import {
  AGENT_VIEW,
  ATTACH_KNOWLEDGE,
  CHAT,
  CHAT_RESPONSE,
  CREATE_AGENT,
  LIST_RUNS,
  MCP_SERVER_VIEW,
  NEW_MCP_SERVER,
  NEW_RULE,
  NEW_TOOL,
  RULE_VIEW,
  RUN_DETAIL,
  RUN_SUMMARY_PROPS,
  TOOL_VIEW,
  UPDATE_AGENT,
  UPDATE_MCP_SERVER,
  UPDATE_RULE,
  UPDATE_TOOL,
} from '../schemas/agents.js';
import { PAGING_QUERY } from '../schemas/common.js';

const TAG = 'Agents';

const at = <T extends { created_at: number; updated_at: number }>(v: T) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });
const showTool = (t: ToolView) => at(t);
const showRule = (r: RuleView) => at(r);
const showServer = (m: McpServerView) => at(m);
const showAgent = (a: AgentView) => ({ ...at(a), tools: a.tools.map(showTool), mcp_servers: a.mcp_servers.map(showServer), rules: a.rules.map(showRule) });
const showRun = <T extends RunSummary>(r: T) => ({ ...r, created_at: iso(r.created_at) });

const errors = (extra: Record<number, string> = {}) => errorResponses('No such agent (or tool, MCP server, rule, run, knowledge base) in this project', extra);

/** Agents, their tools, rules and knowledge, chat and runs. */
export function agentRoutes({ agents, chat, log }: { agents: Agents; chat: ChatTurns; log: Logger }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/agents',
    operationId: 'createAgent',
    summary: 'Create an agent. Only name is required.',
    tag: TAG,
    auth: 'token',
    body: CREATE_AGENT,
    responses: { 201: { description: 'Created', schema: AGENT_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showAgent(await agents.create(ctx.state.principal.projectId, ctx.state.body));
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/agents',
    operationId: 'listAgents',
    summary: 'List agents, newest first, with their tools and rules.',
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Agents', schema: { type: 'object', properties: { agents: { type: 'array', items: AGENT_VIEW } } } } },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { agents: (await agents.list(ctx.state.principal.projectId, limit, offset)).map(showAgent) };
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/agents/:name',
    operationId: 'getAgent',
    summary: 'Get an agent with its tools and rules.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The agent', schema: AGENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showAgent(await agents.get(ctx.state.principal.projectId, String(ctx.params.name)));
    },
  });

  const update = route({
    method: 'patch',
    path: '/v1/agents/:name',
    operationId: 'updateAgent',
    summary: 'Change an agent: each field sent replaces the stored one whole; {} returns the agent unchanged.',
    tag: TAG,
    auth: 'token',
    body: UPDATE_AGENT,
    responses: { 200: { description: 'The agent', schema: AGENT_VIEW }, ...errors({ 409: 'The new name is taken' }) },
    async handler(ctx) {
      ctx.body = showAgent(await agents.update(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const remove = route({
    method: 'delete',
    path: '/v1/agents/:name',
    operationId: 'deleteAgent',
    summary: 'Delete an agent with its tools, rules and runs.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.delete(ctx.state.principal.projectId, String(ctx.params.name));
      ctx.status = 204;
    },
  });

  const attach = route({
    method: 'post',
    path: '/v1/agents/:name/knowledge',
    operationId: 'attachKnowledge',
    summary: 'Attach a knowledge base to an agent (attaching it again changes nothing).',
    tag: TAG,
    auth: 'token',
    body: ATTACH_KNOWLEDGE,
    responses: { 200: { description: 'Attached', schema: { type: 'object', properties: { attached: { type: 'string' } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { attached: await agents.attach(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body.kb) };
    },
  });

  const detach = route({
    method: 'delete',
    path: '/v1/agents/:name/knowledge/:kb',
    operationId: 'detachKnowledge',
    summary: 'Detach a knowledge base from an agent.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Detached' }, ...errors() },
    async handler(ctx) {
      await agents.detach(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.kb));
      ctx.status = 204;
    },
  });

  const addTool = route({
    method: 'post',
    path: '/v1/agents/:name/tools',
    operationId: 'addTool',
    summary: 'Add an HTTP tool the agent may call through function calling. The stored tool shows http as http_url and http_method.',
    tag: TAG,
    auth: 'token',
    body: NEW_TOOL,
    responses: { 201: { description: 'Created', schema: TOOL_VIEW }, ...errors({ 409: 'The agent has a tool of that name' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showTool(await agents.addTool(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const listTools = route({
    method: 'get',
    path: '/v1/agents/:name/tools',
    operationId: 'listTools',
    summary: 'List an agent’s tools, oldest first.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Tools', schema: { type: 'object', properties: { tools: { type: 'array', items: TOOL_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { tools: (await agents.listTools(ctx.state.principal.projectId, String(ctx.params.name))).map(showTool) };
    },
  });

  const getTool = route({
    method: 'get',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'getTool',
    summary: 'Get a tool by name or id.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The tool', schema: TOOL_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showTool(await agents.getTool(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.tool)));
    },
  });

  const updateTool = route({
    method: 'patch',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'updateTool',
    summary: 'Change a tool; fields sent replace the stored ones. A new http.url without allowed_hosts resets them to its host.',
    tag: TAG,
    auth: 'token',
    body: UPDATE_TOOL,
    responses: { 200: { description: 'The tool', schema: TOOL_VIEW }, ...errors({ 409: 'The agent has a tool of that name' }) },
    async handler(ctx) {
      ctx.body = showTool(await agents.updateTool(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.tool), ctx.state.body));
    },
  });

  const deleteTool = route({
    method: 'delete',
    path: '/v1/agents/:name/tools/:tool',
    operationId: 'deleteTool',
    summary: 'Delete a tool.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.deleteTool(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.tool));
      ctx.status = 204;
    },
  });

  const addMcpServer = route({
    method: 'post',
    path: '/v1/agents/:name/mcp-servers',
    operationId: 'addMcpServer',
    summary:
      'Attach an MCP server (Streamable HTTP) whose tools the agent may call, offered to the model as <server>__<tool>, under the guards HTTP tools have: allowed hosts, the operator’s private-address rule, the secret sent only to the server, rate limit, timeout and size cap.',
    tag: TAG,
    auth: 'token',
    body: NEW_MCP_SERVER,
    responses: { 201: { description: 'Created', schema: MCP_SERVER_VIEW }, ...errors({ 409: 'The agent has an MCP server of that name' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showServer(await agents.addMcpServer(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const listMcpServers = route({
    method: 'get',
    path: '/v1/agents/:name/mcp-servers',
    operationId: 'listMcpServers',
    summary: 'List an agent’s MCP servers, oldest first.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'MCP servers', schema: { type: 'object', properties: { mcp_servers: { type: 'array', items: MCP_SERVER_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { mcp_servers: (await agents.listMcpServers(ctx.state.principal.projectId, String(ctx.params.name))).map(showServer) };
    },
  });

  const getMcpServer = route({
    method: 'get',
    path: '/v1/agents/:name/mcp-servers/:server',
    operationId: 'getMcpServer',
    summary: 'Get an MCP server by name or id.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The MCP server', schema: MCP_SERVER_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showServer(await agents.getMcpServer(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.server)));
    },
  });

  const updateMcpServer = route({
    method: 'patch',
    path: '/v1/agents/:name/mcp-servers/:server',
    operationId: 'updateMcpServer',
    summary: 'Change an MCP server; fields sent replace the stored ones. A new url without allowed_hosts resets them to its host. Turns see the change at once.',
    tag: TAG,
    auth: 'token',
    body: UPDATE_MCP_SERVER,
    responses: { 200: { description: 'The MCP server', schema: MCP_SERVER_VIEW }, ...errors({ 409: 'The agent has an MCP server of that name' }) },
    async handler(ctx) {
      ctx.body = showServer(await agents.updateMcpServer(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.server), ctx.state.body));
    },
  });

  const deleteMcpServer = route({
    method: 'delete',
    path: '/v1/agents/:name/mcp-servers/:server',
    operationId: 'deleteMcpServer',
    summary: 'Detach an MCP server from the agent.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.deleteMcpServer(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.server));
      ctx.status = 204;
    },
  });

  const addRule = route({
    method: 'post',
    path: '/v1/agents/:name/rules',
    operationId: 'addRule',
    summary: 'Add a rule: a CEL condition (checked now) and an action, evaluated first in every turn, highest priority first.',
    tag: TAG,
    auth: 'token',
    body: NEW_RULE,
    responses: { 201: { description: 'Created', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showRule(await agents.addRule(ctx.state.principal.projectId, String(ctx.params.name), ctx.state.body));
    },
  });

  const listRules = route({
    method: 'get',
    path: '/v1/agents/:name/rules',
    operationId: 'listRules',
    summary: 'List an agent’s rules in the order they run (highest priority first).',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Rules', schema: { type: 'object', properties: { rules: { type: 'array', items: RULE_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { rules: (await agents.listRules(ctx.state.principal.projectId, String(ctx.params.name))).map(showRule) };
    },
  });

  const getRule = route({
    method: 'get',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'getRule',
    summary: 'Get a rule.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The rule', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showRule(await agents.getRule(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.id)));
    },
  });

  const updateRule = route({
    method: 'patch',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'updateRule',
    summary: 'Change a rule; a new condition is checked now.',
    tag: TAG,
    auth: 'token',
    body: UPDATE_RULE,
    responses: { 200: { description: 'The rule', schema: RULE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showRule(await agents.updateRule(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.id), ctx.state.body));
    },
  });

  const deleteRule = route({
    method: 'delete',
    path: '/v1/agents/:name/rules/:id',
    operationId: 'deleteRule',
    summary: 'Delete a rule.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await agents.deleteRule(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.id));
      ctx.status = 204;
    },
  });

  const converse = route({
    method: 'post',
    path: '/v1/agents/:name/chat',
    operationId: 'chat',
    summary:
      'One chat turn: rules, input guardrails, retrieval across the attached knowledge, the tool-calling loop (or the agent’s flow), output guardrails; the answer with citations and a trace. Persisted as a run. With stream (or stream_mode sse): text/event-stream of `delta` events ({text}) ending with a `response` event carrying the full response (or an `error` event).',
    tag: TAG,
    auth: 'token',
    body: CHAT,
    responses: {
      200: { description: 'The response (JSON, or server-sent events)', schema: CHAT_RESPONSE, eventStream: true },
      ...errors({ 429: 'A provider rate-limited the turn', 503: 'The language model (or another dependency) is unavailable' }),
    },
    async handler(ctx) {
      const { stream, ...input } = ctx.state.body;
      const turn = await chat.open(ctx.state.principal.projectId, String(ctx.params.name), input);
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
            if (!(err instanceof AppError)) log.error({ err }, 'chat turn failed');
            send('error', failure);
          },
        )
        .finally(() => events.end());
    },
  });

  const listRuns = route({
    method: 'get',
    path: '/v1/agents/:name/runs',
    operationId: 'listRuns',
    summary: 'The agent’s persisted turns, newest first; conversation_id narrows to one conversation.',
    tag: TAG,
    auth: 'token',
    query: LIST_RUNS,
    responses: {
      200: { description: 'Runs', schema: { type: 'object', properties: { runs: { type: 'array', items: { type: 'object', properties: RUN_SUMMARY_PROPS } } } } },
      ...errors(),
    },
    async handler(ctx) {
      const { limit, offset, conversation_id } = ctx.state.query;
      ctx.body = { runs: (await chat.runs(ctx.state.principal.projectId, String(ctx.params.name), limit, offset, conversation_id)).map(showRun) };
    },
  });

  const getRun = route({
    method: 'get',
    path: '/v1/agents/:name/runs/:runId',
    operationId: 'getRun',
    summary: 'A run’s full trace.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The run', schema: RUN_DETAIL }, ...errors() },
    async handler(ctx) {
      ctx.body = showRun<RunDetail>(await chat.run(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.runId)));
    },
  });

  return [create, list, get, update, remove, attach, detach, addTool, listTools, getTool, updateTool, deleteTool, addMcpServer, listMcpServers, getMcpServer, updateMcpServer, deleteMcpServer, addRule, listRules, getRule, updateRule, deleteRule, converse, listRuns, getRun];
}
