import { MAX_FACT_LENGTH, type Decision, type FactCandidates } from './extractor.js';

// mem0's add step with `infer: true`, asked of a remote model: once for all facts (mem0's prompt,
// existing memories under short integer ids), its answer checked strictly. A fact whose answer
// cannot be read as a valid decision becomes `ADD`; none is ever dropped. (The local model
// decides by rules: `local/decision-rules.ts`.)

/** What a remote model is told when deciding (mem0's update-memory prompt, one entry per new fact). */
export const DECISIONS_SYSTEM_PROMPT = [
  "You keep a user's memory up to date. You are given the memories already stored, each with an id, and new facts, each with a number.",
  'Decide for each new fact one event:',
  'ADD when it is new information: "text" is the memory to store.',
  'UPDATE when it changes or refines a stored memory about the same thing (e.g. "Moved to Porto" after "Lives in Lisbon", or more detail): "id" is that memory\'s id, "text" the memory as it should now read, "old_memory" its current text.',
  'DELETE when it retracts a stored memory or says it is no longer true (e.g. "No longer vegetarian" after "Is vegetarian"): "id" is that memory\'s id.',
  'NONE when the memory already holds the same information, however worded: "id" is that memory\'s id.',
  'Use only the ids listed; never invent one. Keep the language of the facts.',
  'Answer with a JSON object {"memory": [{"fact": <number>, "event": "ADD" | "UPDATE" | "DELETE" | "NONE", "id": <memory id, for UPDATE, DELETE and NONE>, "text": <string>, "old_memory": <string, for UPDATE>}]} with exactly one entry per new fact.',
].join(' ');

/** The JSON schema of a decisions answer (simple types only, which every provider's JSON mode takes). */
export const DECISIONS_SCHEMA = {
  type: 'object',
  properties: {
    memory: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          fact: { type: 'integer' },
          event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NONE'] },
          id: { type: 'string' },
          text: { type: 'string' },
          old_memory: { type: 'string' },
        },
        required: ['fact', 'event'],
      },
    },
  },
  required: ['memory'],
} as const;

/**
 * The user turn of the decision call: existing memories under short integer ids (as mem0 does,
 * so the model copies a short id instead of mangling a long one), then the numbered facts.
 */
export function decisionsPrompt(facts: readonly string[], memories: ReadonlyArray<{ id: string; text: string }>): string {
  return [
    `Existing memories:\n${JSON.stringify(memories)}`,
    `New facts:\n${JSON.stringify(facts.map((text, fact) => ({ fact, text })))}`,
    'Answer with {"memory": [...]}, one entry per new fact.',
  ].join('\n\n');
}

/**
 * Reads a model's decisions (`{"memory": [...]}`) for `facts`, `shortIds` mapping the ids shown
 * to the model back to memory ids. Strict: an entry counts only with a fact number in range, an
 * event of ADD/UPDATE/DELETE/NONE (NOOP accepted too) and, except for ADD, an id that was shown;
 * an entry with an unknown id makes its fact an ADD, the first valid entry of a fact wins, and a
 * fact without one is ADDed. Texts are trimmed and cut to `MAX_FACT_LENGTH`; an empty text is the
 * fact itself.
 */
export function checkDecisions(raw: unknown, facts: readonly string[], shortIds: ReadonlyMap<string, string>): Decision[] {
  const decisions: Array<Decision | undefined> = facts.map(() => undefined);
  const entries = typeof raw === 'object' && raw !== null && Array.isArray((raw as { memory?: unknown }).memory) ? (raw as { memory: unknown[] }).memory : [];
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { fact: index, event, id, text } = entry as Record<string, unknown>;
    const at = typeof index === 'number' ? index : typeof index === 'string' && /^\d+$/.test(index.trim()) ? Number(index) : NaN;
    if (!Number.isInteger(at) || at < 0 || at >= facts.length || decisions[at] !== undefined) continue;
    const kind = typeof event === 'string' ? event.trim().toUpperCase() : '';
    if (!['ADD', 'UPDATE', 'DELETE', 'NONE', 'NOOP'].includes(kind)) continue;
    const fact = facts[at] as string;
    const written = typeof text === 'string' && text.trim() !== '' ? text.trim().replace(/\s+/g, ' ').slice(0, MAX_FACT_LENGTH) : fact;
    const targetId = typeof id === 'string' || typeof id === 'number' ? shortIds.get(String(id).trim()) : undefined;
    if (kind === 'ADD' || targetId === undefined) decisions[at] = { event: 'ADD', text: kind === 'ADD' ? written : fact };
    else if (kind === 'UPDATE') decisions[at] = { event: 'UPDATE', targetId, text: written };
    else if (kind === 'DELETE') decisions[at] = { event: 'DELETE', targetId };
    else decisions[at] = { event: 'NOOP', targetId };
  }
  return decisions.map((decision, at) => decision ?? { event: 'ADD', text: facts[at] as string });
}

/**
 * A remote model's decisions for `facts`, asked in one call (`ask`: system prompt, user prompt →
 * the JSON object of the answer). The memories of all facts are shown once each, under short
 * ids. A failed call rejects; the caller adds every fact.
 */
export async function decideByModel(
  facts: readonly FactCandidates[],
  ask: (system: string, user: string) => Promise<Record<string, unknown>>,
): Promise<Decision[]> {
  const memories = [...new Map(facts.flatMap((f) => f.candidates).map((c) => [c.id, c.text])).entries()];
  if (memories.length === 0) return facts.map(({ fact }) => ({ event: 'ADD', text: fact }));
  const shortIds = new Map(memories.map(([id], n) => [String(n), id]));
  const shown = memories.map(([, text], n) => ({ id: String(n), text }));
  const texts = facts.map((f) => f.fact);
  return checkDecisions(await ask(DECISIONS_SYSTEM_PROMPT, decisionsPrompt(texts, shown)), texts, shortIds);
}
