import type { AgentsRepository } from '../../../db/repositories/agents.repository.js';
import { newId } from '../../../lib/time.js';
import type { LoadedAgent } from '../agents.js';
import { Turn } from './turn-state.js';
import type { ChatInput, ChatMessage } from './types.js';

/** How many earlier turns of a conversation the model sees. */
export const CONTEXT_TURNS = 20;

/**
 * Opens a turn in its conversation: the agent's instructions with the request's system messages,
 * then as model messages the conversation's earlier turns (when it continues one) and the request.
 */
export async function openTurn(runs: AgentsRepository, agent: LoadedAgent, input: ChatInput, started: number): Promise<Turn> {
  const conversationId = input.conversation_id ?? newId();
  const history = input.conversation_id !== undefined ? await runs.conversation(agent.projectId, agent.view.id, conversationId, CONTEXT_TURNS) : [];
  const system = input.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const instructions = [agent.view.instructions, ...system].filter((s) => s.trim() !== '').join('\n\n');
  const latest = [...input.messages].reverse().find((m) => m.role === 'user');
  const turn = new Turn(agent, conversationId, input, latest?.content ?? '', history.length + 1, instructions, started);
  for (const past of history) {
    for (const m of JSON.parse(past.input) as ChatMessage[]) if (m.role !== 'system') turn.messages.push({ role: m.role, content: m.content });
    turn.messages.push({ role: 'assistant', content: past.answer });
  }
  for (const m of input.messages) if (m.role !== 'system') turn.messages.push({ role: m.role, content: m.content });
  return turn;
}
