import type { Knex } from 'knex';
import { createRequire } from 'node:module';
import type * as USearch from 'usearch';
import type { FilterNode, FilterRow, Scalar } from '../../contracts/filter/filter.js';
import { toPredicate } from '../../contracts/filter/predicate.js';
import { checkMetadataSize, type CollectionSpec, type Metric, type SearchOptions, type StoredPoint, type VectorMatch, type VectorPoint, type VectorStore } from '../../contracts/vector-store.js';

// USearch's ESM build cannot find its native binary (it walks a file: URL as a path); the CommonJS build can.
const { exactSearch, MetricKind } = createRequire(import.meta.url)('usearch') as typeof USearch;

const TABLE = 'embedded_vectors';
// SQLite binds at most 32766 variables per statement; six per row
const INSERT_CHUNK = 500;
const ID_CHUNK = 500;

interface Row {
  project_id: string;
  id: string;
  vector: Buffer;
  columns: string;
  metadata: string;
}

/**
 * One project's vectors in one collection, in memory: packed into one Float32Array
 * (slot × dimension), with the id and filter row of each slot beside it. Deletion moves the last
 * slot into the hole, so the slab stays dense and a search is one pass over contiguous memory.
 *
 * Each string column (user_id, app_id, …) also has an inverted index, value → slots, kept in step
 * with every put, removal and move: a filter pinning such a column with `eq` or `in` then starts
 * from that value's slots instead of testing every slot of the project.
 */
class Slab {
  size = 0;
  values: Float32Array;
  ids: string[] = [];
  rows: FilterRow[] = [];
  private readonly slots = new Map<string, number>();
  private readonly indexes: Map<string, Map<string, Set<number>>>;

  constructor(readonly dimension: number, stringColumns: string[], capacity = 1024) {
    this.values = new Float32Array(capacity * dimension);
    this.indexes = new Map(stringColumns.map((column) => [column, new Map<string, Set<number>>()]));
  }

  slotOf(id: string): number | undefined {
    return this.slots.get(id);
  }

  put(id: string, vector: ArrayLike<number>, row: FilterRow): void {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if ((this.size + 1) * this.dimension > this.values.length) this.grow();
      slot = this.size++;
      this.slots.set(id, slot);
    } else {
      this.unindex(slot, this.rows[slot] as FilterRow);
    }
    this.values.set(vector, slot * this.dimension);
    this.ids[slot] = id;
    this.rows[slot] = row;
    this.index(slot, row);
  }

  remove(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.slots.delete(id);
    this.unindex(slot, this.rows[slot] as FilterRow);
    const last = --this.size;
    if (slot !== last) {
      this.values.copyWithin(slot * this.dimension, last * this.dimension, (last + 1) * this.dimension);
      this.ids[slot] = this.ids[last] as string;
      this.rows[slot] = this.rows[last] as FilterRow;
      this.slots.set(this.ids[slot], slot);
      this.unindex(last, this.rows[slot]);
      this.index(slot, this.rows[slot]);
    }
    this.ids.length = last;
    this.rows.length = last;
  }

  /** Empties the slab, as deleting every id would, without moving each last slot into a hole. */
  clear(): void {
    this.size = 0;
    this.ids = [];
    this.rows = [];
    this.slots.clear();
    for (const index of this.indexes.values()) index.clear();
  }

  /**
   * The slots whose string column `column` holds one of `values`, as the sets of the index (one
   * per value found, disjoint); `null` when the column has no index.
   */
  slotsWith(column: string, values: Iterable<string>): Array<Set<number>> | null {
    const index = this.indexes.get(column);
    if (!index) return null;
    const sets: Array<Set<number>> = [];
    for (const value of new Set(values)) {
      const slots = index.get(value);
      if (slots) sets.push(slots);
    }
    return sets;
  }

  /** The packed vectors of slots [0, size). */
  packed(): Float32Array {
    return this.values.subarray(0, this.size * this.dimension);
  }

  vector(slot: number): number[] {
    return Array.from(this.values.subarray(slot * this.dimension, (slot + 1) * this.dimension));
  }

  private index(slot: number, row: FilterRow): void {
    for (const [column, index] of this.indexes) {
      const value = stringColumn(row, column);
      if (value === null) continue;
      let slots = index.get(value);
      if (!slots) index.set(value, (slots = new Set()));
      slots.add(slot);
    }
  }

  private unindex(slot: number, row: FilterRow): void {
    for (const [column, index] of this.indexes) {
      const value = stringColumn(row, column);
      if (value === null) continue;
      const slots = index.get(value);
      slots?.delete(slot);
      // ids such as run_id come and go; an emptied value must not stay behind
      if (slots?.size === 0) index.delete(value);
    }
  }

  private grow(): void {
    const values = new Float32Array(this.values.length * 2);
    values.set(this.values);
    this.values = values;
  }
}

