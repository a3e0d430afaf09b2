import { expect } from 'chai';
import fc from 'fast-check';
import { parseFilter, toPredicate, type ColumnType, type FilterNode, type FilterRow } from '../../contracts/filter/filter.js';
import { FilterIndex } from '../../db/vectors/embedded-filter-index.js';
import { COLUMNS, filterArb, rowArb, SCOPE } from '../filter-arbitraries.js';

// The embedded store's filter index must select exactly the slots the filter's predicate accepts,
// whatever the rows, the filter and the history of writes, removals and moves that led there.

/** Rows as arbitraries make them, sometimes with what a client may also store: ISO dates, objects, mixed arrays. */
const storedRowArb: fc.Arbitrary<FilterRow> = fc
  .tuple(rowArb, fc.constantFrom('as is', 'iso date', 'object', 'mixed array', 'odd numbers'))
  .map(([row, twist]) => {
    const columns: FilterRow['columns'] = { ...row.columns };
    const metadata = { ...row.metadata };
    if (twist === 'iso date' && typeof columns.created_at === 'number') columns.created_at = new Date(columns.created_at).toISOString();
    if (twist === 'object') metadata.a = { x: 'x' };
    if (twist === 'mixed array') metadata.tags = ['x', 5, 'x', true, null, ['y']];
    if (twist === 'odd numbers') [metadata.b, columns.score] = [Number.NaN, Number.POSITIVE_INFINITY];
    return { columns, metadata };
  });

type Op = { kind: 'put'; at: number; row: FilterRow } | { kind: 'remove'; at: number } | { kind: 'clear' };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('put' as const), at: fc.nat(), row: storedRowArb }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'clear' as const }), weight: 1 },
);

/** Rows in slots as the store's slab keeps them: a write past the end appends, a removal moves the last row into the hole. */
class Slots {
  rows: FilterRow[] = [];
  constructor(readonly index: FilterIndex) {}

  /** Replaces a row or appends one (`at` null always appends). */
  put(at: number | null, row: FilterRow): void {
    // of random writes, half replace a row, half append
    const slot = at === null ? this.rows.length : at % (2 * this.rows.length + 1);
    if (slot < this.rows.length) {
      this.index.remove(slot, this.rows[slot] as FilterRow);
      this.rows[slot] = row;
      this.index.add(slot, row);
    } else {
      this.rows.push(row);
      this.index.add(this.rows.length - 1, row);
    }
  }

  remove(at: number): void {
    if (this.rows.length === 0) return;
    const slot = at % this.rows.length;
    const last = this.rows.length - 1;
    this.index.remove(slot, this.rows[slot] as FilterRow);
    if (slot !== last) {
      this.index.remove(last, this.rows[last] as FilterRow);
      this.rows[slot] = this.rows[last] as FilterRow;
      this.index.add(slot, this.rows[slot]);
    }
    this.rows.pop();
  }

  apply(op: Op): void {
    if (op.kind === 'put') this.put(op.at, op.row);
    else if (op.kind === 'remove') this.remove(op.at);
    else {
      this.rows = [];
      this.index.clear();
    }
  }
}

/** What every slot tested with the predicate gives, as `passing` says it: null when every slot passes. */
function truth(filter: FilterNode, rows: FilterRow[]): number[] | null {
  const accept = toPredicate(filter);
  const slots = rows.flatMap((row, slot) => (accept(row) ? [slot] : []));
  return slots.length === rows.length ? null : slots;
}

function expectAgreement(slots: Slots, filters: FilterNode[]): void {
  const { rows, index } = slots;
  for (const filter of filters) {
    const expected = truth(filter, rows);
    const selection = index.select(filter, rows, rows.length);
    const count = expected?.length ?? rows.length;
    expect(selection.bound, `bound of ${JSON.stringify(filter)}`).to.be.at.least(count);
    if (selection.exact) expect(selection.bound, `exact bound of ${JSON.stringify(filter)}`).to.equal(count);
    const found = selection.slots();
    expect(found && Array.from(found), JSON.stringify(filter)).to.deep.equal(expected);
    expect(index.select(filter, rows, rows.length).count(), `count of ${JSON.stringify(filter)}`).to.equal(count);
    const passing = new Set(expected ?? rows.keys());
    expect(rows.flatMap((_, slot) => (selection.passes(slot) ? [slot] : [])), `passes of ${JSON.stringify(filter)}`).to.deep.equal([...passing]);
  }
}

const column = (name: string, type: ColumnType) => ({ kind: 'column', name, type }) as const;

