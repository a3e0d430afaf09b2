import type { Knex } from 'knex';
import type { ChangeCounts } from '../../db/change-counts.js';
import type { EntityPins, MemoryTermsRepository, Posting, TermsOf } from '../../db/repositories/memory-terms.repository.js';
import { indexedTerms, queryTerms, termCounts } from '../../contracts/memory-terms.js';
import { nextTurn } from '../../lib/turns.js';

/** Most postings one keyword search reads from the database (see `search`). */
const MAX_POSTINGS = 20_000;

/** Characters of memory text tokenised between two turns of the event loop (~10 ms of work). */
const TERMS_SLICE_CHARS = 64 * 1024;

/** BM25's term-frequency saturation and length normalisation (the usual values). */
const K1 = 1.2;
const B = 0.75;

/** Scopes of at least this many memories keep their statistics and postings in memory (see `ScopeCache`). */
const CACHED_SCOPE = 5_000;
/**
 * Most postings kept in memory over all cached scopes, least recently used scope first out: a
 * 100k-memory app with every one of its words read holds ~1M postings, ~22 MB (typed arrays and ids).
 */
const CACHED_POSTINGS = 2_000_000;

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
 * The postings of one term: the memories holding it (as slots of a `Postings` table) and each one's
 * BM25 term weight before idf — tf·(k1 + 1) / (tf + k1·(1 − b + b·length / mean length)).
 */
interface TermList {
  slots: Int32Array;
  impacts: Float64Array;
}

/** Postings of some terms over one scope, with each memory once, by slot. */
class Postings {
  readonly ids: string[] = [];
  readonly lists = new Map<string, TermList>();
  /**
   * Document frequencies of the terms counted so far, read or not (a term past the postings budget,
   * or in no memory of the scope, is counted too): a cached scope counts each term once.
   */
  readonly frequencies = new Map<string, number>();
  /** How many postings the lists hold. */
  size = 0;
  private readonly slotOf = new Map<string, number>();
  /** Per-slot sums of one search, kept between searches (zeroed where used) so a large scope allocates them once. */
  private sums = { scores: new Float64Array(0), coverage: new Float64Array(0), seen: new Uint8Array(0) };

  constructor(readonly documents: number, readonly meanLength: number) {}

  /** Adds the postings read for `terms` (a term with none gets an empty list). */
  add(terms: string[], postings: Posting[]): void {
    const meanLength = this.meanLength > 0 ? this.meanLength : 1;
    const byTerm = new Map<string, Posting[]>(terms.map((t) => [t, []]));
    for (const p of postings) byTerm.get(p.term)?.push(p);
    for (const [term, rows] of byTerm) {
      const list = { slots: new Int32Array(rows.length), impacts: new Float64Array(rows.length) };
      rows.forEach((p, i) => {
        let slot = this.slotOf.get(p.memory_id);
        if (slot === undefined) {
          slot = this.ids.length;
          this.slotOf.set(p.memory_id, slot);
          this.ids.push(p.memory_id);
        }
        const tf = Number(p.tf);
        list.slots[i] = slot;
        list.impacts[i] = (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * Number(p.doc_len)) / meanLength));
      });
      this.size += list.slots.length - (this.lists.get(term)?.slots.length ?? 0);
      this.lists.set(term, list);
    }
  }

  /** Zeroed per-slot arrays for one search; `release` zeroes the slots it touched. */
  borrow(): { scores: Float64Array; coverage: Float64Array; seen: Uint8Array } {
    if (this.sums.seen.length < this.ids.length) {
      const size = this.ids.length;
      this.sums = { scores: new Float64Array(size), coverage: new Float64Array(size), seen: new Uint8Array(size) };
    }
    return this.sums;
  }

  release(touched: number[]): void {
    for (const slot of touched) {
      this.sums.scores[slot] = 0;
      this.sums.coverage[slot] = 0;
      this.sums.seen[slot] = 0;
    }
  }
}

/** A scope's statistics and the postings read so far, valid while its project's count stands. */
interface ScopeCache {
  projectId: string;
  postings: Postings;
  /** The project's count of changes (`ChangeCounts`) when it was read; null when it could not be read. */
  version: number | null;
  expires: number;
}

/**
 * BM25 keyword search over memory text. The index (`memory_terms`, one row per memory and term)
 * lives in the database next to the rows and is written in the same transaction as each memory,
 * so it is exact the moment a write is acknowledged, on every API process, and needs no worker.
 * Collection statistics (document count, mean length, document frequencies) are those of the
 * entity the search is pinned to — one user's memories are ranked among themselves.
 *
 * A scope of `CACHED_SCOPE` memories or more (a whole app) keeps its statistics and the postings
 * of the terms searched in memory: reading a common word's postings there costs tens of
 * milliseconds each time. Every committed write counts a change to its project (`ChangeCounts`:
 * in this process on the embedded profile, in Redis across processes on production), and a cached
 * scope is used only while its project's count is what it was read under, so a search never
 * misses a write acknowledged before it. Smaller scopes are read from the database each time.
 */
