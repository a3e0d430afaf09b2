import fc from 'fast-check';
import type { FilterRow, FilterScope, Scalar } from '../contracts/filter/filter.js';

// Random filters (raw JSON, as a client sends them) and rows for the filter property tests, plus
// a reference evaluation of the raw filter written independently of the parser and predicate.

export const COLUMNS = { user_id: 'string', score: 'number', active: 'boolean', created_at: 'date' } as const;
export const SCOPE: FilterScope = { columns: { ...COLUMNS }, metadata: 'field' };
export const META_KEYS = ['a', 'b', 'c', 'tags'] as const;

/** Strings that break naive quoting or LIKE: quotes, backslashes, line breaks, wildcards, unicode. */
export const NASTY_STRINGS = [
  'x',
  'y',
  'X',
  '',
  ' ',
  '1',
  '5',
  'true',
  'a"b',
  "it's",
  'back\\slash',
  '\\"',
  '\\',
  'line\nbreak',
  'cr\r\nlf',
  'tab\there',
  'ctl\u0001\u001f',
  '100%',
  '%',
  'a_b',
  '_',
  'ünïcödé 😀',
  '\u2028',
  'x\\n',
  '") || true || ("',
];
export const NUMBERS = [0, 1, -1, 2.5, -3.25, 5, 1e-7, 1e20, 2 ** 53 + 2, 42];
export const DATES_MS = [0, 86_400_000, 1_700_000_000_000, 1_700_000_000_001, -86_400_000];
export const ARRAYS: string[][] = [[], ['x'], ['x', 'y'], ['a"b', '100%', 'a_b'], ['5'], ['true']];

const str = fc.constantFrom(...NASTY_STRINGS);
const num = fc.constantFrom(...NUMBERS);
const bool = fc.boolean();
const dateMs = fc.constantFrom(...DATES_MS);
/** A date as a filter may give it: epoch ms, full ISO with Z, or a bare date at UTC midnight. */
const dateValue = dateMs.chain((ms) =>
  fc.constantFrom<string | number>(ms, new Date(ms).toISOString(), ...(ms % 86_400_000 === 0 ? [new Date(ms).toISOString().slice(0, 10)] : [])),
);

/** A row as a store holds it (null, never undefined, for a column without a value). */
export type TestRow = FilterRow & { columns: Record<string, Scalar | null> };

/** A row: columns sometimes null, metadata keys sometimes missing or null, of mixed types. */
export const rowArb: fc.Arbitrary<TestRow> = fc.record({
  columns: fc.record({
    user_id: fc.option(str, { nil: null }),
    score: fc.option(num, { nil: null }),
    active: fc.option(bool, { nil: null }),
    created_at: fc.option(dateMs, { nil: null }),
  }),
  metadata: fc
    .tuple(
      ...META_KEYS.map(() =>
        fc.option(fc.oneof({ arbitrary: fc.oneof(str, num, bool, fc.constantFrom(...ARRAYS)), weight: 12 }, { arbitrary: fc.constant(null), weight: 1 }), {
          nil: undefined,
        }),
      ),
    )
    .map((values) => {
      const metadata: Record<string, unknown> = {};
      values.forEach((v, i) => {
        if (v !== undefined) metadata[META_KEYS[i] as string] = v;
      });
      return metadata;
    }),
});

type Kind = 'string' | 'number' | 'boolean' | 'date' | 'metadata';

const opName = (op: string): fc.Arbitrary<string> => fc.constantFrom(op, `$${op}`);

function valueArb(kind: Kind): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'string':
      return str;
    case 'number':
      return num;
    case 'boolean':
      return bool;
    case 'date':
      return dateValue;
    case 'metadata':
      return fc.oneof(str, num, bool);
  }
}

/** One `{op: value}` entry valid for the kind. */
function opEntry(kind: Kind): fc.Arbitrary<[string, unknown]> {
  const entries: Array<fc.Arbitrary<[string, unknown]>> = [
    fc.tuple(opName('eq'), valueArb(kind)),
    fc.tuple(opName('ne'), valueArb(kind)),
    fc.tuple(opName('in'), sameTypeList(kind)),
    fc.tuple(fc.constant('$nin'), sameTypeList(kind)),
  ];
  if (kind === 'number' || kind === 'date' || kind === 'metadata') {
    const rangeValue = kind === 'date' ? dateValue : num;
    for (const op of ['gt', 'gte', 'lt', 'lte']) entries.push(fc.tuple(opName(op), rangeValue));
  }
  if (kind === 'metadata') entries.push(fc.tuple(fc.constant('contains'), str));
  return fc.oneof(...entries);
}

function sameTypeList(kind: Kind): fc.Arbitrary<unknown[]> {
  if (kind === 'metadata') return fc.oneof(fc.array(str, { minLength: 1, maxLength: 4 }), fc.array(num, { minLength: 1, maxLength: 4 }), fc.array(bool, { minLength: 1, maxLength: 2 }));
  return fc.array(valueArb(kind), { minLength: 1, maxLength: 4 });
}

