import type { RunRow, RunStatus, RunSummaryRow } from '../../db/repositories/agents.repository.js';
import type { Citation } from '../knowledge/knowledge.js';
import type { RuleView } from './agents.js';
import type { Verdict } from './guardrails.js';
import type { ChatMessage, ChatResponse, ToolCallTrace } from './turn/types.js';

/** A run in a list. */
export interface RunSummary {
  id: string;
  created_at: number;
  status: RunStatus;
  escalated: boolean;
  conversation_id: string;
  llm_calls: number;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
}

/** A run with its whole trace; `response` is null and `error` set for a failed turn. */
export interface RunDetail extends RunSummary {
  messages: ChatMessage[];
  user_id: string | null;
  metadata: Record<string, unknown>;
  input_verdict: Verdict | null;
  output_verdict: Verdict | null;
  retrieved: Citation[];
  tool_calls: ToolCallTrace[];
  matched_rules: RuleView[];
  plan: string[];
  flow_path: string[];
  response: ChatResponse | null;
  error: { status: number; code: string; detail: string } | null;
}

/** What a run row's `detail` column holds. */
export interface StoredDetail {
  request: { user_id: string | null; metadata: Record<string, unknown>; messages: ChatMessage[] };
  /** The trace so far of a failed turn, the response's of a finished one. */
  trace: Pick<ChatResponse['trace'], 'input_verdict' | 'output_verdict' | 'retrieved' | 'tool_calls' | 'matched_rules' | 'plan' | 'flow_path'>;
  response: ChatResponse | null;
  error: RunDetail['error'];
}

export function runSummary(row: RunSummaryRow): RunSummary {
  return {
    id: row.id,
    created_at: Number(row.created_at),
    status: row.status,
    escalated: Boolean(row.escalated),
    conversation_id: row.conversation_id,
    llm_calls: row.llm_calls,
    tokens_in: row.tokens_in,
    tokens_out: row.tokens_out,
    latency_ms: row.latency_ms,
  };
}

export function runDetail(row: RunRow): RunDetail {
  const detail = JSON.parse(row.detail) as StoredDetail;
  return {
    ...runSummary(row),
    messages: detail.request.messages,
    user_id: detail.request.user_id,
    metadata: detail.request.metadata,
    ...detail.trace,
    response: detail.response,
    error: detail.error,
  };
}