/** A row's value of a string column, read as filters read it: only a string counts. */
function stringColumn(row: FilterRow, column: string): string | null {
  const value = Object.hasOwn(row.columns, column) ? row.columns[column] : undefined;
  return typeof value === 'string' ? value : null;
}

/**
 * The embedded profile's vector store: exact search over vectors persisted in the SQLite file and
 * held in typed arrays, one slab per (collection, project), so tenancy is structural. A slab is
 * read from SQLite on first use; writes go to SQLite first and then to memory, so a restart loses
 * nothing acknowledged, and one process owns the file, so memory cannot go stale.
 *
 * Search is brute force: USearch's SIMD `exactSearch` over the whole slab when most vectors pass
 * the filter, a scalar pass over the passing slots when few do. Both are exact. Which slots pass
 * is found from a string column's index when the filter pins one (see `passing`).
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly kind = 'embedded' as const;
  private readonly slabs = new Map<string, Promise<Slab>>();

  constructor(private readonly db: Knex) {}

  /** Nothing to create: a collection is its rows in the table. */
  async ensureCollection(spec: CollectionSpec): Promise<void> {
    if (!(spec.metric in METRIC_KINDS)) throw new Error(`Unknown metric ${spec.metric}`);
  }

  async dropCollection(name: string): Promise<void> {
    await this.db(TABLE).where({ collection: name }).delete();
    for (const key of [...this.slabs.keys()]) if (key.startsWith(`${name}\u0000`)) this.slabs.delete(key);
  }

  async upsert(spec: CollectionSpec, projectId: string, points: VectorPoint[]): Promise<void> {
    for (const p of points) checkMetadataSize(p.metadata, `vector "${p.id}"`);
    const slab = await this.slab(spec, projectId);
    const rows = points.map((p) => ({
      collection: spec.name,
      project_id: projectId,
      id: p.id,
      vector: Buffer.from(Float32Array.from(p.values).buffer),
      columns: JSON.stringify(p.columns ?? {}),
      metadata: JSON.stringify(p.metadata ?? {}),
    }));
    await this.db.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await trx(TABLE)
          .insert(rows.slice(i, i + INSERT_CHUNK))
          .onConflict(['collection', 'project_id', 'id'])
          .merge(['vector', 'columns', 'metadata']);
      }
    });
    for (const p of points) {
      slab.put(p.id, p.values, { columns: structuredClone(p.columns ?? {}), metadata: structuredClone(p.metadata ?? {}) });
    }
  }

  async deleteByIds(spec: CollectionSpec, projectId: string, ids: string[]): Promise<void> {
    const slab = await this.slab(spec, projectId);
    await this.db.transaction(async (trx) => {
      for (let i = 0; i < ids.length; i += ID_CHUNK) {
        await trx(TABLE)
          .where({ collection: spec.name, project_id: projectId })
          .whereIn('id', ids.slice(i, i + ID_CHUNK))
          .delete();
      }
    });
    for (const id of ids) slab.remove(id);
  }

  async deleteByFilter(spec: CollectionSpec, projectId: string, filter: FilterNode | null): Promise<void> {
    const slab = await this.slab(spec, projectId);
    if (filter === null) {
      await this.db(TABLE).where({ collection: spec.name, project_id: projectId }).delete();
      slab.clear();
      return;
    }
    const slots = passing(slab, filter);
    await this.deleteByIds(spec, projectId, slots ? slots.map((slot) => slab.ids[slot] as string) : [...slab.ids.slice(0, slab.size)]);
  }

  async fetch(spec: CollectionSpec, projectId: string, ids: string[], options: { includeValues?: boolean } = {}): Promise<StoredPoint[]> {
    const slab = await this.slab(spec, projectId);
    const found: StoredPoint[] = [];
    for (const id of new Set(ids)) {
      const slot = slab.slotOf(id);
      if (slot !== undefined) found.push(point(slab, slot, options.includeValues === true));
    }
    return found;
  }

  async existing(spec: CollectionSpec, projectId: string, ids: string[]): Promise<Set<string>> {
    const slab = await this.slab(spec, projectId);
    return new Set(ids.filter((id) => slab.slotOf(id) !== undefined));
  }

  async search(spec: CollectionSpec, projectId: string, vector: ArrayLike<number>, options: SearchOptions): Promise<VectorMatch[]> {
    const slab = await this.slab(spec, projectId);
    const k = Math.min(options.topK, slab.size);
    if (k <= 0) return [];
    const query = Float32Array.from(vector);
    const slots = options.filter ? passing(slab, options.filter) : null;
    let hits: Array<[number, number]>;
    if (!slots || slots.length === slab.size) {
      hits = nearest(slab, query, spec.metric, k);
    } else if (slots.length * 3 < slab.size) {
      hits = scan(slab, query, spec.metric, slots, k);
    } else {
      // Ask for enough neighbours that k of them pass even if every rejected vector ranks first.
      const allowed = new Uint8Array(slab.size);
      for (const slot of slots) allowed[slot] = 1;
      hits = nearest(slab, query, spec.metric, Math.min(slab.size, k + slab.size - slots.length))
        .filter(([slot]) => allowed[slot] === 1)
        .slice(0, k);
    }
    return hits.map(([slot, score]) => ({ ...point(slab, slot, options.includeValues === true), score }));
  }

  async count(spec: CollectionSpec, projectId: string, filter?: FilterNode | null): Promise<number> {
    const slab = await this.slab(spec, projectId);
    if (!filter) return slab.size;
    return passing(slab, filter)?.length ?? slab.size;
  }

  async ping(): Promise<void> {
    await this.db.raw('select 1');
  }

  private slab(spec: CollectionSpec, projectId: string): Promise<Slab> {
    const key = `${spec.name}\u0000${projectId}`;
    let slab = this.slabs.get(key);
    if (!slab) {
      slab = this.load(spec, projectId);
      this.slabs.set(key, slab);
      slab.catch(() => this.slabs.delete(key));
    }
    return slab;
  }

  private async load(spec: CollectionSpec, projectId: string): Promise<Slab> {
    const rows = (await this.db(TABLE)
      .select('id', 'vector', 'columns', 'metadata')
      .where({ collection: spec.name, project_id: projectId })) as Row[];
    const slab = new Slab(spec.dimension, stringColumns(spec), Math.max(1024, rows.length));
    const vector = new Float32Array(spec.dimension);
    const bytes = Buffer.from(vector.buffer);
    for (const row of rows) {
      bytes.set(row.vector.subarray(0, spec.dimension * 4));
      slab.put(row.id, vector, {
        columns: JSON.parse(row.columns) as Record<string, Scalar | null>,
        metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      });
    }
    return slab;
  }
}

