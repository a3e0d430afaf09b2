import type { RecordExtraction } from '../../memory/record-extraction.js';
import type { Knowledge } from '../../knowledge/knowledge.js';
import { FLOW_LIMITS, type FlowNode } from '../agents.js';
import { compileCondition, compileValue } from '../conditions.js';
import type { ToolCallRequest } from '../../../providers/language-model.js';
import type { ModelLoop } from './model-loop.stage.js';
import { retrieve, RETRIEVE_TOP_K } from './retrieval.stage.js';
import type { AgentTool, Turn } from './turn-state.js';

const ESCALATE_DEFAULT = "I'm handing this conversation over to a person who can help.";

/** An agent's flow, in place of retrieval and the model loop: its nodes run one after another from the start node. */
export class FlowRunner {
  constructor(
    private readonly knowledge: Knowledge,
    private readonly loop: ModelLoop,
    private readonly extraction: RecordExtraction,
  ) {}

  /** Walks the agent's flow from its start node, at most `FLOW_LIMITS.steps` steps. */
  async run(turn: Turn, onText: ((delta: string) => void) | undefined): Promise<void> {
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
        await retrieve(this.knowledge, turn, node.knowledge ?? view.knowledge, node.top_k ?? RETRIEVE_TOP_K);
        return node.next;
      case 'llm': {
        const instructions = [turn.instructions, node.instructions ?? ''].filter((s) => s.trim() !== '').join('\n\n');
        const answerNow = node.next === undefined;
        await this.loop.run(turn, instructions, node.tools === false ? [] : turn.offeredTools(), answerNow ? onText : undefined);
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
        // an MCP tool by its namespaced name, if its server listed it for this turn
        const tool = node.tool === undefined ? undefined : turn.tool(node.tool);
        const call: ToolCallRequest = { id: `flow_${turn.toolCalls.length + 1}`, name: node.tool ?? '', arguments: {} };
        if (!tool) {
          turn.recordToolCall(call, { status: 'error', result: `The agent has no tool "${node.tool}".`, duration_ms: 0 });
          return node.next;
        }
        if (turn.callsMade() >= view.tool_policy.maxCallsPerTurn) {
          turn.recordToolCall(call, { status: 'limit_exceeded', result: `Not called: this turn reached its limit of ${view.tool_policy.maxCallsPerTurn} tool calls.`, duration_ms: 0 });
          return node.next;
        }
        if (!turn.availableTools.includes(tool.name)) turn.availableTools.push(tool.name);
        const args = node.arguments ? this.flowArguments(turn, node.arguments) : await this.readArguments(turn, tool);
        if (args === null) {
          turn.recordToolCall(call, { status: 'error', result: 'The arguments could not be read from the conversation.', duration_ms: 0 });
          return node.next;
        }
        await this.loop.callTool(turn, tool, { ...call, arguments: args });
        return node.next;
      }
      case 'condition': {
        turn.plan.push('condition');
        let result = false;
        try {
          result = compileCondition(node.if ?? 'false', 'flow', 'if')(turn.conditionInput());
        } catch (err) {
          turn.noteError(`flow ${turn.flowPath.at(-1)}`, err);
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
        turn.noteError(`flow argument ${name}`, err);
        return null;
      }
    }
    return args;
  }

  /** Asks the model for a tool's arguments, offering it that tool alone. */
  private async readArguments(turn: Turn, tool: AgentTool): Promise<Record<string, unknown> | null> {
    turn.plan.push('llm:arguments');
    const reply = await this.loop.callModel(turn, turn.instructions, [tool]);
    const call = reply.toolCalls.find((c) => c.name === tool.name);
    return call ? call.arguments : null;
  }
}
