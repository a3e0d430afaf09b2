import type { Knowledge } from '../../knowledge/knowledge.js';
import type { Turn } from './turn-state.js';

/** Passages retrieved per turn (and per flow `retrieve` node unless it says). */
export const RETRIEVE_TOP_K = 5;

/**
 * Searches the named knowledge bases for the turn's message and adds the passages not retrieved
 * yet; a knowledge base that no longer exists is noted and skipped.
 */
export async function retrieve(knowledge: Knowledge, turn: Turn, names: string[], topK: number): Promise<void> {
  turn.plan.push('retrieve');
  await turn.timed('retrieval', async () => {
    const existing = await knowledge.existing(turn.agent.projectId, names);
    for (const missing of names.filter((n) => !existing.includes(n))) turn.errors.push({ where: 'retrieve', message: `knowledge base "${missing}" no longer exists` });
    if (existing.length === 0 || turn.message.trim() === '') return;
    const found = await knowledge.search(turn.agent.projectId, existing, { query: turn.message.slice(0, 4096), top_k: topK });
    const seen = new Set(turn.retrieved.map((c) => c.chunk_id));
    turn.retrieved.push(...found.filter((c) => !seen.has(c.chunk_id)));
  });
}
