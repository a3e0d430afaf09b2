import type { ConditionInput } from './conditions.js';
import type { AgentsRepository, RunRow, RunStatus } from '../../db/repositories/agents.repository.js';
import { AppError, badRequest, notFound } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { newId, nowMs } from '../../lib/time.js';
import type { RecordExtraction } from '../extract.js';
import type { Citation, Knowledge } from '../knowledge/knowledge.js';
import type { Secrets } from '../secrets.js';
import { FLOW_LIMITS, type Agents, type FlowNode, type LoadedAgent, type RuleView, type StreamMode } from './agents.js';
import { runDetail, runSummary, type RunDetail, type RunSummary, type StoredDetail } from './runs.js';
import { compileCondition, compileValue } from './conditions.js';
import type { Guardrails, Verdict } from './guardrails.js';
import type { LanguageModel, ModelMessage, ModelReply, Passage, ToolCallRequest, ToolSpec } from '../../providers/language-model.js';
import type { LanguageModels } from '../../providers/registry.js';
import type { ToolCallStatus, ToolDefinition, ToolRunner } from './tool-runner.js';

/** A message of a chat request. */
export interface ChatMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
}

export interface ChatInput {
  messages: ChatMessage[];
  /** Threads turns: earlier turns of the conversation are the model's context. New when absent. */
  conversation_id?: string;
  user_id?: string;
  metadata?: Record<string, unknown>;
}

export interface ToolCallTrace {
  tool: string;
  /** The arguments as JSON text. */
  arguments: string;
  result: string;
  status: ToolCallStatus | 'limit_exceeded';
  http_status?: number;
  duration_ms: number;
}

/** A UI action the client should show, and who asked for it. */
export interface UiAction {
  type: string;
  source: 'agent' | 'rule';
  rule_id?: string;
}

/** Where a turn's server time went, in milliseconds. */
export interface TurnTimings {
  rules: number;
  guardrails: number;
  retrieval: number;
  model: number;
  tools: number;
  persistence: number;
  total: number;
}

export interface Trace {
  matched_rules: RuleView[];
  retrieved: Citation[];
  available_tools: string[];
  tool_calls: ToolCallTrace[];
  plan: string[];
  flow_path: string[];
  input_verdict: Verdict;
  output_verdict: Verdict;
  /** Rules whose condition could not be evaluated, and flow problems; the turn went on without them. */
  errors: Array<{ where: string; message: string }>;
  timings_ms: TurnTimings;
}

/** What metrics learn of a finished turn. */
export interface TurnOutcome {
  status: RunStatus;
  seconds: number;
  toolCalls: string[];
  tokensIn: number;
  tokensOut: number;
}

/** A turn ready to run: its agent is loaded and its request checked. */
export interface PreparedTurn {
  streamMode: StreamMode;
  run(onText?: (delta: string) => void): Promise<ChatResponse>;
}

export interface ChatResponse {
  run_id: string;
  conversation_id: string;
  message: { role: 'assistant'; content: string };
  citations: Citation[];
  ui_actions: UiAction[];
  escalated: boolean;
  usage: { tokens_in: number; tokens_out: number };
  trace: Trace;
}

/** How many earlier turns of a conversation the model sees. */
export const CONTEXT_TURNS = 20;
/** Passages retrieved per turn (and per flow `retrieve` node unless it says). */
export const RETRIEVE_TOP_K = 5;
const ESCALATE_DEFAULT = "I'm handing this conversation over to a person who can help.";
const ALLOWED: Verdict = { allowed: true, risk: 0, checks: [], failed_open: false };

/** One chat turn in progress: what it has done so far, which becomes the trace and the run. */
class Turn {
  readonly runId = newId();
  readonly createdAt = nowMs();
  plan: string[] = [];
  flowPath: string[] = [];
  matchedRules: RuleView[] = [];
  retrieved: Citation[] = [];
  availableTools: string[] = [];
  toolCalls: ToolCallTrace[] = [];
  toolResults: Record<string, { status: string; result: string }> = {};
  uiActions: UiAction[] = [];
  errors: Array<{ where: string; message: string }> = [];
  inputVerdict: Verdict = ALLOWED;
  outputVerdict: Verdict = ALLOWED;
  llmCalls = 0;
  tokensIn = 0;
  tokensOut = 0;
  escalated = false;
  status: RunStatus = 'ok';
  /** null until something answers */
  answer: string | null = null;
  citations: Citation[] = [];
  extracted: Record<string, unknown> = {};
  /** The last intermediate answer of a flow's `llm` node. */
  lastAnswer: string | null = null;
  /** The turn's model messages: context, the request, then tool calls and results. */
  messages: ModelMessage[] = [];
  timings: TurnTimings = { rules: 0, guardrails: 0, retrieval: 0, model: 0, tools: 0, persistence: 0, total: 0 };

