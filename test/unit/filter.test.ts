import { expect } from 'chai';
import fc from 'fast-check';
import { parseFilter, toMilvusExpr, toPredicate, type FilterNode, type FilterOp, type FilterScope, type Scalar } from '../../contracts/filter/filter.js';
import { metadataTypeTags, milvusNumber, milvusString } from '../../contracts/filter/milvus-expr.js';
import { AppError } from '../../lib/errors.js';
import { filterArb, NASTY_STRINGS, referenceEval, rowArb, SCOPE } from '../filter-arbitraries.js';

const memories: FilterScope = {
  columns: { user_id: 'string', schema: 'string', created_at: 'date', age: 'number', active: 'boolean' },
  metadata: 'field',
};
const index: FilterScope = { columns: {}, metadata: 'root' };
const closed: FilterScope = { columns: { user_id: 'string' }, metadata: 'none' };

/** The error `parseFilter` throws for `input`, asserting it is a 400 `invalid_filter`. */
function rejection(input: unknown, scope: FilterScope = memories, at?: string): AppError {
  try {
    parseFilter(input, scope, at);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    const appError = err as AppError;
    expect(appError.status).to.equal(400);
    expect(appError.code).to.equal('invalid_filter');
    return appError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

const user = (value: string): FilterNode => ({ kind: 'cmp', target: { kind: 'column', name: 'user_id', type: 'string' }, op: 'eq', value });
const meta = (key: string, op: FilterOp, value: Scalar | Scalar[]): FilterNode => ({
  kind: 'cmp',
  target: { kind: 'metadata', key },
  op,
  value,
});

describe('filter: parsing', () => {
  it('treats null, undefined and {} as no filter', () => {
    expect(parseFilter(null, memories)).to.equal(null);
    expect(parseFilter(undefined, memories)).to.equal(null);
    expect(parseFilter({}, memories)).to.equal(null);
  });

  it('parses mem0 AND/OR/NOT, implicit AND over keys and over operators, an AND inside an AND as one', () => {
    const node = parseFilter(
      { AND: [{ user_id: 'u1' }, { OR: [{ schema: 'contact' }, { NOT: { age: { gte: 18, lt: 65 } } }] }], active: true },
      memories,
    );
    expect(node).to.deep.equal({
      kind: 'and',
      nodes: [
        user('u1'),
        {
          kind: 'or',
          nodes: [
            { kind: 'cmp', target: { kind: 'column', name: 'schema', type: 'string' }, op: 'eq', value: 'contact' },
            {
              kind: 'not',
              node: {
                kind: 'and',
                nodes: [
                  { kind: 'cmp', target: { kind: 'column', name: 'age', type: 'number' }, op: 'gte', value: 18 },
                  { kind: 'cmp', target: { kind: 'column', name: 'age', type: 'number' }, op: 'lt', value: 65 },
                ],
              },
            },
          ],
        },
        { kind: 'cmp', target: { kind: 'column', name: 'active', type: 'boolean' }, op: 'eq', value: true },
      ],
    });
  });

  it('reads a set field (categories) as membership of its reserved metadata key', () => {
    const scope = { ...memories, sets: { categories: '$categories' } };
    const holds = (name: string): FilterNode => meta('$categories', 'contains', name);
    expect(parseFilter({ categories: 'food' }, scope)).to.deep.equal(holds('food'));
    expect(parseFilter({ categories: { contains: 'food' } }, scope)).to.deep.equal(holds('food'));
    expect(parseFilter({ categories: { in: ['food', 'travel'] } }, scope)).to.deep.equal({ kind: 'or', nodes: [holds('food'), holds('travel')] });
    expect(parseFilter({ categories: { ne: 'food' } }, scope)).to.deep.equal({ kind: 'not', node: holds('food') });
    expect(parseFilter({ categories: { nin: ['food'] } }, scope)).to.deep.equal({ kind: 'not', node: holds('food') });
    for (const bad of [{ categories: 3 }, { categories: { gt: 'a' } }, { categories: { in: [] } }, { categories: { in: ['a', 2] } }, { categories: '' }]) {
      expect(() => parseFilter(bad, scope), JSON.stringify(bad)).to.throw(/categories/);
    }
    // the reserved key is out of reach as metadata
    expect(() => parseFilter({ metadata: { $categories: 'food' } }, scope)).to.throw(/Invalid metadata key/);
  });

  it('reads NOT over a list as not(and), and $nin as not(in)', () => {
    expect(parseFilter({ NOT: [{ user_id: 'a' }, { user_id: 'b' }] }, memories)).to.deep.equal({
      kind: 'not',
      node: { kind: 'and', nodes: [user('a'), user('b')] },
    });
    expect(parseFilter({ tag: { $nin: ['x', 'y'] } }, index)).to.deep.equal({ kind: 'not', node: meta('tag', 'in', ['x', 'y']) });
  });

  it('accepts Pinecone spellings with the same meaning', () => {
    const pinecone = parseFilter({ $and: [{ genre: { $eq: 'drama' } }, { year: { $gte: 2020 } }, { $or: [{ a: { $ne: 1 } }, { $not: { b: { $in: [1, 2] } } }] }] }, index);
    const mem0 = parseFilter({ AND: [{ genre: { eq: 'drama' } }, { year: { gte: 2020 } }, { OR: [{ a: { ne: 1 } }, { NOT: { b: { in: [1, 2] } } }] }] }, index);
    expect(pinecone).to.deep.equal(mem0);
  });

  it('reaches metadata as metadata: {key: cond} or "metadata.key" in field scope, at the top level in root scope', () => {
    const nested = parseFilter({ metadata: { topic: 'food', stars: { gt: 3 } } }, memories);
    const dotted = parseFilter({ 'metadata.topic': 'food', 'metadata.stars': { gt: 3 } }, memories);
    const root = parseFilter({ topic: 'food', stars: { gt: 3 } }, index);
    const expected = { kind: 'and', nodes: [meta('topic', 'eq', 'food'), meta('stars', 'gt', 3)] };
    expect(nested).to.deep.equal(expected);
    expect(dotted).to.deep.equal(expected);
    expect(root).to.deep.equal(expected);
  });

  it('reads keys named like Object.prototype members as plain keys', () => {
    expect(parseFilter({ constructor: 1 }, index)).to.deep.equal(meta('constructor', 'eq', 1));
    expect(parseFilter(JSON.parse('{"__proto__": {"in": ["x"]}}'), index)).to.deep.equal(meta('__proto__', 'in', ['x']));
    expect(rejection({ toString: { valueOf: 1 } }, index).detail).to.include('Unknown filter operator "valueOf" at /filter/toString');
    expect(toPredicate(parseFilter(JSON.parse('{"__proto__": "x"}'), index))({ columns: {}, metadata: JSON.parse('{"__proto__": "x"}') })).to.equal(true);
    expect(toPredicate(parseFilter({ constructor: { ne: 'x' } }, index))({ columns: {}, metadata: {} })).to.equal(false);
  });

  it('turns dates into epoch milliseconds: ISO with a zone, a bare date, or integer ms', () => {
    const at = (value: unknown): unknown => (parseFilter({ created_at: { gte: value } }, memories) as { value: unknown }).value;
    expect(at('2024-05-01T12:00:00Z')).to.equal(Date.UTC(2024, 4, 1, 12));
    expect(at('2024-05-01T14:00:00.5+02:00')).to.equal(Date.UTC(2024, 4, 1, 12, 0, 0, 500));
    expect(at('2024-05-01')).to.equal(Date.UTC(2024, 4, 1));
    expect(at(1_714_564_800_000)).to.equal(1_714_564_800_000);
    expect((parseFilter({ created_at: { in: ['2024-05-01', 0] } }, memories) as { value: unknown }).value).to.deep.equal([Date.UTC(2024, 4, 1), 0]);
  });

  describe('rejects, naming the offender and its JSON pointer', () => {
    const cases: Array<[string, unknown, FilterScope, string[]]> = [
      ['an unknown operator', { AND: [{ age: { like: 'x' } }] }, memories, ['Unknown filter operator "like" at /filter/AND/0/age']],
      ['an unknown $ operator at the top', { $nor: [{ a: 1 }] }, index, ['"$nor"', '/filter/$nor']],
      ['an unknown field', { nickname: 'x' }, memories, ['Unknown filter field "nickname" at /filter/nickname', '"user_id"']],
      ['any metadata key when the scope has none', { 'metadata.k': 1 }, closed, ['"metadata.k"', '/filter/metadata.k']],
      ['an invalid metadata key (root)', { 'bad key': 1 }, index, ['Invalid metadata key "bad key" at /filter/bad key']],
      ['an invalid metadata key (field)', { metadata: { '9lives': 1 } }, memories, ['"9lives"', '/filter/metadata/9lives']],
      ['a key with / escaped in the pointer', { 'a/b': 1 }, index, ['"a/b"', '/filter/a~1b']],
      ['a string for a range operator', { age: { gt: 'x' } }, memories, ['"gt"', '"age"', '/filter/age/gt', 'a number']],
      ['a range operator on a string column', { user_id: { lt: 5 } }, memories, ['"lt"', '"user_id"', 'string field']],
      ['a number for a string column', { user_id: 5 }, memories, ['"user_id"', '/filter/user_id', 'a string']],
      ['a string for a boolean column', { active: 'yes' }, memories, ['"active"', 'a boolean']],
      ['an object as a metadata value', { 'metadata.k': { eq: { a: 1 } } }, memories, ['metadata key "k"', '/filter/metadata.k/eq']],
      ['null as a value', { user_id: null }, memories, ['"user_id"', 'null']],
      ['an array as a value', { user_id: ['a', 'b'] }, memories, ['"user_id"', 'use {"in": [...]}']],
      ['an empty in', { user_id: { in: [] } }, memories, ['"in"', '/filter/user_id/in', 'non-empty array']],
      ['in that is not an array', { user_id: { in: 'a' } }, memories, ['"in"', 'non-empty array']],
      ['in over 1000 values', { user_id: { in: Array.from({ length: 1001 }, (_, i) => `u${i}`) } }, memories, ['"in"', 'at most 1000']],
      ['in with mixed types', { tag: { in: ['a', 1] } }, index, ['"in"', '/filter/tag/in/1', 'one type']],
      ['contains with a number', { tags: { contains: 1 } }, index, ['"contains"', '/filter/tags/contains', 'a string']],
      ['contains on a column', { user_id: { contains: 'a' } }, memories, ['"contains"', '"user_id"', 'metadata']],
      ['an empty AND', { AND: [] }, memories, ['"AND"', '/filter/AND', 'non-empty array']],
      ['an OR that is not a list', { OR: { user_id: 'a' } }, memories, ['"OR"', '/filter/OR']],
      ['an empty nested filter', { AND: [{}] }, memories, ['Empty filter object at /filter/AND/0']],
      ['a filter that is not an object', 'user_id = 1', memories, ['/filter must be an object']],
      ['an empty operator object', { user_id: {} }, memories, ['No operator given for "user_id" at /filter/user_id']],
      ['Infinity', { age: { gt: Infinity } }, memories, ['"gt"', 'finite number']],
      ['NaN', { 'metadata.k': NaN }, memories, ['/filter/metadata.k', 'finite number']],
      ['a date without a time zone', { created_at: { gt: '2024-05-01T12:00:00' } }, memories, ['"gt"', '"created_at"', 'ISO-8601']],
      ['an impossible date', { created_at: '2024-02-30' }, memories, ['"created_at"', 'ISO-8601']],
      ['fractional epoch ms', { created_at: { lt: 1.5 } }, memories, ['"lt"', 'integer epoch milliseconds']],
      ['an unpaired surrogate', { user_id: 'a\uD800' }, memories, ['"user_id"', 'unpaired']],
    ];
    for (const [name, input, scope, fragments] of cases) {
      it(name, () => {
        const err = rejection(input, scope);
        for (const fragment of fragments) expect(err.detail).to.include(fragment);
        expect(err.errors?.[0]?.path).to.match(/^\/filter/);
      });
    }

    it('nesting deeper than 8 levels', () => {
      let filter: Record<string, unknown> = { user_id: 'u' };
      for (let i = 0; i < 8; i++) filter = { NOT: filter };
      expect(parseFilter(filter, memories)).to.not.equal(null);
      const err = rejection({ AND: [filter] });
      expect(err.detail).to.include('deeper than 8 levels');
      expect(err.detail).to.include('/filter/AND/0/NOT/NOT/NOT/NOT/NOT/NOT/NOT');
    });

    it('more than 200 comparisons', () => {
      const ok = { OR: Array.from({ length: 200 }, (_, i) => ({ user_id: `u${i}` })) };
      expect(parseFilter(ok, memories)).to.not.equal(null);
      const err = rejection({ OR: Array.from({ length: 201 }, (_, i) => ({ user_id: `u${i}` })) });
      expect(err.detail).to.include('more than 200 comparisons');
      expect(err.detail).to.include('/filter/OR/200');
    });

    it('under the pointer the caller names', () => {
      const err = rejection({ metadata: { k: { near: 1 } } }, memories, '/filters');
      expect(err.detail).to.equal('Unknown filter operator "near" at /filters/metadata/k; use one of eq, ne, in, nin, gt, gte, lt, lte, contains (or $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte)');
      expect(err.errors).to.deep.equal([{ path: '/filters/metadata/k/near', message: err.detail }]);
    });
  });

  it('throws only invalid_filter errors, whatever JSON it is given', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom(memories, index, closed), (input, scope) => {
        try {
          parseFilter(input, scope);
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'invalid_filter' || err.status !== 400) throw err;
        }
      }),
      { seed: 4242, numRuns: 2000 },
    );
  });
});

