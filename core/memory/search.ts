import type { MemoriesRepository, MemoryRow } from '../../db/repositories/memories.repository.js';
import type { EntityColumn, EntityPins } from '../../db/repositories/memory-terms.repository.js';
import type { CollectionSpec, VectorStore } from '../../contracts/vector-store.js';
import { parseFilter, toPredicate, type FilterNode } from '../../contracts/filter/filter.js';
import { AppError, badRequest } from '../../lib/errors.js';
import { cosine, lessAsking, lessHubs, mostlyAsks, reciprocalRankFusion, RRF_K } from '../ranking.js';
import type { KeywordHit, MemoryKeywords } from './keyword.js';
import { ENTITY_IDS, filterRow, MEMORY_FILTER_SCOPE, memoryFields, type MemoryFields } from './rows.js';
import type { MemoryModels } from './memory-models.js';
import { namedTime } from './signals.js';
import { eventTimeOf, shownMemories } from './expiry.js';
import { successorsFirst, validIn } from './validity.js';
import type { Reranking, RerankReport } from '../reranking.js';

/** How memory search ranks: dense and keyword fused with the time signal (the default), or one side alone. */
export type MemorySearchMode = 'hybrid' | 'dense' | 'keyword';

export interface MemorySearchInput {
  query: string;
  output_format?: string;
  filters: unknown;
  top_k?: number;
  /** The least cosine similarity of query and memory a result may have, in every mode. */
  threshold?: number;
  mode?: MemorySearchMode;
  /** Also return memories past their expiration date (mem0's option). */
  show_expired?: boolean;
  /** Reorder the best candidates with the server's reranker (`RERANK_MODEL`), when it has one. */
  rerank?: boolean;
  /** The facts valid at this time (unix seconds or ISO 8601) instead of now: what was true then. */
  as_of?: number | string;
  /** Every version, superseded and ended ones too, each after the memory that superseded it. */
  include_superseded?: boolean;
  /** Only these memories (those mentioning an entity: `MemoryEntityIndex.mentioning`). */
  within?: ReadonlySet<string>;
}

/** One memory-search hit (typed record or free-form memory). */
export interface MemorySearchResult extends MemoryFields {
  score: number;
}

/** The least share of the query's idf weight a keyword hit must hold to vote in hybrid fusion. */
const MIN_KEYWORD_COVERAGE = 0.5;

/** Each list fused by hybrid search holds at least this many memories. */
const FUSION_POOL = 40;

/** The most candidates of a hybrid search's dense list reordered with less weight on hubs (`lessHubs`). */
const HUB_POOL = 100;

/** The most memories one list is asked for when expired memories crowd the first ones out (Milvus's own limit). */
const MAX_POOL = 16_384;

/** Memory search (`/v3/memories/search`) over typed records and free-form memories alike. */
export class MemorySearch {
  constructor(
    private readonly rows: MemoriesRepository,
    private readonly keywords: MemoryKeywords,
    private readonly store: VectorStore,
    private readonly reranking: Reranking,
    /** Each project's embedding model: a project's memories are searched in its model's collection. */
    private readonly models: MemoryModels,
  ) {}

  /**
   * Memory search over an entity's memories (an entity id is required in `filters`). `hybrid`
   * (the default) fuses, by reciprocal rank, the dense list (cosine over the embeddings, with less
   * weight on hubs: see `lessHubs`), the BM25 keyword list, and — when the query names a day, month
   * or year — the dense list of the memories whose event time falls in it. `dense` (cosine alone)
   * and `keyword` rank by one side alone. The rest of the filter applies to every list;
   * `threshold` is the least cosine similarity a result may have. Only facts valid now are found,
   * or valid at `as_of`, or (`include_superseded`) every version (see `validity.ts`).
   */
  async search(projectId: string, input: MemorySearchInput): Promise<MemorySearchResult[]> {
    return (await this.searchReported(projectId, input)).results;
  }