export class MemoryKeywords {
  private readonly scopes = new Map<string, ScopeCache>();
  /** Committed writes whose change is still being counted (see `settled`). */
  private readonly unsettled = new Set<Promise<void>>();

  constructor(
    private readonly terms: MemoryTermsRepository,
    private readonly changes: ChangeCounts,
  ) {}

  /** The length in terms of a memory's text (stored on the row as `term_count`). */
  static length(text: string): number {
    return termCounts(text).length;
  }

  /**
   * The terms each memory's text is indexed by (`indexedTerms`; `length` is its row's
   * `term_count`), worked out a slice of text at a time with the event loop free between slices,
   * so a batch of long texts never holds it.
   */
  async termsOf(memories: readonly KeywordSource[]): Promise<TermsOf[]> {
    const terms: TermsOf[] = [];
    let sinceYield = 0;
    for (const m of memories) {
      if (sinceYield >= TERMS_SLICE_CHARS) {
        sinceYield = 0;
        await nextTurn();
      }
      terms.push({ ...m, ...indexedTerms(m.memory) });
      sinceYield += m.memory.length;
    }
    return terms;
  }

  /**
   * Indexes memories, in the caller's transaction: `fresh` ones just written, or re-indexes changed
   * ones; `terms` when the caller has worked them out already (`termsOf`).
   */
  async write(trx: Knex | Knex.Transaction, memories: KeywordSource[], fresh = false, terms?: TermsOf[]): Promise<void> {
    await this.terms.write(trx, terms ?? (await this.termsOf(memories)), fresh);
    this.changed(trx, memories.map((m) => m.project_id));
  }

  async remove(trx: Knex | Knex.Transaction, ids: string[], projectId: string): Promise<void> {
    await this.terms.remove(trx, ids);
    this.changed(trx, [projectId]);
  }

  /**
   * The memories of the pinned scope that share terms with the query, best BM25 score first, each
   * with its `coverage`: the share of the query's idf weight its matched terms carry (1 when it
   * holds every informative query term); those with less than `minCoverage` are left out, and
   * with a `minCoverage`, so is every memory when each query term present is in over half of a scope of several.
   */
  async search(projectId: string, pins: EntityPins, query: string, limit: number, minCoverage = 0): Promise<KeywordHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const key = `${projectId}\u0000${JSON.stringify(Object.entries(pins).sort())}`;
    const cached = await this.cached(key);
    // document frequencies: a cached scope's earlier counts, the others counted in the database
    const uncounted = cached ? terms.filter((t) => !cached.postings.frequencies.has(t)) : terms;
    const [scope, counts] = await Promise.all([cached ?? this.open(projectId, pins), this.terms.frequencies(projectId, pins, uncounted)]);
    const { postings } = scope;
    if (postings.documents === 0) return [];
    for (const t of uncounted) postings.frequencies.set(t, counts.get(t) ?? 0);
    const frequency = postings.frequencies;
    // A term in more than half of the scope (a speaker's name on every line of a chat, a word
    // every memory of this entity uses) tells its memories apart no better than chance; when the
    // query has rarer terms, it is left out, so that sharing it alone does not make a keyword hit.
    const present = terms.filter((t) => (frequency.get(t) ?? 0) > 0);
    if (present.length === 0) return [];
    const rare = present.filter((t) => (frequency.get(t) as number) <= postings.documents / 2);
    // Asked for fusion (a coverage floor), a query that shares only such terms with a scope of
    // several memories has no keyword hits: most of the scope would hold all its weight, ranked by
    // length alone ("Hugo: Why?" first when every line of Hugo's chat starts with his name).
    if (rare.length === 0 && minCoverage > 0 && postings.documents > 1) return [];
    const informative = (rare.length > 0 ? rare : present).sort((a, b) => (frequency.get(a) as number) - (frequency.get(b) as number));
    // Postings not yet in memory are read rarest term first, up to a budget: a pin over a whole
    // large app would otherwise read every posting of its common words, which weigh least. The
    // rarest term is always read; one-entity scopes stay far under the budget and are scored exactly.
    let budget = MAX_POSTINGS;
    const read = informative.filter((t) => !postings.lists.has(t)).filter((t, i) => {
      budget -= frequency.get(t) as number;
      return i === 0 || budget >= 0;
    });
    if (read.length > 0) postings.add(read, await this.terms.postings(projectId, pins, read));
    if (scope.version !== null && postings.documents >= CACHED_SCOPE) this.keep(key, scope);
    return score(postings, informative, frequency, limit, minCoverage);
  }

  /** A scope's statistics read afresh, with the project's count of changes read before them. */
  private async open(projectId: string, pins: EntityPins): Promise<ScopeCache> {
    // the count first: a write that lands between the two reads makes the count stale, never the scope
    const version = await this.changes.current(projectId);
    const scope = await this.terms.scope(projectId, pins);
    return { projectId, postings: new Postings(scope.documents, scope.meanLength), version, expires: Date.now() + this.changes.staleAfterMs };
  }

  /** The cached scope under `key`, if its project has not changed since it was read. */
  private async cached(key: string): Promise<ScopeCache | undefined> {
    const cache = this.scopes.get(key);
    if (!cache) return undefined;
    if (cache.expires > Date.now() && (await this.changes.current(cache.projectId)) === cache.version) return cache;
    this.scopes.delete(key);
    return undefined;
  }

  private keep(key: string, cache: ScopeCache): void {
    this.scopes.delete(key);
    this.scopes.set(key, cache);
    let held = 0;
    for (const scope of this.scopes.values()) held += scope.postings.size;
    for (const [oldest, scope] of this.scopes) {
      if (held <= CACHED_POSTINGS || oldest === key) break;
      held -= scope.postings.size;
      this.scopes.delete(oldest);
    }
  }

  /**
   * Resolves once every write committed so far is counted for the other processes: a write is
   * acknowledged only after this, so that no search on any process misses it.
   */
  async settled(): Promise<void> {
    await Promise.all([...this.unsettled]);
  }

  /** Counts the change to these projects once `trx` commits (`settled` waits for it). */
  private changed(trx: Knex | Knex.Transaction, projectIds: string[]): void {
    const committed = (): Promise<void> => this.changes.bump(projectIds);
    const counted = 'executionPromise' in trx && trx.executionPromise ? trx.executionPromise.then(committed, () => undefined) : committed();
    this.unsettled.add(counted);
    void counted.finally(() => this.unsettled.delete(counted));
  }
}