  constructor(
    readonly agent: LoadedAgent,
    readonly conversationId: string,
    readonly input: ChatInput,
    readonly message: string,
    readonly turnNumber: number,
    readonly instructions: string,
    /** When the turn was opened (its agent loaded): the start of its server time. */
    readonly started: number,
  ) {}

  /** Runs `work`, adding its time to one of the timings. */
  async timed<T>(bucket: Exclude<keyof TurnTimings, 'total'>, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.timings[bucket] += performance.now() - start;
    }
  }

  conditionInput(): ConditionInput {
    return {
      message: this.message,
      messages: this.input.messages.map((m) => ({ role: m.role, content: m.content })),
      turn: this.turnNumber,
      user_id: this.input.user_id ?? '',
      metadata: this.input.metadata ?? {},
      retrieved: this.retrieved.map((c) => ({ text: c.text, score: c.score, filename: c.filename, document_id: c.document_id })),
      tools: this.toolResults,
      answer: this.answer ?? this.lastAnswer ?? '',
      extracted: this.extracted,
    };
  }

  done(): boolean {
    return this.answer !== null;
  }
}

/**
 * Runs chat turns. A turn, in order: the agent's rules (highest priority first; a matching
 * escalation, response or block ends the turn with its action text, ui_action rules add an
 * action), the input guardrails (a block answers with the fallback message without calling the
 * model), then either the agent's flow or retrieval across the attached knowledge and the
 * tool-calling loop under the tool policy, then the output guardrails (a block replaces the
 * answer). Every turn, failed ones too, is persisted as a run.
 */
export class ChatTurns {
  constructor(
    private readonly agents: Agents,
    private readonly runRows: AgentsRepository,
    private readonly knowledge: Knowledge,
    private readonly models: LanguageModels,
    private readonly guardrails: Guardrails,
    private readonly tools: ToolRunner,
    private readonly secrets: Secrets,
    private readonly extraction: RecordExtraction,
    private readonly log: Logger,
    private readonly observe: (turn: TurnOutcome) => void = () => undefined,
  ) {}

  /**
   * Prepares a turn: loads the agent (404 when unknown) and checks the request, so that a
   * streamed turn fails with a plain HTTP error before any event is sent. `run` does the turn;
   * its `onText` receives the answer as it is produced (server-sent events). With output
   * guardrails on, the answer is held back until it has been checked, then sent at once.
   */
  async open(projectId: string, agentName: string, input: ChatInput): Promise<PreparedTurn> {
    const started = performance.now();
    const agent = await this.agents.load(projectId, agentName);
    if (!input.messages.some((m) => m.role === 'user')) {
      throw badRequest('validation_failed', 'A chat turn needs at least one message with role user.', [{ path: '/messages', message: 'has no user message' }]);
    }
    return { streamMode: agent.view.stream_mode, run: (onText) => this.chat(agent, input, started, onText) };
  }

  /** A project's runs of an agent, newest first. */
  async runs(projectId: string, agentName: string, limit: number, offset: number, conversationId?: string): Promise<RunSummary[]> {
    const agentId = await this.agents.idOf(projectId, agentName);
    return (await this.runRows.listRuns(projectId, agentId, limit, offset, conversationId)).map(runSummary);
  }

  /** One run with its trace; 404 when the agent has no such run. */
  async run(projectId: string, agentName: string, runId: string): Promise<RunDetail> {
    const row = await this.runRows.run(projectId, await this.agents.idOf(projectId, agentName), runId);
    if (!row) throw notFound(`Agent "${agentName}" has no run "${runId}".`);
    return runDetail(row);
  }

