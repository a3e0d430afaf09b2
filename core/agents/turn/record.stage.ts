import type { AgentsRepository, RunRow } from '../../../db/repositories/agents.repository.js';
import { AppError } from '../../../lib/errors.js';
import type { Logger } from '../../../lib/logger.js';
import type { StoredDetail } from '../runs.js';
import type { Turn } from './turn-state.js';
import type { ChatResponse, TurnOutcome, TurnTimings, UiAction } from './types.js';

/** The last stage of every turn, failed ones too: its response, stored as a run, and what metrics learn of it. */
export class RunRecorder {
  constructor(
    private readonly runs: AgentsRepository,
    private readonly log: Logger,
    private readonly observe: (turn: TurnOutcome) => void,
  ) {}

  /** Stores the turn as a run and answers its response; `error` is what failed the turn, if anything did. */
  async record(turn: Turn, error: unknown): Promise<ChatResponse> {
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
      await this.runs.insertRun(row);
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
