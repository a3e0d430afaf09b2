import type { Knex } from 'knex';
import { createRequire } from 'node:module';
import type * as USearch from 'usearch';
import type { FilterNode, FilterRow, Scalar } from '../../contracts/filter/filter.js';
import { checkMetadataSize, type CollectionSpec, type Metric, type SearchOptions, type StoredPoint, type VectorMatch, type VectorPoint, type VectorStore } from '../../contracts/vector-store.js';
import { FilterIndex, type Selection } from './embedded-filter-index.js';

// USearch's ESM build cannot find its native binary (it walks a file: URL as a path); the CommonJS build can.
const { exactSearch, MetricKind } = createRequire(import.meta.url)('usearch') as typeof USearch;

const TABLE = 'embedded_vectors';
// SQLite binds at most 32766 variables per statement; six per row
const INSERT_CHUNK = 500;
const ID_CHUNK = 500;
/**
 * Scoring listed slots costs a few times what a pass over the whole slab costs per slot (a copy
 * of each vector first, read out of order): a filter passing more than one slot in this many is
 * searched as a pass over the whole slab.
 */
const FULL_SCAN_SHARE = 6;
/** How many bytes of vectors `nearestAmong` scores at a time: a block that stays in cache. */
const BLOCK_BYTES = 512 * 1024;
let block = new Float32Array(0);

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
 * The filterable values of every row are indexed (`FilterIndex`), in step with every put, removal
 * and move, so a filter finds its slots without testing every row.
 */
class Slab {
  size = 0;
  values: Float32Array;
  ids: string[] = [];
  rows: FilterRow[] = [];
  private readonly slots = new Map<string, number>();
  private readonly filters: FilterIndex;

  constructor(readonly dimension: number, columns: CollectionSpec['columns'], capacity = 1024) {
    this.values = new Float32Array(capacity * dimension);
    this.filters = new FilterIndex(columns);
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
      this.filters.remove(slot, this.rows[slot] as FilterRow);
    }
    this.values.set(vector, slot * this.dimension);
    this.ids[slot] = id;
    this.rows[slot] = row;
    this.filters.add(slot, row);
  }

  remove(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.slots.delete(id);
    this.filters.remove(slot, this.rows[slot] as FilterRow);
    const last = --this.size;
    if (slot !== last) {
      this.values.copyWithin(slot * this.dimension, last * this.dimension, (last + 1) * this.dimension);
      this.ids[slot] = this.ids[last] as string;
      this.rows[slot] = this.rows[last] as FilterRow;
      this.slots.set(this.ids[slot], slot);
      this.filters.remove(last, this.rows[slot]);
      this.filters.add(slot, this.rows[slot]);
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
    this.filters.clear();
  }

  /** What `filter` selects of the slab (see `Selection`). */
  select(filter: FilterNode): Selection {
    return this.filters.select(filter, this.rows, this.size);
  }

  /** The packed vectors of slots [0, size). */
  packed(): Float32Array {
    return this.values.subarray(0, this.size * this.dimension);
  }

  vector(slot: number): number[] {
    // a plain loop: Array.from over a typed array goes through its iterator, several times slower
    const out = new Array<number>(this.dimension);
    for (let i = 0, at = slot * this.dimension; i < this.dimension; i++) out[i] = this.values[at + i] as number;
    return out;
  }

  private grow(): void {
    const values = new Float32Array(this.values.length * 2);
    values.set(this.values);
    this.values = values;
  }
}

/**
 * The embedded profile's vector store: exact search over vectors persisted in the SQLite file and
 * held in typed arrays, one slab per (collection, project), so tenancy is structural. A slab is
 * read from SQLite on first use; writes go to SQLite first and then to memory, so a restart loses
 * nothing acknowledged, and one process owns the file, so memory cannot go stale.
 *
 * Search is exact: USearch's SIMD `exactSearch` over the whole slab when most vectors pass the
 * filter, over the passing vectors alone (gathered a block at a time) when few do. Which slots
 * pass is planned on the slab's filter index, so a narrow filter costs about what its slots do.
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
    const slots = slab.select(filter).slots();
    await this.deleteByIds(spec, projectId, slots ? Array.from(slots, (slot) => slab.ids[slot] as string) : [...slab.ids.slice(0, slab.size)]);
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
    const selection = options.filter ? slab.select(options.filter) : null;
    const hits = selection ? nearestSelected(slab, query, spec.metric, selection, k) : nearest(slab, query, spec.metric, k);
    return hits.map(([slot, score]) => ({ ...point(slab, slot, options.includeValues === true), score }));
  }

  async count(spec: CollectionSpec, projectId: string, filter?: FilterNode | null): Promise<number> {
    const slab = await this.slab(spec, projectId);
    if (!filter) return slab.size;
    return slab.select(filter).count();
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
    const slab = new Slab(spec.dimension, spec.columns, Math.max(1024, rows.length));
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

/**
 * The k nearest of the given slots (ascending), best first. Their vectors are copied a block at a
 * time into a buffer small enough to stay in cache, and USearch's exact search runs on each block;
 * the blocks' answers are merged. A slot list scored this way costs a few times what the same
 * number of slots costs in a pass over the whole slab, hence `FULL_SCAN_SHARE`.
 */