  private async chat(agent: LoadedAgent, input: ChatInput, started: number, onText?: (delta: string) => void): Promise<ChatResponse> {
    const projectId = agent.projectId;
    const conversationId = input.conversation_id ?? newId();
    const history = input.conversation_id !== undefined ? await this.runRows.conversation(projectId, agent.view.id, conversationId, CONTEXT_TURNS) : [];
    const system = input.messages.filter((m) => m.role === 'system').map((m) => m.content);
    const instructions = [agent.view.instructions, ...system].filter((s) => s.trim() !== '').join('\n\n');
    const latest = [...input.messages].reverse().find((m) => m.role === 'user');
    const turn = new Turn(agent, conversationId, input, latest?.content ?? '', history.length + 1, instructions, started);
    for (const past of history) {
      for (const m of JSON.parse(past.input) as ChatMessage[]) if (m.role !== 'system') turn.messages.push({ role: m.role, content: m.content });
      turn.messages.push({ role: 'assistant', content: past.answer });
    }
    for (const m of input.messages) if (m.role !== 'system') turn.messages.push({ role: m.role, content: m.content });
    // with output guardrails on, the answer is held back until it has been checked
    let streamed = false;
    const stream =
      onText && !agent.view.guardrails.output.enabled
        ? (delta: string) => {
            streamed = true;
            onText(delta);
          }
        : undefined;
    try {
      await this.turn(turn, stream);
    } catch (err) {
      turn.status = 'failed';
      await this.persist(turn, err);
      throw err;
    }
    // fixed answers (rules, flows, blocks) and held-back ones go out at once
    if (onText && !streamed && turn.answer) onText(turn.answer);
    return this.persist(turn, null);
  }

  private async turn(turn: Turn, onText: ((delta: string) => void) | undefined): Promise<void> {
    const view = turn.agent.view;
    turn.plan.push('rules');
    await turn.timed('rules', async () => this.applyRules(turn));
    if (turn.done()) return;
    if (view.guardrails.input.enabled) {
      turn.plan.push('input_guardrails');
      turn.inputVerdict = await turn.timed('guardrails', () => this.guardrails.check(view.guardrails.input, turn.message, 'input'));
      if (!turn.inputVerdict.allowed) {
        turn.status = 'blocked';
        turn.answer = view.fallback_message;
        return;
      }
    }
    if (view.flow) {
      await this.runFlow(turn, onText);
    } else {
      if (view.knowledge.length > 0) await this.retrieve(turn, view.knowledge, RETRIEVE_TOP_K);
      await this.modelLoop(turn, turn.instructions, this.offered(turn), onText);
    }
    turn.answer ??= view.fallback_message;
    if (view.guardrails.output.enabled && !turn.escalated) {
      turn.plan.push('output_guardrails');
      turn.outputVerdict = await turn.timed('guardrails', () => this.guardrails.check(view.guardrails.output, turn.answer ?? '', 'output'));
      if (!turn.outputVerdict.allowed) {
        turn.status = 'blocked';
        turn.answer = view.fallback_message;
        turn.citations = [];
      }
    }
  }

