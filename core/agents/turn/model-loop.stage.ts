import type { Citation } from '../../knowledge/knowledge.js';
import type { Secrets } from '../../secrets.js';
import type { ModelReply, Passage, ToolCallRequest, ToolSpec } from '../../../providers/language-model.js';
import type { LanguageModels } from '../../../providers/registry.js';
import type { McpClient } from '../mcp-client.js';
import type { ToolRunner } from '../tool-runner.js';
import { isMcpTool, type AgentTool, type Turn } from './turn-state.js';

/** The agent's model and the tools it calls: the model answers or asks for tools, whose results go back to it. */
export class ModelLoop {
  constructor(
    private readonly models: LanguageModels,
    private readonly tools: ToolRunner,
    private readonly mcp: McpClient,
    private readonly secrets: Secrets,
  ) {}

  /**
   * The tool-calling loop: the model answers or asks for tools; their results go back to it
   * until it answers. `maxCallsPerTurn` is a hard cap across the turn: a call past it is not
   * made (status `limit_exceeded`) and the model is then asked to answer without tools.
   */
  async run(turn: Turn, instructions: string, offered: AgentTool[], onText?: (delta: string) => void): Promise<void> {
    const cap = turn.agent.view.tool_policy.maxCallsPerTurn;
    let capped = false;
    // each round makes at least one call, so the cap bounds the rounds
    for (let round = 0; round <= cap + 1; round += 1) {
      const tools = capped || turn.callsMade() >= cap ? [] : offered;
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
        if (turn.callsMade() >= cap) {
          capped = true;
          turn.recordToolCall(call, { status: 'limit_exceeded', result: `Not called: this turn reached its limit of ${cap} tool calls.`, duration_ms: 0 });
        } else if (!tool) {
          turn.recordToolCall(call, { status: 'denied', result: `There is no tool "${call.name}" available to this agent.`, duration_ms: 0 });
        } else {
          await this.callTool(turn, tool, call);
        }
      }
    }
    turn.errors.push({ where: 'tool loop', message: 'the model kept asking for tools after the limit' });
  }

  /** One call of the agent's model over the turn's messages and retrieved passages, offering `tools`. */
  async callModel(turn: Turn, instructions: string, tools: AgentTool[], onText?: (delta: string) => void): Promise<ModelReply> {
    const specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    const passages: Passage[] = turn.retrieved.map((c) => ({ id: c.chunk_id, text: c.text, document_id: c.document_id, filename: c.filename, score: c.score }));
    const reply = await turn.timed('model', () =>
      this.models.get(turn.agent.view.model).chat(
        { instructions, messages: turn.messages, documents: passages, tools: specs, fallback: turn.agent.view.fallback_message },
        onText ? { onText } : {},
      ),
    );
    turn.llmCalls += 1;
    turn.tokensIn += reply.usage.tokens_in;
    turn.tokensOut += reply.usage.tokens_out;
    return reply;
  }

  /** Calls a tool (HTTP, or an MCP server's) with the project's secret it names, and records the outcome. */
  async callTool(turn: Turn, tool: AgentTool, call: ToolCallRequest): Promise<void> {
    turn.plan.push(`tool:${tool.name}`);
    const outcome = await turn.timed('tools', async () => {
      const secretRef = isMcpTool(tool) ? tool.server.secret_ref : tool.secret_ref;
      const secret = secretRef !== null ? await this.secrets.reveal(turn.agent.projectId, secretRef) : null;
      if (secretRef !== null && secret === null) {
        return { status: 'error' as const, result: `The secret "${secretRef}" this tool uses is not set.`, duration_ms: 0 };
      }
      const target = { projectId: turn.agent.projectId, agentId: turn.agent.view.id, args: call.arguments, secret };
      return isMcpTool(tool) ? this.mcp.run({ ...target, tool }) : this.tools.run({ ...target, tool });
    });
    turn.recordToolCall(call, outcome);
  }
}
