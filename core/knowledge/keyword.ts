import MiniSearch from 'minisearch';
import type { ChunkWithDocument, KnowledgeBaseRow, KnowledgeRepository } from '../../db/repositories/knowledge.repository.js';
import { toPredicate, type FilterNode, type FilterRow } from '../../contracts/filter/filter.js';
import { nextTurn } from '../../lib/turns.js';

/** English words too common to tell passages apart. */
const STOP_WORDS = new Set(
  'a an and are as at be but by can could did do does for from had has have how i if in into is it its me my not of on or our she so that the their them then there these they this to was we were what when where which who why will with would you your'.split(' '),
);

/** Lower-cased terms without stop words; a light plural fold (`policies` → `policy`, `keys` → `key`). */
export function keywordTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (lower.length < 2 || STOP_WORDS.has(lower)) return null;
  if (lower.length > 4 && lower.endsWith('ies')) return `${lower.slice(0, -3)}y`;
  if (lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss') && !lower.endsWith('us')) return lower.slice(0, -1);
  return lower;
}

interface BaseIndex {
  revision: number;
  index: MiniSearch;
  chunks: Map<string, ChunkWithDocument>;
  /** In how many chunks each term occurs. */
  documentFrequency: Map<string, number>;
}

/** Keyword indexes kept in memory at once; the least recently used goes first. */
const MAX_CACHED = 32;

/**
 * Share of the query's terms a passage must contain to count as a keyword hit ("minimum should
 * match"). A passage that shares one common word with a long question is noise, and noise in
 * the keyword list would outrank the right dense hit after fusion.
 */
const MIN_MATCH = 0.4;

/**
 * Terms in more than this share of a base's chunks are left out of its keyword queries. In
 * BM25's own idf, log((N − df + 0.5) / (df + 0.5)), such a term weighs nothing or less: it tells
 * no passage apart, yet scoring it walks most of the index.
 */
const MAX_DOCUMENT_SHARE = 0.5;

/** Chunks indexed between two turns of the event loop while a base's index is built. */
const BUILD_SLICE = 20;

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/** The distinct search terms of a query, as the index sees them. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query).map(keywordTerm).filter((t): t is string => t !== null))];
}

/**
 * BM25 keyword search over chunk text (MiniSearch), keeping passages that contain at least 40%
 * of the query's terms (those in at most half the base's chunks); one in-memory index per knowledge base built
 * from its chunks in the database. Each process keeps its own; the base's `revision` (bumped by
 * every change to its chunks) tells a process when to rebuild, so every API process answers
 * from the same data as the database.
 */
export class KeywordIndexes {
  private readonly cache = new Map<string, BaseIndex>();
  private readonly building = new Map<string, Promise<BaseIndex>>();

  constructor(private readonly rows: KnowledgeRepository) {}

  async search(
    projectId: string,
    bases: Array<Pick<KnowledgeBaseRow, 'id' | 'revision'>>,
    query: string,
    filter: FilterNode | null,
    limit: number,
  ): Promise<Array<{ chunk: ChunkWithDocument; score: number }>> {
    const accept = chunkPredicate(filter);
    const found: Array<{ chunk: ChunkWithDocument; score: number }> = [];
    for (const base of bases) {
      const { index, chunks, documentFrequency } = await this.indexOf(projectId, base);
      const terms = queryTerms(query).filter((t) => (documentFrequency.get(t) ?? 0) <= chunks.size * MAX_DOCUMENT_SHARE);
      if (terms.length === 0) continue;
      const needed = Math.max(1, Math.ceil(terms.length * MIN_MATCH));
      for (const hit of index.search(terms.join(' '), { combineWith: 'OR', boost: { heading: 0.5 } })) {
        if (new Set(hit.queryTerms).size < needed) continue;
        const chunk = chunks.get(hit.id as string);
        if (chunk === undefined || (accept !== null && !accept(chunk))) continue;
        found.push({ chunk, score: hit.score });
        if (found.length >= limit * bases.length) break;
      }
    }
    return found.sort((a, b) => b.score - a.score || a.chunk.id.localeCompare(b.chunk.id)).slice(0, limit);
  }

  /** Drops a base's index (it was deleted). */
  forget(kbId: string): void {
    this.cache.delete(kbId);
  }

  private async indexOf(projectId: string, base: Pick<KnowledgeBaseRow, 'id' | 'revision'>): Promise<BaseIndex> {
    const revision = Number(base.revision);
    const cached = this.cache.get(base.id);
    if (cached !== undefined && cached.revision === revision) {
      // most recently used last
      this.cache.delete(base.id);
      this.cache.set(base.id, cached);
      return cached;
    }
    const key = `${base.id}@${revision}`;
    let building = this.building.get(key);
    if (building === undefined) {
      building = this.build(projectId, base.id, revision).finally(() => this.building.delete(key));
      this.building.set(key, building);
    }
    const built = await building;
    this.cache.delete(base.id);
    this.cache.set(base.id, built);
    while (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    return built;
  }

  private async build(projectId: string, kbId: string, revision: number): Promise<BaseIndex> {
    const rows = await this.rows.chunksOfBase(projectId, kbId);
    const index = new MiniSearch({ fields: ['text', 'heading'], idField: 'id', processTerm: keywordTerm });
    // a base of thousands of chunks takes seconds to index: in slices, so requests are served between them
    await index.addAllAsync(
      rows.map((r) => ({ id: r.id, text: r.text, heading: r.heading ?? '' })),
      { chunkSize: BUILD_SLICE },
    );
    const documentFrequency = new Map<string, number>();
    for (let i = 0; i < rows.length; i += 1) {
      if (i > 0 && i % BUILD_SLICE === 0) await nextTurn();
      const r = rows[i] as ChunkWithDocument;
      for (const term of queryTerms(`${r.text} ${r.heading ?? ''}`)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    return { revision, index, chunks: new Map(rows.map((r) => [r.id, r])), documentFrequency };
  }
}

/** The row a filter predicate reads for a chunk: its document's columns and metadata. */
export function chunkFilterRow(chunk: ChunkWithDocument): FilterRow {
  return {
    columns: { document_id: chunk.document_id, filename: chunk.filename, source_type: chunk.source_type },
    metadata: JSON.parse(chunk.metadata) as Record<string, unknown>,
  };
}

/** A compiled filter over chunks; null accepts everything. */
export function chunkPredicate(filter: FilterNode | null): ((chunk: ChunkWithDocument) => boolean) | null {
  if (filter === null) return null;
  const accept = toPredicate(filter);
  return (chunk) => accept(chunkFilterRow(chunk));
}