  private applyRules(turn: Turn): void {
    const input = turn.conditionInput();
    for (const rule of turn.agent.view.rules) {
      let matched: boolean;
      try {
        matched = compileCondition(rule.condition, 'rule', `/rules/${rule.id}/condition`)(input);
      } catch (err) {
        turn.errors.push({ where: `rule ${rule.id}`, message: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
        continue;
      }
      if (!matched) continue;
      turn.matchedRules.push(rule);
      switch (rule.rule_type) {
        case 'ui_action':
          turn.uiActions.push({ type: rule.action, source: 'rule', rule_id: rule.id });
          continue;
        case 'escalation':
          turn.escalated = true;
          turn.status = 'escalated';
          turn.plan.push('escalate');
          break;
        case 'block':
          turn.status = 'blocked';
          turn.plan.push('block');
          break;
        case 'response':
          turn.plan.push('respond:rule');
          break;
      }
      turn.answer = rule.action;
      return;
    }
  }

  private async retrieve(turn: Turn, names: string[], topK: number): Promise<void> {
    turn.plan.push('retrieve');
    await turn.timed('retrieval', async () => {
      const existing = await this.knowledge.existing(turn.agent.projectId, names);
      for (const missing of names.filter((n) => !existing.includes(n))) turn.errors.push({ where: 'retrieve', message: `knowledge base "${missing}" no longer exists` });
      if (existing.length === 0 || turn.message.trim() === '') return;
      const found = await this.knowledge.search(turn.agent.projectId, existing, { query: turn.message.slice(0, 4096), top_k: topK });
      const seen = new Set(turn.retrieved.map((c) => c.chunk_id));
      turn.retrieved.push(...found.filter((c) => !seen.has(c.chunk_id)));
    });
  }

  /** The tools the model is offered under the tool policy. */
  private offered(turn: Turn): ToolDefinition[] {
    const allow = turn.agent.view.tool_policy.allow;
    const all = allow.includes('*');
    return turn.agent.tools.filter((t) => all || allow.includes(t.name));
  }

  private passages(turn: Turn): Passage[] {
    return turn.retrieved.map((c) => ({ id: c.chunk_id, text: c.text, document_id: c.document_id, filename: c.filename, score: c.score }));
  }

  private model(turn: Turn): LanguageModel {
    return this.models.get(turn.agent.view.model);
  }

  private async callModel(turn: Turn, instructions: string, tools: ToolDefinition[], onText?: (delta: string) => void): Promise<ModelReply> {
    const specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    const reply = await turn.timed('model', () =>
      this.model(turn).chat(
        { instructions, messages: turn.messages, documents: this.passages(turn), tools: specs, fallback: turn.agent.view.fallback_message },
        onText ? { onText } : {},
      ),
    );
    turn.llmCalls += 1;
    turn.tokensIn += reply.usage.tokens_in;
    turn.tokensOut += reply.usage.tokens_out;
    return reply;
  }

  /**
   * The tool-calling loop: the model answers or asks for tools; their results go back to it
   * until it answers. `maxCallsPerTurn` is a hard cap across the turn: a call past it is not
   * made (status `limit_exceeded`) and the model is then asked to answer without tools.
   */
  private async modelLoop(turn: Turn, instructions: string, offered: ToolDefinition[], onText?: (delta: string) => void): Promise<void> {
    const cap = turn.agent.view.tool_policy.maxCallsPerTurn;
    let capped = false;
    // each round makes at least one call, so the cap bounds the rounds
    for (let round = 0; round <= cap + 1; round += 1) {
      const tools = capped || this.callsMade(turn) >= cap ? [] : offered;
      for (const t of tools) if (!turn.availableTools.includes(t.name)) turn.availableTools.push(t.name);
      turn.plan.push(tools.length > 0 ? 'llm:tools' : 'llm');
      const reply = await this.callModel(turn, instructions, tools, onText);
      if (reply.toolCalls.length === 0 || tools.length === 0) {
        turn.answer = reply.text.trim() === '' ? turn.agent.view.fallback_message : reply.text;
        const byId = new Map(turn.retrieved.map((c) => [c.chunk_id, c]));
        turn.citations = reply.citations.map((id) => byId.get(id)).filter((c): c is Citation => c !== undefined);
        return;
      }
      turn.messages.push({ role: 'assistant', content: reply.text, tool_calls: reply.toolCalls });
      for (const call of reply.toolCalls) {
        const tool = offered.find((t) => t.name === call.name);
        if (this.callsMade(turn) >= cap) {
          capped = true;
          this.record(turn, call, { status: 'limit_exceeded', result: `Not called: this turn reached its limit of ${cap} tool calls.`, duration_ms: 0 });
        } else if (!tool) {
          this.record(turn, call, { status: 'denied', result: `There is no tool "${call.name}" available to this agent.`, duration_ms: 0 });
        } else {
          await this.callTool(turn, tool, call);
        }
      }
    }
    turn.errors.push({ where: 'tool loop', message: 'the model kept asking for tools after the limit' });
  }

  /** Calls that count against the cap: every call actually attempted. */
  private callsMade(turn: Turn): number {
    return turn.toolCalls.filter((c) => c.status !== 'limit_exceeded').length;
  }

  private async callTool(turn: Turn, tool: ToolDefinition, call: ToolCallRequest): Promise<void> {
    turn.plan.push(`tool:${tool.name}`);
    const outcome = await turn.timed('tools', async () => {
      const secret = tool.secret_ref !== null ? await this.secrets.reveal(turn.agent.projectId, tool.secret_ref) : null;
      if (tool.secret_ref !== null && secret === null) {
        return { status: 'error' as const, result: `The secret "${tool.secret_ref}" this tool uses is not set.`, duration_ms: 0 };
      }
      return this.tools.run({ projectId: turn.agent.projectId, agentId: turn.agent.view.id, tool, args: call.arguments, secret });
    });
    this.record(turn, call, outcome);
  }

  private record(turn: Turn, call: ToolCallRequest, outcome: { status: ToolCallTrace['status']; result: string; http_status?: number; duration_ms: number }): void {
    turn.toolCalls.push({
      tool: call.name,
      arguments: JSON.stringify(call.arguments),
      result: outcome.result,
      status: outcome.status,
      ...(outcome.http_status !== undefined ? { http_status: outcome.http_status } : {}),
      duration_ms: Math.round(outcome.duration_ms),
    });
    turn.toolResults[call.name] = { status: outcome.status, result: outcome.result };
    const last = turn.messages.at(-1);
    if (!(last?.role === 'assistant' && last.tool_calls?.some((c) => c.id === call.id))) {
      turn.messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    }
    // a result goes as the tool sent it, so the models can read a JSON one as JSON; a call that did not succeed says why
    const content = outcome.status === 'ok' ? outcome.result : `[${outcome.status}] ${outcome.result}`;
    turn.messages.push({ role: 'tool', tool_call_id: call.id, name: call.name, content });
  }

  /** Walks the agent's flow from its start node, at most `FLOW_LIMITS.steps` steps. */
  private async runFlow(turn: Turn, onText: ((delta: string) => void) | undefined): Promise<void> {
    const flow = turn.agent.view.flow!;
    let id: string | undefined = flow.start;
    let steps = 0;
    while (id !== undefined && !turn.done()) {
      if (steps >= FLOW_LIMITS.steps) {
        turn.errors.push({ where: 'flow', message: `stopped after ${FLOW_LIMITS.steps} steps (a loop?)` });
        turn.plan.push('flow:step_cap');
        break;
      }
      steps += 1;
      const node: FlowNode | undefined = flow.nodes[id];
      if (!node) break;
      turn.flowPath.push(id);
      id = await this.step(turn, node, onText);
    }
  }

  /** Runs one flow node; the id of the next one, if any. */
  private async step(turn: Turn, node: FlowNode, onText: ((delta: string) => void) | undefined): Promise<string | undefined> {
    const view = turn.agent.view;
    switch (node.type) {
      case 'retrieve':
        await this.retrieve(turn, node.knowledge ?? view.knowledge, node.top_k ?? RETRIEVE_TOP_K);
        return node.next;
      case 'llm': {
        const instructions = [turn.instructions, node.instructions ?? ''].filter((s) => s.trim() !== '').join('\n\n');
        const answerNow = node.next === undefined;
        await this.modelLoop(turn, instructions, node.tools === false ? [] : this.offered(turn), answerNow ? onText : undefined);
        if (answerNow) return undefined;
        // an intermediate answer is context for what follows, not the reply yet
        const answer = turn.answer;
        turn.answer = null;
        if (answer !== null) {
          turn.messages.push({ role: 'assistant', content: answer });
          turn.lastAnswer = answer;
        }
        return node.next;
      }
      case 'tool': {
        const tool = turn.agent.tools.find((t) => t.name === node.tool);
        const call: ToolCallRequest = { id: `flow_${turn.toolCalls.length + 1}`, name: node.tool ?? '', arguments: {} };
        if (!tool) {
          this.record(turn, call, { status: 'error', result: `The agent has no tool "${node.tool}".`, duration_ms: 0 });
          return node.next;
        }
        if (this.callsMade(turn) >= view.tool_policy.maxCallsPerTurn) {
          this.record(turn, call, { status: 'limit_exceeded', result: `Not called: this turn reached its limit of ${view.tool_policy.maxCallsPerTurn} tool calls.`, duration_ms: 0 });
          return node.next;
        }
        if (!turn.availableTools.includes(tool.name)) turn.availableTools.push(tool.name);
        const args = node.arguments ? this.flowArguments(turn, node.arguments) : await this.readArguments(turn, tool);
        if (args === null) {
          this.record(turn, call, { status: 'error', result: 'The arguments could not be read from the conversation.', duration_ms: 0 });
          return node.next;
        }
        await this.callTool(turn, tool, { ...call, arguments: args });
        return node.next;
      }
      case 'condition': {
        turn.plan.push('condition');
        let result = false;
        try {
          result = compileCondition(node.if ?? 'false', 'flow', 'if')(turn.conditionInput());
        } catch (err) {
          turn.errors.push({ where: `flow ${turn.flowPath.at(-1)}`, message: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
        }
        return result ? node.then : node.else;
      }
      case 'respond':
        turn.plan.push('respond');
        turn.answer = node.text ?? turn.lastAnswer ?? view.fallback_message;
        return undefined;
      case 'escalate':
        turn.plan.push('escalate');
        turn.escalated = true;
        turn.status = 'escalated';
        turn.answer = node.text ?? ESCALATE_DEFAULT;
        return undefined;
      case 'extract': {
        turn.plan.push('extract');
        const outcome = await turn.timed('model', () =>
          this.extraction.request(turn.agent.projectId, node.schema ?? '', {
            messages: turn.input.messages.filter((m) => m.role !== 'system'),
            agent_id: view.name,
            run_id: turn.runId,
            ...(turn.input.user_id !== undefined ? { user_id: turn.input.user_id } : {}),
          }),
        );
        turn.extracted = outcome.stored ? { stored: true, record_id: outcome.record.id, missing: [] } : { stored: false, missing: outcome.missing };
        return node.next;
      }
    }
  }

  /** A flow tool node's arguments: each CEL expression evaluated over the turn. */
  private flowArguments(turn: Turn, expressions: Record<string, string>): Record<string, unknown> | null {
    const args: Record<string, unknown> = {};
    for (const [name, expression] of Object.entries(expressions)) {
      try {
        args[name] = compileValue(expression, `arguments/${name}`)(turn.conditionInput());
      } catch (err) {
        turn.errors.push({ where: `flow argument ${name}`, message: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
        return null;
      }
    }
    return args;
  }

  /** Asks the model for a tool's arguments, offering it that tool alone. */
  private async readArguments(turn: Turn, tool: ToolDefinition): Promise<Record<string, unknown> | null> {
    turn.plan.push('llm:arguments');
    const reply = await this.callModel(turn, turn.instructions, [tool]);
    const call = reply.toolCalls.find((c) => c.name === tool.name);
    return call ? call.arguments : null;
  }

  private async persist(turn: Turn, error: unknown): Promise<ChatResponse> {
    const view = turn.agent.view;
    const uiActions: UiAction[] = [...view.ui_actions.map((type) => ({ type, source: 'agent' as const })), ...turn.uiActions];
    turn.timings.total = performance.now() - turn.started;
    const response: ChatResponse = {
      run_id: turn.runId,
      conversation_id: turn.conversationId,
      message: { role: 'assistant', content: turn.answer ?? '' },
      citations: turn.citations,
      ui_actions: uiActions,
      escalated: turn.escalated,
      usage: { tokens_in: turn.tokensIn, tokens_out: turn.tokensOut },
      trace: {
        matched_rules: turn.matchedRules,
        retrieved: turn.retrieved,
        available_tools: turn.availableTools,
        tool_calls: turn.toolCalls,
        plan: turn.plan,
        flow_path: turn.flowPath,
        input_verdict: turn.inputVerdict,
        output_verdict: turn.outputVerdict,
        errors: turn.errors,
        timings_ms: roundTimings(turn.timings),
      },
    };
    const failure = error instanceof AppError ? { status: error.status, code: error.code, detail: error.message } : error ? { status: 500, code: 'internal_error', detail: 'The turn failed on the server.' } : null;
    const row: RunRow = {
      id: turn.runId,
      project_id: turn.agent.projectId,
      agent_id: view.id,
      conversation_id: turn.conversationId,
      status: turn.status,
      escalated: turn.escalated,
      llm_calls: turn.llmCalls,
      tokens_in: turn.tokensIn,
      tokens_out: turn.tokensOut,
      latency_ms: Math.round(turn.timings.total),
      input: JSON.stringify(turn.input.messages),
      answer: turn.answer ?? '',
      detail: JSON.stringify({
        request: { user_id: turn.input.user_id ?? null, metadata: turn.input.metadata ?? {}, messages: turn.input.messages },
        trace: {
          input_verdict: turn.inputVerdict,
          output_verdict: turn.outputVerdict,
          retrieved: turn.retrieved,
          tool_calls: turn.toolCalls,
          matched_rules: turn.matchedRules,
          plan: turn.plan,
          flow_path: turn.flowPath,
        },
        response: failure ? null : response,
        error: failure,
      } satisfies StoredDetail),
      created_at: turn.createdAt,
    };
    const start = performance.now();
    try {
      await this.runRows.insertRun(row);
    } catch (err) {
      // a failed turn's own error matters more than its record
      if (!error) throw err;
      this.log.error({ err, run_id: turn.runId }, 'could not persist a failed run');
    }
    response.trace.timings_ms.persistence = round(performance.now() - start);
    response.trace.timings_ms.total = round(performance.now() - turn.started);
    this.observe({ status: turn.status, seconds: response.trace.timings_ms.total / 1000, toolCalls: turn.toolCalls.map((c) => c.status), tokensIn: turn.tokensIn, tokensOut: turn.tokensOut });
    return response;
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

function roundTimings(t: TurnTimings): TurnTimings {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, round(v)])) as unknown as TurnTimings;
}