const METRIC_KINDS: Record<Metric, USearch.MetricKind> = {
  cosine: MetricKind.Cos,
  dotproduct: MetricKind.IP,
  euclidean: MetricKind.L2sq,
};

/** USearch reports distances; turn them into Cairn's scores (see `Metric`). */
const toScore = (metric: Metric, distance: number): number => (metric === 'euclidean' ? distance : 1 - distance);

/**
 * The k nearest slots of the whole slab, best first, by USearch's exact SIMD search. USearch reads
 * a typed array from the start of its ArrayBuffer (it ignores byteOffset), so the slab's view and
 * the query must both start at offset 0, as `packed()` and `Float32Array.from` do.
 */
function nearest(slab: Slab, query: Float32Array, metric: Metric, k: number): Array<[number, number]> {
  const found = exactSearch(slab.packed(), query, slab.dimension, k, METRIC_KINDS[metric], 0) as USearch.Matches;
  const hits: Array<[number, number]> = [];
  for (let i = 0; i < found.keys.length; i++) hits.push([Number(found.keys[i]), toScore(metric, found.distances[i] as number)]);
  return hits;
}

/** The k best among the given slots, best first, by a scalar pass. */
function scan(slab: Slab, query: Float32Array, metric: Metric, slots: number[], k: number): Array<[number, number]> {
  const top = new TopK(k, metric !== 'euclidean');
  const queryNorm = Math.sqrt(dot(query, query, 0, slab.dimension));
  for (const slot of slots) top.offer(slot, score(metric, query, queryNorm, slab.values, slot * slab.dimension, slab.dimension));
  return top.sorted();
}

const stringColumns = (spec: CollectionSpec): string[] => Object.keys(spec.columns).filter((column) => spec.columns[column] === 'string');

/**
 * The slots that pass `filter`, ascending (the order a pass over every slot gives, so ties
 * between equal scores fall the same way). When the filter pins an indexed string column with
 * `eq` or `in`, alone or in a top-level AND, only the slots of the narrowest pin are tested; a
 * filter that is nothing but the pin needs no test at all, and null says it holds every slot (a
 * whole app's memories), which need not be listed.
 */
function passing(slab: Slab, filter: FilterNode): number[] | null {
  const pin = narrowestPin(slab, filter);
  if (pin && pin.node === filter && pin.count === slab.size) return null;
  const accept = toPredicate(filter);
  if (!pin) {
    const slots: number[] = [];
    for (let slot = 0; slot < slab.size; slot++) if (accept(slab.rows[slot] as FilterRow)) slots.push(slot);
    return slots;
  }
  const slots = ascending(slab.size, pin.sets);
  return pin.node === filter ? slots : slots.filter((slot) => accept(slab.rows[slot] as FilterRow));
}