function conditionArb(kind: Kind): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: valueArb(kind), weight: 1 },
    { arbitrary: opEntry(kind).map(([op, v]) => ({ [op]: v })), weight: 3 },
    {
      arbitrary: fc.tuple(opEntry(kind), opEntry(kind)).map(([[op1, v1], [op2, v2]]) => ({ [op1]: v1, [op2]: v2 })),
      weight: 1,
    },
  );
}

const leafArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc
    .constantFrom(...(Object.keys(COLUMNS) as Array<keyof typeof COLUMNS>))
    .chain((column) => conditionArb(COLUMNS[column]).map((cond) => ({ [column]: cond }))),
  fc
    .tuple(fc.constantFrom(...META_KEYS), conditionArb('metadata'), fc.boolean())
    .map(([key, cond, nested]) => (nested ? { metadata: { [key]: cond } } : { [`metadata.${key}`]: cond })),
);

/** A random valid filter in the mem0/Pinecone language, nested up to `depth` levels. */
export function filterArb(depth = 3): fc.Arbitrary<Record<string, unknown>> {
  if (depth <= 0) return leafArb;
  const sub = filterArb(depth - 1);
  const list = fc.array(sub, { minLength: 1, maxLength: 3 });
  return fc.oneof(
    { arbitrary: leafArb, weight: 3 },
    { arbitrary: fc.tuple(fc.constantFrom('AND', '$and'), list).map(([k, l]) => ({ [k]: l })), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('OR', '$or'), list).map(([k, l]) => ({ [k]: l })), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('NOT', '$not'), sub).map(([k, f]) => ({ [k]: f })), weight: 2 },
    { arbitrary: list.map((l) => ({ NOT: l })), weight: 1 },
    // Several keys in one object: an implicit AND (a repeated key keeps its last condition).
    { arbitrary: fc.tuple(leafArb, leafArb).map(([a, b]) => ({ ...a, ...b })), weight: 1 },
  );
}

/**
 * The reference semantics, straight from the raw filter: absent (missing/null) targets fail
 * every comparison; values must have the same JS type (arrays only for contains); `NOT` and
 * `nin` negate.
 */
export function referenceEval(filter: Record<string, unknown>, row: FilterRow): boolean {
  return Object.entries(filter).every(([key, value]) => {
    switch (key) {
      case 'AND':
      case '$and':
        return (value as Array<Record<string, unknown>>).every((f) => referenceEval(f, row));
      case 'OR':
      case '$or':
        return (value as Array<Record<string, unknown>>).some((f) => referenceEval(f, row));
      case 'NOT':
      case '$not':
        return Array.isArray(value)
          ? !(value as Array<Record<string, unknown>>).every((f) => referenceEval(f, row))
          : !referenceEval(value as Record<string, unknown>, row);
      case 'metadata':
        return Object.entries(value as Record<string, unknown>).every(([k, cond]) => holds(row.metadata[k], cond, false));
      default:
        if (key.startsWith('metadata.')) return holds(row.metadata[key.slice('metadata.'.length)], value, false);
        return holds(row.columns[key], value, COLUMNS[key as keyof typeof COLUMNS] === 'date');
    }
  });
}

function holds(actual: unknown, cond: unknown, isDate: boolean): boolean {
  if (typeof cond !== 'object' || cond === null) return op('eq', actual, cond, isDate);
  return Object.entries(cond).every(([name, v]) => op(name.replace(/^\$/, ''), actual, v, isDate));
}

function op(name: string, actual: unknown, raw: unknown, isDate: boolean): boolean {
  const v = isDate && typeof raw === 'string' ? Date.parse(raw) : raw;
  const present = actual !== null && actual !== undefined;
  const eq = (x: unknown): boolean => present && !Array.isArray(actual) && typeof actual === typeof x && actual === x;
  switch (name) {
    case 'eq':
      return eq(v);
    case 'ne':
      return present && !Array.isArray(actual) && typeof actual === typeof v && actual !== v;
    case 'in':
      return (raw as unknown[]).some((x) => eq(isDate && typeof x === 'string' ? Date.parse(x) : x));
    case 'nin':
      return !(raw as unknown[]).some((x) => eq(isDate && typeof x === 'string' ? Date.parse(x) : x));
    case 'gt':
      return typeof actual === 'number' && actual > (v as number);
    case 'gte':
      return typeof actual === 'number' && actual >= (v as number);
    case 'lt':
      return typeof actual === 'number' && actual < (v as number);
    case 'lte':
      return typeof actual === 'number' && actual <= (v as number);
    case 'contains':
      return Array.isArray(actual) && actual.includes(v);
    default:
      throw new Error(`reference: unknown operator ${name}`);
  }
}