  /**
   * `search`, with what became of its reranking when it asked for one. With `rerank`, the best
   * `max(4 × top_k, 40)` memories of the mode's ranking (after `threshold`) go to the reranker,
   * whose order and relevance are the answer; a reranker that fails or is late
   * (`RERANK_TIMEOUT_MS`) leaves the mode's order, and so does a server without one (mem0's
   * clients may ask for reranking anywhere): the report says which was used.
   */
  async searchReported(projectId: string, input: MemorySearchInput): Promise<{ results: MemorySearchResult[]; rerank?: RerankReport }> {
    const filter = parseFilter(input.filters, MEMORY_FILTER_SCOPE, '/filters');
    if (!filter || Object.keys(pinnedEntities(filter)).length === 0) {
      throw badRequest(
        'entity_required',
        `filters must hold at least one of ${ENTITY_IDS.join(', ')} (e.g. {"user_id": "alice"}), alone or inside a top-level AND.`,
      );
    }
    const mode = input.mode ?? 'hybrid';
    const topK = input.top_k ?? 10;
    const rerank = input.rerank === true && this.reranking.model !== null;
    // the reranker chooses the answer from a larger pool of candidates
    const wanted = rerank ? Math.max(topK * 4, FUSION_POOL) : topK;
    const needsVector = mode !== 'keyword' || input.threshold !== undefined;
    // the model the project's memories are in now; a re-embedding switches it only once it is done
    const { model } = await this.models.of(projectId);
    // the query is embedded (on the model's thread) while the keyword side reads its postings
    const vectorPass = needsVector
      ? Promise.resolve()
          .then(() => this.models.embedder(model).embed([input.query], 'query'))
          .then(([v]) => v as Float32Array)
      : null;
    vectorPass?.catch(() => undefined);
    const rows = new Map<string, MemoryRow>();
    const unexpired = shownMemories(input.show_expired);
    const valid = validIn({ asOf: input.as_of === undefined ? undefined : eventTimeOf(input.as_of), includeSuperseded: input.include_superseded });
    const { within } = input;
    const shown = (row: MemoryRow): boolean => unexpired(row) && valid(row) && (within === undefined || within.has(row.id));
    // The vector store and the keyword index do not know expiration dates: expired memories are
    // dropped from the ranked rows, and only when some were while the lists may hold more are
    // they asked again for more. Without expired memories (the common case) this is one pass
    // with the same reads as before.
    let hits: MemorySearchResult[];
    for (let pool = mode === 'hybrid' ? Math.max(wanted * 4, FUSION_POOL) : wanted; ; pool = Math.min(pool * 4, MAX_POOL)) {
      const { ranked, full } = await this.rank(projectId, input, filter, mode, pool, model, vectorPass, rows);
      const visible = await this.visible(projectId, ranked, wanted, rows, shown);
      hits = visible.hits;
      if (hits.length >= wanted || visible.hidden === 0 || !full || pool === MAX_POOL) break;
    }
    if (input.include_superseded === true && input.as_of === undefined) hits = successorsFirst(hits);
    if (input.rerank !== true) return { results: hits };
    if (!rerank) return { results: hits, rerank: { model: null, applied: false, reason: 'this server has no reranker (RERANK_MODEL)' } };
    const { order, report } = await this.reranking.order(input.query, hits.map((h) => h.memory), topK);
    if (order === null) return { results: hits.slice(0, topK), rerank: report };
    return { results: order.map(({ index, score }) => ({ ...(hits[index] as MemorySearchResult), score })), rerank: report };
  }

