import type { ColumnType, FilterNode, FilterRow, Scalar } from '../../contracts/filter/filter.js';
import { toPredicate } from '../../contracts/filter/predicate.js';

/** The slots holding one value: one slot inline (most values of an id or a time are one row's), or a set of them. */
type Posting = number | Set<number>;

const postingSize = (posting: Posting): number => (typeof posting === 'number' ? 1 : posting.size);

function addTo<K>(postings: Map<K, Posting>, key: K, slot: number): void {
  const posting = postings.get(key);
  if (posting === undefined) postings.set(key, slot);
  else if (typeof posting !== 'number') posting.add(slot);
  else if (posting !== slot) postings.set(key, new Set([posting, slot]));
}

function removeFrom<K>(postings: Map<K, Posting>, key: K, slot: number): void {
  const posting = postings.get(key);
  if (posting === slot) postings.delete(key);
  else if (typeof posting === 'object' && posting.delete(slot) && posting.size === 1) postings.set(key, posting.values().next().value as number);
}

/**
 * One field's values (a column's, or a metadata key's), each to the slots holding it, typed as
 * filters compare them: a string, a finite number and a boolean are three keys, so `"5"` never
 * meets `5`. Arrays are indexed by their string elements, which is all `contains` asks about.
 */
class FieldIndex {
  readonly strings = new Map<string, Posting>();
  readonly numbers = new Map<number, Posting>();
  readonly booleans = new Map<boolean, Posting>();
  readonly elements = new Map<string, Posting>();
  /** Slots holding a number: the most a range can select. */
  numbered = 0;
  /** Values indexed; a metadata key's index is dropped when it falls to 0. */
  entries = 0;

  add(value: Scalar, slot: number): void {
    this.entries += 1;
    if (typeof value === 'string') addTo(this.strings, value, slot);
    else if (typeof value === 'boolean') addTo(this.booleans, value, slot);
    else {
      addTo(this.numbers, value, slot);
      this.numbered += 1;
    }
  }

  remove(value: Scalar, slot: number): void {
    this.entries -= 1;
    if (typeof value === 'string') removeFrom(this.strings, value, slot);
    else if (typeof value === 'boolean') removeFrom(this.booleans, value, slot);
    else {
      removeFrom(this.numbers, value, slot);
      this.numbered -= 1;
    }
  }

  /** The slots whose value is `value` (same type, equal); undefined when none. */
  posting(value: unknown): Posting | undefined {
    if (typeof value === 'string') return this.strings.get(value);
    if (typeof value === 'number') return this.numbers.get(value);
    if (typeof value === 'boolean') return this.booleans.get(value);
    return undefined;
  }
}

/** A field no row holds: every comparison on it selects nothing. */
const NO_FIELD = new FieldIndex();

/**
 * How a filter narrows the slots, built from the index before any row is read: `slots()` gives
 * exactly the passing slots, ascending; at most `bound` of them (exactly `bound` when `exact`).
 */
interface Plan {
  bound: number;
  exact: boolean;
  slots(): Int32Array;
}

/**
 * The filterable values of a slab's rows (every column of the collection, every metadata key's
 * scalar value and the string elements of its arrays), each to the slots holding it, kept in step
 * with each row put, removed or moved. A filter is planned over it: `eq`, `in` and `contains` read
 * their slots off the index, a range reads the matching values of its field, an AND starts from
 * its narrowest part and tests only those slots against the rest, an OR unites its parts. What
 * the index cannot narrow (`ne`, NOT, a column of another type) is tested row by row with the
 * filter's own predicate, over the slots the rest of the plan leaves, or over every slot when
 * nothing narrows. Either way the answer is exactly what the predicate gives.
 */
export class FilterIndex {
  private readonly columns: Map<string, { type: ColumnType; field: FieldIndex }>;
  private readonly metadata = new Map<string, FieldIndex>();

  constructor(columns: Record<string, ColumnType>) {
    this.columns = new Map(Object.entries(columns).map(([name, type]) => [name, { type, field: new FieldIndex() }]));
  }

  add(slot: number, row: FilterRow): void {
    this.visit(row, (field, value) => field.add(value, slot), (field, element) => addTo(field.elements, element, slot), true);
  }

  remove(slot: number, row: FilterRow): void {
    this.visit(row, (field, value) => field.remove(value, slot), (field, element) => removeFrom(field.elements, element, slot), false);
  }

  clear(): void {
    for (const [name, { type }] of this.columns) this.columns.set(name, { type, field: new FieldIndex() });
    this.metadata.clear();
  }

  /** What `filter` selects of `rows[0 .. size)`, planned on the index; nothing is read until asked. */
  select(filter: FilterNode, rows: readonly FilterRow[], size: number): Selection {
    return new Selection(this.plan(filter, rows, size), toPredicate(filter), rows, size);
  }