/** BM25 over the lists of `terms` that were read: the best `limit` holding `minCoverage` of their weight, best first. */
function score(postings: Postings, terms: string[], frequency: Map<string, number>, limit: number, minCoverage: number): KeywordHit[] {
  const idf = new Map<string, number>();
  for (const t of terms) {
    const df = frequency.get(t) as number;
    idf.set(t, Math.log(1 + (postings.documents - df + 0.5) / (df + 0.5)));
  }
  const totalWeight = [...idf.values()].reduce((sum, w) => sum + w, 0);
  const { scores, coverage, seen } = postings.borrow();
  const touched: number[] = [];
  for (const t of terms) {
    const list = postings.lists.get(t);
    if (!list) continue;
    const weight = idf.get(t) as number;
    const share = weight / totalWeight;
    for (let i = 0; i < list.slots.length; i++) {
      const slot = list.slots[i] as number;
      if (seen[slot] === 0) {
        seen[slot] = 1;
        touched.push(slot);
      }
      scores[slot] = (scores[slot] as number) + weight * (list.impacts[i] as number);
      coverage[slot] = (coverage[slot] as number) + share;
    }
  }
  // ranked after: lower score, then the smaller id
  const after = (a: number, b: number): boolean =>
    (scores[a] as number) < (scores[b] as number) || (scores[a] === scores[b] && (postings.ids[a] as string) < (postings.ids[b] as string));
  // a share summed term by term can fall a rounding error short of the weight it names
  const kept = minCoverage > 0 ? touched.filter((slot) => (coverage[slot] as number) >= minCoverage - 1e-9) : touched;
  const hits = best(kept, limit, after).map((slot) => ({ id: postings.ids[slot] as string, score: scores[slot] as number, coverage: coverage[slot] as number }));
  postings.release(touched);
  return hits;
}

/**
 * The best `limit` of `items`, best first (`after(a, b)`: a ranks after b). A bounded heap whose
 * root is the worst kept: a common word over a whole app matches tens of thousands of memories,
 * and sorting them all to keep a few dozen cost more than scoring them.
 */
function best(items: number[], limit: number, after: (a: number, b: number) => boolean): number[] {
  const order = (a: number, b: number): number => (after(a, b) ? 1 : after(b, a) ? -1 : 0);
  if (items.length <= limit) return items.sort(order);
  const heap: number[] = [];
  const swap = (i: number, j: number): void => {
    [heap[i], heap[j]] = [heap[j] as number, heap[i] as number];
  };
  for (const item of items) {
    if (heap.length < limit) {
      heap.push(item);
      for (let i = heap.length - 1, parent = (i - 1) >> 1; i > 0 && after(heap[i] as number, heap[parent] as number); i = parent, parent = (i - 1) >> 1) swap(i, parent);
    } else if (after(heap[0] as number, item)) {
      heap[0] = item;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        let worst = i;
        if (l < heap.length && after(heap[l] as number, heap[worst] as number)) worst = l;
        if (l + 1 < heap.length && after(heap[l + 1] as number, heap[worst] as number)) worst = l + 1;
        if (worst === i) break;
        swap(i, worst);
        i = worst;
      }
    }
  }
  return heap.sort(order);
}