describe('filter: predicate', () => {
  const row = (columns: Record<string, string | number | boolean | null>, metadata: Record<string, unknown>) => ({ columns, metadata });
  const test = (filter: unknown, r: ReturnType<typeof row>, scope = index): boolean => toPredicate(parseFilter(filter, scope))(r);

  it('accepts every row without a filter', () => {
    expect(toPredicate(null)(row({}, {}))).to.equal(true);
  });

  it('never matches a missing key or a value of another type, and ne needs the same type', () => {
    expect(test({ k: { ne: 'v' } }, row({}, {}))).to.equal(false);
    expect(test({ k: { ne: 'v' } }, row({}, { k: 5 }))).to.equal(false);
    expect(test({ k: { ne: 'v' } }, row({}, { k: 'w' }))).to.equal(true);
    expect(test({ k: 1 }, row({}, { k: true }))).to.equal(false);
    expect(test({ k: true }, row({}, { k: 1 }))).to.equal(false);
    expect(test({ k: { gt: 0 } }, row({}, { k: true }))).to.equal(false);
    expect(test({ k: '5' }, row({}, { k: 5 }))).to.equal(false);
    expect(test({ k: 'x' }, row({}, { k: ['x'] }))).to.equal(false);
    expect(test({ k: 'x' }, row({}, { k: null }))).to.equal(false);
  });

  it('negates plainly: NOT and nin match rows without the key', () => {
    expect(test({ NOT: { k: 'v' } }, row({}, {}))).to.equal(true);
    expect(test({ k: { $nin: ['v'] } }, row({}, {}))).to.equal(true);
    expect(test({ NOT: { k: 'v' } }, row({}, { k: 'v' }))).to.equal(false);
  });

  it('contains is array membership only', () => {
    expect(test({ tags: { contains: 'x' } }, row({}, { tags: ['x', 'y'] }))).to.equal(true);
    expect(test({ tags: { contains: 'x' } }, row({}, { tags: 'xyz' }))).to.equal(false);
    expect(test({ tags: { contains: 'x' } }, row({}, { tags: 'x' }))).to.equal(false);
  });

  it('reads null columns as absent and date columns as epoch ms (or ISO strings)', () => {
    expect(test({ user_id: { ne: 'a' } }, row({ user_id: null }, {}), memories)).to.equal(false);
    expect(test({ NOT: { user_id: 'a' } }, row({ user_id: null }, {}), memories)).to.equal(true);
    expect(test({ created_at: { gte: '2024-05-01' } }, row({ created_at: Date.UTC(2024, 4, 1) }, {}), memories)).to.equal(true);
    expect(test({ created_at: { gte: '2024-05-01' } }, row({ created_at: '2024-04-30T23:59:59Z' }, {}), memories)).to.equal(false);
  });

  it('agrees with a reference evaluation of the raw filter on random filters and rows', () => {
    fc.assert(
      fc.property(filterArb(3), fc.array(rowArb, { minLength: 1, maxLength: 20 }), (filter, rows) => {
        const predicate = toPredicate(parseFilter(filter, SCOPE));
        for (const r of rows) {
          if (predicate(r) !== referenceEval(filter, r)) {
            throw new Error(`disagree on ${JSON.stringify(r)}: predicate ${predicate(r)}, reference ${referenceEval(filter, r)}`);
          }
        }
      }),
      { seed: 20_240_501, numRuns: 3000 },
    );
  });
});