/**
 * Comparisons the parser's scope never makes but a caller could: a column typed otherwise than
 * the index holds it, a column the index does not hold, operators on the wrong kind of field.
 */
const ODD_FILTERS: FilterNode[] = [
  { kind: 'cmp', target: column('created_at', 'number'), op: 'gte', value: 0 },
  { kind: 'cmp', target: column('created_at', 'string'), op: 'eq', value: '1970-01-02T00:00:00.000Z' },
  { kind: 'cmp', target: column('nowhere', 'string'), op: 'eq', value: 'x' },
  { kind: 'cmp', target: column('user_id', 'string'), op: 'gt', value: 1 },
  { kind: 'cmp', target: column('created_at', 'date'), op: 'eq', value: '1970-01-02T00:00:00.000Z' },
  { kind: 'cmp', target: { kind: 'metadata', key: 'tags' }, op: 'contains', value: 5 },
  { kind: 'cmp', target: { kind: 'metadata', key: 'a' }, op: 'in', value: 'x' },
  { kind: 'cmp', target: { kind: 'metadata', key: 'b' }, op: 'lt', value: Number.NaN },
  { kind: 'and', nodes: [] },
  { kind: 'or', nodes: [] },
];

describe('embedded store: filter index', () => {
  const filters = fc.array(filterArb(3), { minLength: 10, maxLength: 20 }).map((raw) => [...raw.map((f) => parseFilter(f, SCOPE) as FilterNode), ...ODD_FILTERS]);

  it('selects exactly what the predicate accepts, after any writes, removals, moves and clears', function () {
    this.timeout(60_000);
    fc.assert(
      fc.property(fc.array(storedRowArb, { maxLength: 150 }), fc.array(opArb, { maxLength: 60 }), filters, (initial, ops, nodes) => {
        const slots = new Slots(new FilterIndex({ ...COLUMNS }));
        for (const row of initial) slots.put(null, row);
        expectAgreement(slots, nodes);
        for (const op of ops) slots.apply(op);
        expectAgreement(slots, nodes);
      }),
      { seed: 20_260_514, numRuns: 300 },
    );
  });

  it('tests by the predicate the columns it holds as another type or not at all', () => {
    fc.assert(
      fc.property(fc.array(storedRowArb, { maxLength: 100 }), filters, (rows, nodes) => {
        const slots = new Slots(new FilterIndex({ score: 'string', active: 'boolean', created_at: 'number' }));
        for (const row of rows) slots.put(null, row);
        expectAgreement(slots, nodes);
      }),
      { seed: 20_260_515, numRuns: 100 },
    );
  });

  it('reads a narrow filter off the index, ascending, at any size', () => {
    // 20 000 rows: ten groups, a hundred shards, numbers 0..n, tags on every seventh
    const rows: FilterRow[] = Array.from({ length: 20_000 }, (_, i) => ({
      columns: { user_id: `u${i % 50}`, created_at: i },
      metadata: { group: `g${i % 10}`, shard: i % 100, n: i, ...(i % 7 === 0 ? { tags: ['seventh', `t${i % 3}`] } : {}) },
    }));
    const slots = new Slots(new FilterIndex({ user_id: 'string', created_at: 'date' }));
    for (const row of rows) slots.put(null, row);
    const scope = { columns: { user_id: 'string', created_at: 'date' }, metadata: 'root' } as const;
    const node = (f: unknown) => parseFilter(f, scope) as FilterNode;
    expectAgreement(
      slots,
      [
        { group: 'g3' },
        { shard: 42 },
        { shard: '42' },
        { group: 'g3', n: { lt: 2000 } },
        { user_id: 'u7', created_at: { gte: 1000, lt: 5000 } },
        { tags: { contains: 'seventh' } },
        { OR: [{ shard: { in: [1, 2] } }, { tags: { contains: 't1' } }] },
        { user_id: { in: ['u1', 'u2'] }, NOT: { group: 'g1' } },
        { n: { gte: 19_990 } },
        { group: { ne: 'g3' } },
      ].map(node),
    );
    const g3 = slots.index.select(node({ group: 'g3' }), slots.rows, rows.length);
    expect([g3.exact, g3.count(), g3.estimate()]).to.deep.equal([true, 2000, 2000]);
    // a filter the index cannot count is estimated from a sample: about 90 % here
    expect(slots.index.select(node({ group: { ne: 'g3' } }), slots.rows, rows.length).estimate()).to.be.within(16_000, 20_000);
  });
});
