import { AppError } from '../../lib/errors.js';
import { nowMs } from '../../lib/time.js';
import type { Logger } from '../../lib/logger.js';
import { cosine } from '../ranking.js';
import { DEFAULT_EMBED_MODEL, type Embedders } from '../../providers/registry.js';
import type { Decision, Extractor, FactCandidates, MemoryEvent } from '../../providers/extractor.js';
import type { Memories, MemoryView, RelatedMemory } from './memories.js';
import { requireEntity, type MemoryOwner } from './rows.js';

/** A memory as mem0's add answers it: with what the add did to it. */
export interface AddedMemory extends MemoryView {
  event: MemoryEvent;
  /** For UPDATE: the memory's text before (mem0's field). */
  previous_memory?: string;
}

/** A fact that asks to forget something ("Please forget that I play tennis"): the user's own delete, not a change of what is true. */
const FORGET = /^\s*(?:please,?\s+)?forget\b/i;

/** How many of the entity's memories each fact is compared with (mem0's number). */
const CANDIDATES = 5;

/**
 * mem0's add with `infer: true`, after the facts are picked: each fact is compared with the
 * entity's memories most like it, the model decides (`Extractor.decide`: rules for `local`, one
 * call for a remote model), and the decisions are written through `Memories`, so history, outbox
 * and revisions stay right. A fact is never dropped: when the decision step fails every fact is
 * added, and an UPDATE or DELETE whose memory changed or went since it was read adds the fact
 * instead.
 */
export class MemoryDecisions {
  constructor(
    private readonly memories: Memories,
    private readonly embedders: Embedders,
    private readonly log: Logger,
  ) {}

  /** Decides and writes `facts` for `owner`; memories it adds get `eventTime` (epoch ms, default now) as their event time. */
  async remember(projectId: string, owner: MemoryOwner, facts: string[], extractor: Extractor, eventTime?: number): Promise<AddedMemory[]> {
    requireEntity(owner);
    if (facts.length === 0) return [];
    let related: RelatedMemory[][] = facts.map(() => []);
    let decisions: Decision[];
    try {
      related = await this.memories.related(projectId, owner, facts, CANDIDATES);
      decisions = await extractor.decide(await this.compared(facts, related));
    } catch (err) {
      this.log.warn({ err, model: extractor.model }, 'the add decision step failed; every fact is added');
      decisions = facts.map((text) => ({ event: 'ADD', text }));
    }
    return this.apply(projectId, owner, facts, related, decisions, eventTime);
  }

  /**
   * Each fact with its memories, most similar first. Similarity is measured with the local
   * model whatever model indexes the memories: the rules' thresholds are calibrated on it, and
   * memories not indexed yet have no vector to compare.
   */
  private async compared(facts: string[], related: RelatedMemory[][]): Promise<FactCandidates[]> {
    const texts = [...new Set([...facts, ...related.flat().map((m) => m.memory)])];
    const vectors = new Map((await this.embedders.get(DEFAULT_EMBED_MODEL).embed(texts, 'document')).map((v, i) => [texts[i] as string, v]));
    return facts.map((fact, at) => ({
      fact,
      candidates: (related[at] ?? [])
        .map((m) => ({ id: m.id, text: m.memory, similarity: similarity(vectors.get(fact), vectors.get(m.memory)) }))
        .sort((a, b) => b.similarity - a.similarity),
    }));
  }

  /** Writes the decisions; the results in the order of the facts. */
  private async apply(
    projectId: string,
    owner: MemoryOwner,
    facts: string[],
    related: RelatedMemory[][],
    decisions: Decision[],
    eventTime: number | undefined,
  ): Promise<AddedMemory[]> {
    const known = new Map(related.flat().map((m) => [m.id, m]));
    const byText = new Map(related.flat().map((m) => [m.memory.toLowerCase(), m]));
    const results: AddedMemory[][] = facts.map(() => []);
    const adds: Array<{ at: number; text: string }> = [];
    for (const [at, decision] of decisions.entries()) {
      const report = (memory: AddedMemory) => results[at]?.push(memory);
      const target = decision.event === 'ADD' || decision.targetId === undefined ? undefined : known.get(decision.targetId);
      if (decision.event === 'NOOP') {
        if (target) report({ ...view(target), event: 'NOOP' });
      } else if (decision.event === 'ADD') {
        // a model that adds a text the entity already holds changes nothing
        const held = byText.get(decision.text.toLowerCase());
        if (held) report({ ...view(held), event: 'NOOP' });
        else adds.push({ at, text: decision.text });
      } else if (decision.event === 'UPDATE' && target?.memory.toLowerCase() === decision.text.toLowerCase()) {
        report({ ...view(target), event: 'NOOP' });
      } else {
        const written = target ? await this.change(projectId, target, decision.event === 'UPDATE' ? decision.text : null, owner.expiration_date, eventTime, FORGET.test(facts[at] ?? '')) : null;
        if (written) report(written);
        else adds.push({ at, text: facts[at] as string });
      }
    }
    const stored = new Map((await this.memories.add(projectId, owner, adds.map((a) => a.text), { skipKnown: true, eventTime })).map((m) => [m.memory.toLowerCase(), m]));
    for (const { at, text } of adds) {
      const memory = stored.get(text.trim().toLowerCase());
      // each stored once, reported once; a text already held (skipKnown) was stored before
      if (memory !== undefined) results[at]?.push({ ...memory, event: 'ADD' });
      stored.delete(text.trim().toLowerCase());
    }
    return results.flat();
  }

  /**
   * Supersedes a memory's text with `text` (and the add's expiration date when it gave one), or ends
   * its validity (null), from the add's event time (default now), if it is still at the revision the
   * decision read; null when it changed or went meanwhile. The text it had stays as a version. A
   * user's request to forget (`forget`) deletes the memory instead, as their own delete would.
   */
  private async change(
    projectId: string,
    target: RelatedMemory,
    text: string | null,
    expiration: string | null | undefined,
    at: number | undefined,
    forget: boolean,
  ): Promise<AddedMemory | null> {
    try {
      if (text === null && forget) {
        await this.memories.delete(projectId, target.id, target.revision);
        return { ...view(target), event: 'DELETE' };
      }
      if (text === null) return { ...(await this.memories.end(projectId, target.id, target.revision, at)), event: 'DELETE' };
      const updated = await this.memories.update(projectId, target.id, expiration === undefined ? { text } : { text, expiration_date: expiration }, target.revision, at ?? nowMs());
      return { ...updated, event: 'UPDATE', previous_memory: target.memory };
    } catch (err) {
      if (err instanceof AppError && (err.status === 404 || err.status === 409)) return null;
      throw err;
    }
  }
}

/** The memory as the API shows it (without the revision the decision read). */
function view(memory: RelatedMemory): MemoryView {
  const shown: Partial<RelatedMemory> = { ...memory };
  delete shown.revision;
  return shown as MemoryView;
}

/** How alike two texts' vectors are; 0 when one is missing. */
function similarity(a: Float32Array | undefined, b: Float32Array | undefined): number {
  return a === undefined || b === undefined ? 0 : cosine(a, b);
}