  /** Calls `scalar` for each indexed value of the row and `element` for each distinct string element of its arrays. */
  private visit(row: FilterRow, scalar: (field: FieldIndex, value: Scalar) => void, element: (field: FieldIndex, element: string) => void, adding: boolean): void {
    for (const [name, { type, field }] of this.columns) {
      const value = columnValue(type, Object.hasOwn(row.columns, name) ? row.columns[name] : undefined);
      if (value !== null) scalar(field, value);
    }
    for (const key of Object.keys(row.metadata)) {
      const value = row.metadata[key];
      const scalarValue = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
      const elements = Array.isArray(value) ? new Set(value.filter((e): e is string => typeof e === 'string')) : null;
      if (!scalarValue && !elements?.size) continue;
      let field = this.metadata.get(key);
      if (!field) {
        if (!adding) continue;
        this.metadata.set(key, (field = new FieldIndex()));
      }
      if (scalarValue) scalar(field, value as Scalar);
      else {
        for (const e of elements as Set<string>) element(field, e);
        field.entries += adding ? 1 : -1;
      }
      if (field.entries === 0) this.metadata.delete(key);
    }
  }

  /** The plan for `node`; null when the index cannot narrow it. */
  private plan(node: FilterNode, rows: readonly FilterRow[], size: number): Plan | null {
    switch (node.kind) {
      case 'cmp':
        return this.comparison(node, size);
      case 'not':
        return null;
      case 'or': {
        const parts: Plan[] = [];
        for (const n of node.nodes) {
          const part = this.plan(n, rows, size);
          if (!part) return null;
          parts.push(part);
        }
        return {
          bound: Math.min(size, parts.reduce((sum, p) => sum + p.bound, 0)),
          exact: false,
          slots: () => union(parts.map((p) => p.slots()), size),
        };
      }
      case 'and': {
        // start from the narrowest part; the other parts are tested on its slots only
        let narrowest: Plan | null = null;
        let at = -1;
        for (const [i, n] of node.nodes.entries()) {
          const plan = this.plan(n, rows, size);
          if (plan && (!narrowest || plan.bound < narrowest.bound)) [narrowest, at] = [plan, i];
        }
        if (!narrowest) return null;
        const rest = node.nodes.filter((_, i) => i !== at);
        if (rest.length === 0) return narrowest;
        const start = narrowest;
        const accept = toPredicate(rest.length === 1 ? (rest[0] as FilterNode) : { kind: 'and', nodes: rest });
        return {
          bound: start.bound,
          exact: start.bound === 0,
          slots: () => {
            const candidates = start.slots();
            return test(candidates, candidates.length, rows, accept);
          },
        };
      }
    }
  }

  /**
   * A comparison's plan: `eq`, `in`, `contains` and ranges on a metadata key or on a column read
   * as the collection types it; null for `ne` and for a column the index does not hold as typed.
   */
  private comparison(node: Extract<FilterNode, { kind: 'cmp' }>, size: number): Plan | null {
    let field: FieldIndex;
    if (node.target.kind === 'metadata') field = this.metadata.get(node.target.key) ?? NO_FIELD;
    else {
      const column = this.columns.get(node.target.name);
      if (!column || column.type !== node.target.type) return null;
      field = column.field;
    }
    const { op, value } = node;
    switch (op) {
      case 'ne':
        return null;
      case 'eq':
        return lookup(Array.isArray(value) ? [] : [field.posting(value)], size);
      case 'in':
        return lookup(Array.isArray(value) ? [...new Set(value)].map((v) => field.posting(v)) : [], size);
      case 'contains':
        // only string elements are indexed, which is all a parsed filter asks for
        return typeof value === 'string' ? lookup([field.elements.get(value)], size) : null;
      default: {
        if (typeof value !== 'number') return lookup([], size);
        const within = RANGES[op];
        return {
          bound: field.numbered,
          exact: false,
          slots: () => {
            const postings: Posting[] = [];
            for (const [number, posting] of field.numbers) if (within(number, value)) postings.push(posting);
            return ascending(postings, size);
          },
        };
      }
    }
  }
}

/** Slots tested to estimate how many pass a filter the index cannot count. */
const SAMPLE = 128;

/** The slots a filter selects of a slab, found as the plan says, once asked for. */
export class Selection {
  private found: Int32Array | null | undefined;
  private estimated: number | undefined;

  constructor(
    private readonly plan: Plan | null,
    private readonly accept: (row: FilterRow) => boolean,
    private readonly rows: readonly FilterRow[],
    private readonly size: number,
  ) {}

  /** At most this many slots pass (exactly this many when `exact`), known without reading a row. */
  get bound(): number {
    return this.plan?.bound ?? this.size;
  }

