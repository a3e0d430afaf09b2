import type { MemoryFeedback } from '../../db/repositories/memories.repository.js';

/** mem0's `get_summary`: a text that sums up an entity's memories, and how many it covers. */
export interface MemorySummary {
  summary: string;
  memory_count: number;
}

/** Most memories a summary states; the rest are counted. */
export const SUMMARY_MAX_MEMORIES = 50;
/** Longest summary text, before the count of the memories left out. */
export const SUMMARY_MAX_CHARS = 4_000;

type Statable = { memory: string; feedback?: MemoryFeedback | null };

/**
 * The memories' statements, in the order given: each memory's text once (ignoring case and
 * spacing), as a sentence; memories marked VERY_NEGATIVE ("not useful at all") are left out.
 * `kept`: how many memories that leaves.
 */
export function statements(memories: ReadonlyArray<Statable>): { sentences: string[]; kept: number } {
  const kept = memories.filter((m) => m.feedback !== 'VERY_NEGATIVE');
  const seen = new Set<string>();
  const sentences: string[] = [];
  for (const m of kept) {
    const text = m.memory.replace(/\s+/g, ' ').trim();
    const key = text.toLowerCase().replace(/[.!?]+$/, '');
    if (text === '' || seen.has(key)) continue;
    seen.add(key);
    sentences.push(/[.!?]$/.test(text) ? text : `${text}.`);
  }
  return { sentences, kept: kept.length };
}

/**
 * A deterministic summary of memories given newest first: their `statements`, newest first, so
 * that what holds now leads; at most `SUMMARY_MAX_MEMORIES` statements and `SUMMARY_MAX_CHARS`
 * characters, then how many more there are. Memories marked VERY_NEGATIVE are not counted.
 */
export function summarize(memories: ReadonlyArray<Statable>): MemorySummary {
  const { sentences, kept } = statements(memories);
  let summary = '';
  let stated = 0;
  for (const sentence of sentences) {
    if (stated === SUMMARY_MAX_MEMORIES) break;
    if (summary === '') {
      // one statement longer than the whole summary is cut rather than left out
      summary = sentence.length > SUMMARY_MAX_CHARS ? `${sentence.slice(0, SUMMARY_MAX_CHARS - 1)}…` : sentence;
    } else if (summary.length + sentence.length + 1 <= SUMMARY_MAX_CHARS) {
      summary = `${summary} ${sentence}`;
    } else {
      break;
    }
    stated += 1;
  }
  const left = sentences.length - stated;
  if (left > 0) summary += ` (and ${left} more)`;
  return { summary, memory_count: kept };
}