  /**
   * The ranked ids of one pass whose lists hold up to `pool` memories each, and whether any list
   * came back full (so a larger pool could find more).
   */
  private async rank(
    projectId: string,
    input: MemorySearchInput,
    filter: FilterNode,
    mode: MemorySearchMode,
    pool: number,
    model: string,
    vectorPass: Promise<Float32Array> | null,
    rows: Map<string, MemoryRow>,
  ): Promise<{ ranked: Array<{ id: string; score: number }>; full: boolean }> {
    // In fusion a keyword hit votes only when it holds at least half of the query's informative
    // weight: one shared word of a long question says little, and such weak hits, ranked among
    // the first of a short list, would push the dense list's answers out of the top.
    const keyword = mode !== 'dense' ? await this.keywordHits(projectId, filter, input.query, pool, mode === 'hybrid' ? MIN_KEYWORD_COVERAGE : 0, rows) : null;
    const lists: Array<Array<{ id: string; score: number }>> = [];
    const similarity = new Map<string, number>();
    let vector: Float32Array | null = null;
    let spec: CollectionSpec | null = null;
    if (mode !== 'keyword') {
      // with as_of, a time the question names is the time of the state it asks about, which as_of
      // applies; what was true then was often said before it, so the time list is not used
      const span = mode === 'hybrid' && input.as_of === undefined ? namedTime(input.query) : null;
      try {
        spec = await this.models.collection(model);
        vector = await (vectorPass as Promise<Float32Array>);
        const denseList = (f: FilterNode): Promise<Array<{ id: string; score: number }>> =>
          mode === 'hybrid' ? this.lessHubs(spec as CollectionSpec, projectId, vector as Float32Array, f, pool, similarity) : this.store.search(spec as CollectionSpec, projectId, vector as Float32Array, { topK: pool, filter: f });
        const [dense, inSpan] = await Promise.all([denseList(filter), span ? denseList(withinSpan(filter, span)) : Promise.resolve(null)]);
        for (const m of [...dense, ...(inSpan ?? [])]) if (!similarity.has(m.id)) similarity.set(m.id, m.score);
        lists.push(dense);
        if (inSpan && inSpan.length > 0) lists.push(inSpan);
      } catch (err) {
        // Hybrid search outlives an embedder or vector store outage on its keyword side alone
        // (unless a threshold needs the similarity); dense search has nothing else to answer with.
        if (!(mode === 'hybrid' && input.threshold === undefined && isUnavailable(err))) throw err;
      }
    } else if (vectorPass) {
      spec = await this.models.collection(model);
      vector = await vectorPass;
    }
    // a side with no hits is no list: the scores stay 1 for first in every list that has any
    if (keyword && keyword.length > 0) lists.push(keyword);
    const full = lists.some((list) => list.length >= pool);
    let ranked = mode === 'hybrid' ? fuse(lists) : (lists[0] ?? []);
    if (mode === 'hybrid') ranked = await this.lessAsking(projectId, ranked, pool, rows);
    if (input.threshold !== undefined) {
      await this.measureSimilarity(spec as CollectionSpec, projectId, vector as Float32Array, ranked.map((r) => r.id).filter((id) => !similarity.has(id)), similarity);
      ranked = ranked.filter((r) => (similarity.get(r.id) ?? -Infinity) >= (input.threshold as number));
    }
    return { ranked, full };
  }

  /**
   * Hybrid search's dense list: the `pool` nearest memories by cosine, the first `HUB_POOL` of them
   * reordered by `lessHubs` (a generic line that is near every question gives way to the one that
   * answers). Each one's cosine similarity goes into `similarity`.
   */
  private async lessHubs(spec: CollectionSpec, projectId: string, vector: Float32Array, filter: FilterNode, pool: number, similarity: Map<string, number>): Promise<Array<{ id: string; score: number }>> {
    // the vectors come with the search when all of them are reordered; past that, the first ones' by id
    const hits = await this.store.search(spec, projectId, vector, { topK: pool, filter, includeValues: pool <= HUB_POOL });
    for (const m of hits) similarity.set(m.id, m.score);
    let head: Array<{ id: string; score: number; values?: ArrayLike<number> }> = hits.slice(0, HUB_POOL);
    if (pool > HUB_POOL && head.length > 0) {
      const values = new Map((await this.store.fetch(spec, projectId, head.map((h) => h.id), { includeValues: true })).map((p) => [p.id, p.values]));
      head = head.map((h) => ({ id: h.id, score: h.score, values: values.get(h.id) }));
    }
    return [...lessHubs(head), ...hits.slice(HUB_POOL)].map((h) => ({ id: h.id, score: h.score }));
  }

  /**
   * Hybrid search's fused ranking with each of its first `pool` memories that mostly asks
   * (`mostlyAsks`: a question, not what was told) at half its score (`lessAsking`). Their rows are
   * read here and kept in `rows`, where `visible` finds them.
   */
  private async lessAsking(projectId: string, ranked: Array<{ id: string; score: number }>, pool: number, rows: Map<string, MemoryRow>): Promise<Array<{ id: string; score: number }>> {
    const head = new Set(ranked.slice(0, pool).map((r) => r.id));
    for (const row of await this.rows.getMany(projectId, [...head].filter((id) => !rows.has(id)))) rows.set(row.id, row);
    return lessAsking(ranked, (id) => {
      const row = head.has(id) ? rows.get(id) : undefined;
      return row !== undefined && mostlyAsks(row.memory);
    });
  }

