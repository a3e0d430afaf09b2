import type { RunStatus } from '../../../db/repositories/agents.repository.js';
import type { Citation } from '../../knowledge/knowledge.js';
import type { RuleView, StreamMode } from '../agents.js';
import type { Verdict } from '../guardrails.js';
import type { ToolCallStatus } from '../tool-runner.js';

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
