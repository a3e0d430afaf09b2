import type { AgentsRepository } from '../../db/repositories/agents.repository.js';
import { badRequest, notFound } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { inSpan, tracingEnabled } from '../../lib/tracing.js';
import type { RecordExtraction } from '../memory/record-extraction.js';
import type { Knowledge } from '../knowledge/knowledge.js';
import type { Secrets } from '../secrets.js';
import type { Agents, LoadedAgent } from './agents.js';
import type { Guardrails } from './guardrails.js';
import type { LanguageModels } from '../../providers/registry.js';
import { runDetail, runSummary, type RunDetail, type RunSummary } from './runs.js';
import type { McpClient } from './mcp-client.js';
import type { ToolRunner } from './tool-runner.js';
import { openTurn } from './turn/context.stage.js';
import { FlowRunner } from './turn/flow.stage.js';
import { checkInput, checkOutput } from './turn/guardrails.stage.js';
import { listMcpTools } from './turn/mcp.stage.js';
import { ModelLoop } from './turn/model-loop.stage.js';
import { RunRecorder } from './turn/record.stage.js';
import { retrieve, RETRIEVE_TOP_K } from './turn/retrieval.stage.js';
import { applyRules } from './turn/rules.stage.js';
import type { Turn } from './turn/turn-state.js';
import type { ChatInput, ChatResponse, PreparedTurn, TurnOutcome } from './turn/types.js';

/**
 * Runs chat turns. A turn, in order: the agent's rules (highest priority first; a matching
 * escalation, response or block ends the turn with its action text, ui_action rules add an
 * action), the input guardrails (a block answers with the fallback message without calling the
 * model), then either the agent's flow or retrieval across the attached knowledge and the
 * tool-calling loop under the tool policy, then the output guardrails (a block replaces the
 * answer). Every turn, failed ones too, is persisted as a run.
 */
export class ChatTurns {
  private readonly loop: ModelLoop;
  private readonly flows: FlowRunner;
  private readonly recorder: RunRecorder;

  constructor(
    private readonly agents: Agents,
    private readonly runRows: AgentsRepository,
    private readonly knowledge: Knowledge,
    models: LanguageModels,
    private readonly guardrails: Guardrails,
    tools: ToolRunner,
    private readonly mcp: McpClient,
    private readonly secrets: Secrets,
    extraction: RecordExtraction,
    log: Logger,
    observe: (turn: TurnOutcome) => void = () => undefined,
  ) {
    this.loop = new ModelLoop(models, tools, mcp, secrets);
    this.flows = new FlowRunner(knowledge, this.loop, extraction);
    this.recorder = new RunRecorder(runRows, log, observe);
  }

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
    return { streamMode: agent.view.stream_mode, run: (onText) => this.tracedChat(agent, input, started, onText) };
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

  /**
   * The turn, while tracing is on, as an `invoke_agent <name>` span (the GenAI semantic
   * conventions' agent invocation) around its model and tool calls, with the turn's tokens.
   */
  private tracedChat(agent: LoadedAgent, input: ChatInput, started: number, onText?: (delta: string) => void): Promise<ChatResponse> {
    if (!tracingEnabled()) return this.chat(agent, input, started, onText);
    const attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': agent.view.id,
      'gen_ai.agent.name': agent.view.name,
      'gen_ai.request.model': agent.view.model,
    };
    return inSpan(`invoke_agent ${agent.view.name}`, { attributes }, (span) =>
      this.chat(agent, input, started, onText, (turn) =>
        span.setAttributes({
          'gen_ai.conversation.id': turn.conversationId,
          'gen_ai.usage.input_tokens': turn.tokensIn,
          'gen_ai.usage.output_tokens': turn.tokensOut,
          'cairn.run.id': turn.runId,
          'cairn.run.status': turn.status,
        }),
      ),
    );
  }

  private async chat(agent: LoadedAgent, input: ChatInput, started: number, onText?: (delta: string) => void, done?: (turn: Turn) => void): Promise<ChatResponse> {
    const turn = await openTurn(this.runRows, agent, input, started);
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
      await this.stages(turn, stream);
    } catch (err) {
      turn.status = 'failed';
      await this.recorder.record(turn, err);
      done?.(turn);
      throw err;
    }
    // fixed answers (rules, flows, blocks) and held-back ones go out at once
    if (onText && !streamed && turn.answer) onText(turn.answer);
    const response = await this.recorder.record(turn, null);
    done?.(turn);
    return response;
  }

  /** The stages between opening a turn and recording it; one that answers (a rule, an input block) ends the turn. */
  private async stages(turn: Turn, onText: ((delta: string) => void) | undefined): Promise<void> {
    const view = turn.agent.view;
    await applyRules(turn);
    if (turn.done()) return;
    await checkInput(this.guardrails, turn);
    if (turn.done()) return;
    await listMcpTools(this.mcp, this.secrets, turn);
    if (view.flow) {
      await this.flows.run(turn, onText);
    } else {
      if (view.knowledge.length > 0) await retrieve(this.knowledge, turn, view.knowledge, RETRIEVE_TOP_K);
      await this.loop.run(turn, turn.instructions, turn.offeredTools(), onText);
    }
    turn.answer ??= view.fallback_message;
    await checkOutput(this.guardrails, turn);
  }
}