describe('filter: Milvus expressions', () => {
  /** The unescaping Milvus Lite's tokenizer does (`\" \' \\ \n \r \t` only; raw newlines are errors). */
  function liteUnquote(literal: string): string {
    expect(literal.startsWith('"') && literal.endsWith('"')).to.equal(true);
    const body = literal.slice(1, -1);
    let out = '';
    for (let i = 0; i < body.length; i++) {
      const ch = body[i] as string;
      if (ch === '\r' || ch === '\n' || ch === '"') throw new Error(`raw ${JSON.stringify(ch)} inside a literal`);
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const next = body[++i];
      const mapped = next === undefined ? undefined : { '"': '"', "'": "'", '\\': '\\', n: '\n', r: '\r', t: '\t' }[next];
      if (mapped === undefined) throw new Error(`unknown escape \\${next}`);
      out += mapped;
    }
    return out;
  }

  it('is empty without a filter', () => {
    expect(toMilvusExpr(null)).to.equal('');
  });

  it('guards columns against null and metadata with its type tag', () => {
    expect(toMilvusExpr(parseFilter({ user_id: 'u1', age: { in: [1, -2.5] } }, memories))).to.equal(
      '((user_id is not null && user_id == "u1") && (age is not null && age in [1, -2.5]))',
    );
    expect(toMilvusExpr(parseFilter({ NOT: { k: { ne: true } } }, index))).to.equal('(not (json_contains(metadata_types, "k:b") && metadata["k"] != true))');
    expect(toMilvusExpr(parseFilter({ k: { in: ['a', 'b'] }, tags: { contains: 'x' } }, index), { metadataField: 'meta' })).to.equal(
      '((json_contains(meta_types, "k:s") && (meta["k"] == "a" || meta["k"] == "b")) && (json_contains(meta_types, "tags:a") && json_contains(meta["tags"], "x")))',
    );
  });

  it('tags metadata by type, leaving absent and other values untagged', () => {
    expect(metadataTypeTags({ s: 'x', n: 1, b: false, a: ['x'], z: null, o: { a: 1 } })).to.deep.equal(['s:s', 'n:n', 'b:b', 'a:a']);
  });

  it('quotes nasty strings so that Milvus reads back exactly the same string', () => {
    for (const s of NASTY_STRINGS) expect(liteUnquote(milvusString(s))).to.equal(s);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => liteUnquote(milvusString(s)) === s),
      { seed: 7, numRuns: 2000 },
    );
    const expr = toMilvusExpr(parseFilter({ user_id: '") || true || ("' }, memories));
    expect(expr).to.equal('(user_id is not null && user_id == "\\") || true || (\\"")');
  });

  it('refuses strings with unpaired surrogates and field names that are not identifiers', () => {
    expect(() => milvusString('a\uDC00')).to.throw(/unpaired surrogate/);
    const node: FilterNode = { kind: 'cmp', target: { kind: 'column', name: 'a) || (b', type: 'string' }, op: 'eq', value: 'x' };
    expect(() => toMilvusExpr(node)).to.throw(/not a Milvus field name/);
  });

  it('writes numbers in a form Milvus parses back to the same double', () => {
    expect(milvusNumber(1e21)).to.equal('1e+21');
    expect(milvusNumber(2 ** 53 - 1)).to.equal('9007199254740991');
    expect(milvusNumber(2 ** 53 + 2)).to.equal('9.007199254740994e+15');
    expect(milvusNumber(2 ** 63)).to.equal('9.223372036854776e+18');
    expect(milvusNumber(1e-7)).to.equal('1e-7');
    expect(milvusNumber(-0)).to.equal('0');
    const grammar = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = milvusNumber(x);
        // Digits only within int64; the value reads back exactly.
        return grammar.test(text) && Number(text) === x && (/[.eE]/.test(text) || Number.isSafeInteger(Number(text)));
      }),
      { seed: 11, numRuns: 5000 },
    );
    expect(() => milvusNumber(Infinity)).to.throw();
  });
});
