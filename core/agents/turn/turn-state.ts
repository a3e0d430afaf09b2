import type { RunStatus } from '../../../db/repositories/agents.repository.js';
import { newId, nowMs } from '../../../lib/time.js';
import type { Citation } from '../../knowledge/knowledge.js';
import type { LoadedAgent, RuleView } from '../agents.js';
import type { ConditionInput } from '../conditions.js';
import type { Verdict } from '../guardrails.js';
import type { ModelMessage, ToolCallRequest } from '../../../providers/language-model.js';
import type { McpToolDefinition } from '../mcp-client.js';
import type { ToolDefinition } from '../tool-runner.js';
import type { ChatInput, ToolCallTrace, TurnTimings, UiAction } from './types.js';

/** A tool the model may be offered: an HTTP tool, or one of an MCP server's. */
export type AgentTool = ToolDefinition | McpToolDefinition;

/** Whether a tool is one of an MCP server's. */
export const isMcpTool = (tool: AgentTool): tool is McpToolDefinition => 'server' in tool;

const ALLOWED: Verdict = { allowed: true, risk: 0, checks: [], failed_open: false };

/** What became of one tool call, as the turn records it. */
export interface ToolCallOutcome {
  status: ToolCallTrace['status'];
  result: string;
  http_status?: number;
  duration_ms: number;
}

/**
 * One chat turn in progress: what its stages have done so far, which becomes the trace and the
 * run. A stage that answers (sets `answer`) ends the turn.
 */
export class Turn {
  readonly runId = newId();
  readonly createdAt = nowMs();
  plan: string[] = [];
  flowPath: string[] = [];
  matchedRules: RuleView[] = [];
  retrieved: Citation[] = [];
  availableTools: string[] = [];
  /** The agent's MCP servers' tools, once listed for this turn (`listMcpTools`). */
  mcpTools: McpToolDefinition[] = [];
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

  /** Notes a problem the turn goes on without (a condition that could not be evaluated): the first line of its message. */
  noteError(where: string, err: unknown): void {
    this.errors.push({ where, message: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
  }

  /** The tools the model is offered under the tool policy: HTTP tools, then the MCP servers' (namespaced). */
  offeredTools(): AgentTool[] {
    const allow = this.agent.view.tool_policy.allow;
    const all = allow.includes('*');
    return [...this.agent.tools, ...this.mcpTools].filter((t) => all || allow.includes(t.name));
  }

  /** One of the agent's tools by the name the model knows it by, whatever the policy; undefined when none. */
  tool(name: string): AgentTool | undefined {
    return this.agent.tools.find((t) => t.name === name) ?? this.mcpTools.find((t) => t.name === name);
  }

  /** Calls that count against the cap: every call actually attempted. */
  callsMade(): number {
    return this.toolCalls.filter((c) => c.status !== 'limit_exceeded').length;
  }

  /** Records a tool call in the trace, and its result in the model's messages. */
  recordToolCall(call: ToolCallRequest, outcome: ToolCallOutcome): void {
    this.toolCalls.push({
      tool: call.name,
      arguments: JSON.stringify(call.arguments),
      result: outcome.result,
      status: outcome.status,
      ...(outcome.http_status !== undefined ? { http_status: outcome.http_status } : {}),
      duration_ms: Math.round(outcome.duration_ms),
    });
    this.toolResults[call.name] = { status: outcome.status, result: outcome.result };
    const last = this.messages.at(-1);
    if (!(last?.role === 'assistant' && last.tool_calls?.some((c) => c.id === call.id))) {
      this.messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    }
    // a result goes as the tool sent it, so the models can read a JSON one as JSON; a call that did not succeed says why
    const content = outcome.status === 'ok' ? outcome.result : `[${outcome.status}] ${outcome.result}`;
    this.messages.push({ role: 'tool', tool_call_id: call.id, name: call.name, content });
  }
}