/** Of the string-column pins the filter holds at its top, the one with the fewest slots. */
function narrowestPin(slab: Slab, filter: FilterNode): { node: FilterNode; sets: Array<Set<number>>; count: number } | null {
  let best: { node: FilterNode; sets: Array<Set<number>>; count: number } | null = null;
  for (const node of filter.kind === 'and' ? filter.nodes : [filter]) {
    const sets = pinned(slab, node);
    if (!sets) continue;
    const count = sets.reduce((sum, set) => sum + set.size, 0);
    if (!best || count < best.count) best = { node, sets, count };
  }
  return best;
}

/**
 * The index sets holding exactly the slots `node` accepts, when it is an `eq`/`in` on an indexed
 * string column. Only string values can equal a string column's value (filter.ts), so values of
 * another type select nothing.
 */
function pinned(slab: Slab, node: FilterNode): Array<Set<number>> | null {
  if (node.kind !== 'cmp' || node.target.kind !== 'column' || node.target.type !== 'string') return null;
  if (node.op !== 'eq' && node.op !== 'in') return null;
  const values = (Array.isArray(node.value) ? node.value : [node.value]).filter((v): v is string => typeof v === 'string');
  return slab.slotsWith(node.target.name, values);
}

/** The union of disjoint slot sets, ascending: sorted when small, read off a mark per slot when not. */
function ascending(size: number, sets: Array<Set<number>>): number[] {
  const count = sets.reduce((sum, set) => sum + set.size, 0);
  if (count * 16 < size) {
    const slots: number[] = [];
    for (const set of sets) for (const slot of set) slots.push(slot);
    return slots.sort((a, b) => a - b);
  }
  const marked = new Uint8Array(size);
  for (const set of sets) for (const slot of set) marked[slot] = 1;
  const slots: number[] = [];
  for (let slot = 0; slot < size; slot++) if (marked[slot] === 1) slots.push(slot);
  return slots;
}

function point(slab: Slab, slot: number, withValues: boolean): StoredPoint {
  const row = slab.rows[slot] as FilterRow;
  const stored: StoredPoint = {
    id: slab.ids[slot] as string,
    columns: structuredClone(row.columns) as Record<string, Scalar | null>,
    metadata: structuredClone(row.metadata),
  };
  if (withValues) stored.values = slab.vector(slot);
  return stored;
}

/** Dot product of `a` with `b[offset .. offset+n)`, four lanes at a time. */
function dot(a: Float32Array, b: Float32Array, offset: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += (a[i] as number) * (b[offset + i] as number);
    s1 += (a[i + 1] as number) * (b[offset + i + 1] as number);
    s2 += (a[i + 2] as number) * (b[offset + i + 2] as number);
    s3 += (a[i + 3] as number) * (b[offset + i + 3] as number);
  }
  for (; i < n; i++) s0 += (a[i] as number) * (b[offset + i] as number);
  return s0 + s1 + s2 + s3;
}

function score(metric: Metric, query: Float32Array, queryNorm: number, values: Float32Array, offset: number, n: number): number {
  if (metric === 'euclidean') {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const d = (query[i] as number) - (values[offset + i] as number);
      s += d * d;
    }
    return s;
  }
  const d = dot(query, values, offset, n);
  if (metric === 'dotproduct') return d;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[offset + i] as number) * (values[offset + i] as number);
  const denominator = queryNorm * Math.sqrt(squares);
  return denominator === 0 ? 0 : d / denominator;
}

/** The k best (slot, score) pairs seen, kept in a binary heap whose root is the worst kept. */
class TopK {
  private readonly slots: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number, private readonly higherIsBetter: boolean) {}

  offer(slot: number, score: number): void {
    if (this.k <= 0) return;
    if (this.slots.length < this.k) {
      this.slots.push(slot);
      this.scores.push(score);
      this.up(this.slots.length - 1);
    } else if (this.better(score, this.scores[0] as number)) {
      this.slots[0] = slot;
      this.scores[0] = score;
      this.down(0);
    }
  }

  sorted(): Array<[number, number]> {
    const pairs = this.slots.map((slot, i) => [slot, this.scores[i] as number] as [number, number]);
    return pairs.sort((a, b) => (this.higherIsBetter ? b[1] - a[1] : a[1] - b[1]));
  }

  private better(a: number, b: number): boolean {
    return this.higherIsBetter ? a > b : a < b;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.better(this.scores[parent] as number, this.scores[i] as number)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.slots.length;
    for (;;) {
      let worst = i;
      for (const child of [2 * i + 1, 2 * i + 2]) {
        if (child < n && this.better(this.scores[worst] as number, this.scores[child] as number)) worst = child;
      }
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }

  private swap(a: number, b: number): void {
    [this.slots[a], this.slots[b]] = [this.slots[b] as number, this.slots[a] as number];
    [this.scores[a], this.scores[b]] = [this.scores[b] as number, this.scores[a] as number];
  }
}