function nearestAmong(slab: Slab, query: Float32Array, metric: Metric, slots: Int32Array, k: number): Array<[number, number]> {
  const { dimension, values } = slab;
  const perBlock = Math.max(1, Math.floor(BLOCK_BYTES / (dimension * 4)));
  // one buffer for every search: a search runs to its end without yielding
  if (block.length < perBlock * dimension) block = new Float32Array(perBlock * dimension);
  let best: Array<[number, number]> = [];
  for (let start = 0; start < slots.length; start += perBlock) {
    const end = Math.min(slots.length, start + perBlock);
    // runs of consecutive slots are copied at once
    for (let i = start; i < end; ) {
      const first = slots[i] as number;
      let run = 1;
      while (i + run < end && slots[i + run] === first + run) run++;
      block.set(values.subarray(first * dimension, (first + run) * dimension), (i - start) * dimension);
      i += run;
    }
    const found = exactSearch(block.subarray(0, (end - start) * dimension), query, dimension, Math.min(k, end - start), METRIC_KINDS[metric], 1) as USearch.Matches;
    const hits: Array<[number, number]> = [];
    for (let i = 0; i < found.keys.length; i++) hits.push([slots[start + Number(found.keys[i])] as number, found.distances[i] as number]);
    best = closest(best, hits, k);
  }
  return best.map(([slot, distance]) => [slot, toScore(metric, distance)]);
}

/** The k closest of two lists of (slot, distance) sorted by distance; `a` first on a tie. */
function closest(a: Array<[number, number]>, b: Array<[number, number]>, k: number): Array<[number, number]> {
  const merged: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (merged.length < k && (i < a.length || j < b.length)) {
    const next = j >= b.length || (i < a.length && (a[i] as [number, number])[1] <= (b[j] as [number, number])[1]) ? a[i++] : b[j++];
    merged.push(next as [number, number]);
  }
  return merged;
}

/**
 * The k nearest slots that pass a filter. When few pass, only they are scored. When most do, or
 * may, the nearest of the whole slab are found, enough of them that k should pass, and tested one
 * by one. Should fewer than k of them pass (the filter turns away just the neighbourhood of the
 * query), the passing slots are counted and searched again: alone when fewer than half pass, else
 * among as many nearest of the slab as it takes for k of them to pass whatever the filter turns away.
 */
function nearestSelected(slab: Slab, query: Float32Array, metric: Metric, selection: Selection, k: number): Array<[number, number]> {
  const size = slab.size;
  if (selection.exact && selection.bound === size) return nearest(slab, query, metric, k);
  const narrow = (count: number) => count * FULL_SCAN_SHARE < size;
  // a filter that passes few slots by the index's count, or by a sample of the slab's rows
  if (narrow(selection.bound) || narrow(selection.estimate())) {
    const slots = selection.slots();
    if (!slots) return nearest(slab, query, metric, k);
    if (slots.length === 0) return [];
    if (narrow(slots.length)) return nearestAmong(slab, query, metric, slots, k);
  }
  // not narrow, so the estimate is well above 0
  const asked = Math.min(size, Math.ceil((2 * k * size) / selection.estimate()) + 16);
  const hits = nearest(slab, query, metric, asked).filter(([slot]) => selection.passes(slot));
  if (hits.length >= k || asked === size) return hits.slice(0, k);
  const slots = selection.slots();
  if (!slots) return nearest(slab, query, metric, k);
  if (slots.length * 2 < size) return nearestAmong(slab, query, metric, slots, k);
  // at most the size − passing nearest of the slab are turned away
  return nearest(slab, query, metric, Math.min(size, k + size - slots.length))
    .filter(([slot]) => selection.passes(slot))
    .slice(0, k);
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