  get exact(): boolean {
    return this.plan?.exact ?? false;
  }

  /** Whether one slot passes, by the filter's predicate. */
  passes(slot: number): boolean {
    return this.accept(this.rows[slot] as FilterRow);
  }

  /** How many slots pass: exact when the index knows, else from a test of a sample spread over the slab. */
  estimate(): number {
    if (this.exact || this.found !== undefined || this.size <= SAMPLE) return this.count();
    if (this.estimated === undefined) {
      let passed = 0;
      for (let i = 0; i < SAMPLE; i++) if (this.passes(Math.floor(((i + 0.5) * this.size) / SAMPLE))) passed += 1;
      this.estimated = Math.min(this.bound, Math.round((passed * this.size) / SAMPLE));
    }
    return this.estimated;
  }

  /**
   * The passing slots, ascending (the order a pass over every slot gives, so ties between equal
   * scores fall the same way); null when every slot passes.
   */
  slots(): Int32Array | null {
    if (this.found === undefined) {
      if (this.exact && this.bound === this.size) this.found = null;
      else {
        const slots = this.plan ? this.plan.slots() : test(null, this.size, this.rows, this.accept);
        this.found = slots.length === this.size ? null : slots;
      }
    }
    return this.found;
  }

  count(): number {
    return this.exact ? this.bound : (this.slots()?.length ?? this.size);
  }
}

const RANGES: Record<'gt' | 'gte' | 'lt' | 'lte', (actual: number, value: number) => boolean> = {
  gt: (a, v) => a > v,
  gte: (a, v) => a >= v,
  lt: (a, v) => a < v,
  lte: (a, v) => a <= v,
};

/** The plan of slots read off disjoint postings (one field's different values). */
function lookup(found: Array<Posting | undefined>, size: number): Plan {
  const postings = found.filter((p): p is Posting => p !== undefined);
  return { bound: postings.reduce<number>((sum, p) => sum + postingSize(p), 0), exact: true, slots: () => ascending(postings, size) };
}

/**
 * A column's value as filters read it (epoch ms for a date, also from an ISO string); null when
 * no comparison can match it.
 */
function columnValue(type: ColumnType, value: Scalar | null | undefined): Scalar | null {
  if (value === null || value === undefined) return null;
  const read = type === 'date' && typeof value === 'string' ? Date.parse(value) : value;
  const wanted = type === 'date' ? 'number' : type;
  return typeof read === wanted && (typeof read !== 'number' || Number.isFinite(read)) ? read : null;
}

/** The slots among `slots` (or among `0 .. count)` when null) whose row `accept`s, in their order. */
function test(slots: Int32Array | null, count: number, rows: readonly FilterRow[], accept: (row: FilterRow) => boolean): Int32Array {
  const kept = new Int32Array(count);
  let n = 0;
  for (let i = 0; i < count; i++) {
    const slot = slots ? (slots[i] as number) : i;
    if (accept(rows[slot] as FilterRow)) kept[n++] = slot;
  }
  return kept.subarray(0, n);
}

/** The slots of disjoint postings, ascending: sorted when few, read off a mark per slot when many. */
function ascending(postings: Posting[], size: number): Int32Array {
  const count = postings.reduce<number>((sum, p) => sum + postingSize(p), 0);
  if (count * 16 >= size) {
    const marked = new Uint8Array(size);
    for (const posting of postings) {
      if (typeof posting === 'number') marked[posting] = 1;
      else for (const slot of posting) marked[slot] = 1;
    }
    return marks(marked, count);
  }
  const slots = new Int32Array(count);
  let n = 0;
  for (const posting of postings) {
    if (typeof posting === 'number') slots[n++] = posting;
    else for (const slot of posting) slots[n++] = slot;
  }
  return slots.sort();
}

/** The union of ascending slot lists, ascending and without repeats. */
function union(lists: Int32Array[], size: number): Int32Array {
  const count = lists.reduce<number>((sum, l) => sum + l.length, 0);
  if (count * 16 >= size) {
    const marked = new Uint8Array(size);
    let distinct = 0;
    for (const list of lists) {
      for (const slot of list) {
        distinct += 1 - (marked[slot] as number);
        marked[slot] = 1;
      }
    }
    return marks(marked, distinct);
  }
  const all = new Int32Array(count);
  let n = 0;
  for (const list of lists) {
    all.set(list, n);
    n += list.length;
  }
  all.sort();
  let kept = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[kept++] = all[i] as number;
  return all.subarray(0, kept);
}

/** The marked slots, ascending; `count` of them are marked. */
function marks(marked: Uint8Array, count: number): Int32Array {
  const slots = new Int32Array(count);
  let n = 0;
  for (let slot = 0; slot < marked.length; slot++) if (marked[slot] === 1) slots[n++] = slot;
  return slots;
}
