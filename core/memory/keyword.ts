import type { Knex } from 'knex';
import type { EntityPins, MemoryTermsRepository } from '../../db/repositories/memory-terms.repository.js';
import { queryTerms, termCounts } from './terms.js';

/** Most postings one keyword search reads (see `search`). */
const MAX_POSTINGS = 20_000;

/** BM25's term-frequency saturation and length normalisation (the usual values). */
const K1 = 1.2;
const B = 0.75;

/** A keyword match: its BM25 score, and the share of the query's idf weight it holds. */
export interface KeywordHit {
  id: string;
  score: number;
  coverage: number;
}

/** A memory as the keyword index reads it. */
export interface KeywordSource {
  id: string;
  project_id: string;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
}

/**
 * BM25 keyword search over memory text. The index (`memory_terms`, one row per memory and term)
 * lives in the database next to the rows and is written in the same transaction as each memory,
 * so it is exact the moment a write is acknowledged, on every API process, and needs no worker.
 * Collection statistics (document count, mean length, document frequencies) are those of the
 * entity the search is pinned to — one user's memories are ranked among themselves.
 */
export class MemoryKeywords {
  constructor(private readonly terms: MemoryTermsRepository) {}

  /** The length in terms of a memory's text (stored on the row as `term_count`). */
  static length(text: string): number {
    return termCounts(text).length;
  }

  /** Indexes memories, in the caller's transaction: `fresh` ones just written, or re-indexes changed ones. */
  async write(trx: Knex | Knex.Transaction, memories: KeywordSource[], fresh = false): Promise<void> {
    await this.terms.write(
      trx,
      memories.map((m) => ({ ...m, ...termCounts(m.memory) })),
      fresh,
    );
  }

  async remove(trx: Knex | Knex.Transaction, ids: string[]): Promise<void> {
    await this.terms.remove(trx, ids);
  }

  /**
   * The memories of the pinned scope that share terms with the query, best BM25 score first, each
   * with its `coverage`: the share of the query's idf weight its matched terms carry (1 when it
   * holds every informative query term).
   */
  async search(projectId: string, pins: EntityPins, query: string, limit: number): Promise<KeywordHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const [frequency, scope] = await Promise.all([this.terms.frequencies(projectId, pins, terms), this.terms.scope(projectId, pins)]);
    if (frequency.size === 0 || scope.documents === 0) return [];
    // A term in more than half of the scope (a speaker's name on every line of a chat, a word
    // every memory of this entity uses) tells its memories apart no better than chance; when the
    // query has rarer terms, it is left out, so that sharing it alone does not make a keyword hit.
    const rare = [...frequency].filter(([, df]) => df <= scope.documents / 2);
    const informative = rare.length > 0 ? rare : [...frequency];
    const idf = new Map<string, number>();
    for (const [term, df] of informative) idf.set(term, Math.log(1 + (scope.documents - df + 0.5) / (df + 0.5)));
    const totalWeight = [...idf.values()].reduce((sum, w) => sum + w, 0);
    // Postings are read rarest term first, up to a budget: a pin over a whole large app would
    // otherwise read every posting of its common words, which weigh least. The rarest term is
    // always read; one-entity scopes stay far under the budget and are scored exactly.
    let budget = MAX_POSTINGS;
    const read = [...idf.keys()]
      .sort((a, b) => (frequency.get(a) as number) - (frequency.get(b) as number))
      .filter((term, i) => {
        budget -= frequency.get(term) as number;
        return i === 0 || budget >= 0;
      });
    const postings = await this.terms.postings(projectId, pins, read);
    const meanLength = scope.meanLength > 0 ? scope.meanLength : 1;
    const hits = new Map<string, KeywordHit>();
    for (const p of postings) {
      const weight = idf.get(p.term);
      if (weight === undefined) continue;
      const tf = Number(p.tf);
      const norm = tf + K1 * (1 - B + (B * Number(p.doc_len)) / meanLength);
      const hit = hits.get(p.memory_id) ?? { id: p.memory_id, score: 0, coverage: 0 };
      hit.score += (weight * tf * (K1 + 1)) / norm;
      hit.coverage += weight / totalWeight;
      hits.set(p.memory_id, hit);
    }
    return [...hits.values()]
      .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1))
      .slice(0, limit);
  }
}