  /**
   * The first `topK` ranked memories that are shown, read in windows. The rows are the truth: a
   * vector whose row is gone (deleted, not yet unindexed) is left out, and an expired memory is
   * counted in `hidden`.
   */
  private async visible(
    projectId: string,
    ranked: Array<{ id: string; score: number }>,
    topK: number,
    rows: Map<string, MemoryRow>,
    shown: (row: MemoryRow) => boolean,
  ): Promise<{ hits: MemorySearchResult[]; hidden: number }> {
    const hits: MemorySearchResult[] = [];
    let hidden = 0;
    const window = topK + 8;
    for (let at = 0; at < ranked.length && hits.length < topK; at += window) {
      const slice = ranked.slice(at, at + window);
      for (const row of await this.rows.getMany(projectId, slice.map((r) => r.id).filter((id) => !rows.has(id)))) rows.set(row.id, row);
      for (const r of slice) {
        const row = rows.get(r.id);
        if (row === undefined || hits.length >= topK) continue;
        if (shown(row)) hits.push({ ...memoryFields(row), score: r.score });
        else hidden += 1;
      }
    }
    return { hits, hidden };
  }

  /**
   * The keyword list: BM25 over the memories of the entities the filter pins, best first, keeping
   * only those that hold `minCoverage` of the query's weight and pass the whole filter (their rows,
   * read to check it, are kept in `rows`). The index is asked for more only when the rest of the
   * filter turned some away.
   */
  private async keywordHits(projectId: string, filter: FilterNode, query: string, limit: number, minCoverage: number, rows: Map<string, MemoryRow>): Promise<KeywordHit[]> {
    const pins = pinnedEntities(filter);
    // a filter of entity pins alone is what the index already applied
    if (isPinsOnly(filter, pins)) return this.keywords.search(projectId, pins, query, limit, minCoverage);
    const accept = toPredicate(filter);
    for (let asked = limit; ; asked *= 4) {
      const candidates = await this.keywords.search(projectId, pins, query, asked, minCoverage);
      const unread = candidates.map((c) => c.id).filter((id) => !rows.has(id));
      for (const row of await this.rows.getMany(projectId, unread)) rows.set(row.id, row);
      const hits = candidates.filter((c) => {
        const row = rows.get(c.id);
        return row !== undefined && accept(filterRow(row));
      });
      if (hits.length >= limit || candidates.length < asked) return hits.slice(0, limit);
    }
  }

  /** Adds the cosine similarity to the query of memories not in a dense list (read from their vectors). */
  private async measureSimilarity(spec: CollectionSpec, projectId: string, vector: Float32Array, ids: string[], into: Map<string, number>): Promise<void> {
    if (ids.length === 0) return;
    for (const point of await this.store.fetch(spec, projectId, ids, { includeValues: true })) {
      into.set(point.id, cosine(vector, point.values as number[]));
    }
  }
}

/**
 * The entity ids a filter pins with `eq` or `in` (directly or in a top-level AND): what memory
 * search requires at least one of, and what the keyword index narrows by.
 */
function pinnedEntities(node: FilterNode): EntityPins {
  const pins: EntityPins = {};
  for (const n of node.kind === 'and' ? node.nodes : [node]) {
    if (n.kind !== 'cmp' || n.target.kind !== 'column' || !(ENTITY_IDS as readonly string[]).includes(n.target.name)) continue;
    const values = n.op === 'eq' ? [n.value] : n.op === 'in' ? (n.value as unknown[]) : null;
    if (values) pins[n.target.name as EntityColumn] = values.map(String);
  }
  return pins;
}

/** Whether the filter says nothing but which entities' memories to search: each of its nodes is one of `pins`. */
function isPinsOnly(node: FilterNode, pins: EntityPins): boolean {
  return (node.kind === 'and' ? node.nodes.length : 1) === Object.keys(pins).length;
}

/** The filter narrowed to memories whose event time falls in `span`. */
function withinSpan(filter: FilterNode, span: { start: number; end: number }): FilterNode {
  const target = { kind: 'column', name: 'created_at', type: 'date' } as const;
  return {
    kind: 'and',
    nodes: [filter, { kind: 'cmp', op: 'gte', target, value: span.start }, { kind: 'cmp', op: 'lt', target, value: span.end }],
  };
}

/**
 * Reciprocal-rank fusion of ranked lists, best first, the newer memory first on a tie; the score
 * is scaled so that first in every list is 1.
 */
function fuse(lists: Array<Array<{ id: string }>>): Array<{ id: string; score: number }> {
  const top = lists.length / (RRF_K + 1);
  return reciprocalRankFusion(
    lists.map((list) => list.map((hit) => hit.id)),
    (a, b) => (a < b ? 1 : -1),
  ).map(({ id, score }) => ({ id, score: score / top }));
}

/** An embedder or vector store that cannot answer now: unreachable (503), or its model files missing. */
function isUnavailable(err: unknown): boolean {
  return err instanceof AppError && (err.status === 503 || err.code === 'embed_model_unavailable');
}
