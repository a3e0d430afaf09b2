import { expect } from 'chai';
import fc from 'fast-check';
import fs from 'node:fs';
import { parseFilter, toPredicate, type FilterNode, type FilterRow } from '../../contracts/filter/filter.js';
import type { CollectionSpec, Metric, VectorPoint } from '../../contracts/vector-store.js';
import { createDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { EmbeddedVectorStore } from '../../db/vectors/embedded.store.js';
import { seededRandom as random } from '../../lib/seeded-random.js';
import { COLUMNS, filterArb, rowArb, SCOPE } from '../filter-arbitraries.js';
import { isProduction, tempDir } from '../helpers.js';

// The embedded store plans a filter on its index and scores only the vectors that pass, or scans
// the whole slab when most pass: whichever it does, search, count and delete must give exactly
// what testing every vector with the filter's predicate and ranking them by brute force gives,
// before and after writes, deletions and a reload from the SQLite file.

const ROWS = 400;
const FILTERS = 150;
const SEED = 20_260_514;

type Point = VectorPoint & { values: number[]; columns: NonNullable<VectorPoint['columns']>; metadata: Record<string, unknown> };

const similarity: Record<Metric, (u: number[], v: number[]) => number> = {
  cosine: (u, v) => similarity.dotproduct(u, v) / Math.sqrt(similarity.dotproduct(u, u) * similarity.dotproduct(v, v)),
  dotproduct: (u, v) => u.reduce((s, x, i) => s + x * (v[i] as number), 0),
  euclidean: (u, v) => u.reduce((s, x, i) => s + (x - (v[i] as number)) ** 2, 0),
};

/** The ids `filter` keeps, best first by brute force, with their scores. */
function truth(metric: Metric, points: Iterable<Point>, query: number[], filter: FilterNode): Array<{ id: string; score: number }> {
  const accept = toPredicate(filter);
  return [...points]
    .filter((p) => accept(p as FilterRow))
    .map((p) => ({ id: p.id, score: similarity[metric](query, p.values) }))
    .sort((a, b) => (metric === 'euclidean' ? a.score - b.score : b.score - a.score));
}

if (!isProduction) {
  describe('embedded store: planned filters agree with the predicate', function () {
    this.timeout(120_000);
    let dir: string;
    let db: Knex;

    before(async () => {
      dir = tempDir();
      db = createDatabase({ databaseUrl: null, dataDir: dir });
      await migrateLatest(db);
    });
    after(async () => {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it(`searches, counts and deletes exactly what ${FILTERS} random filters keep, through writes, deletions and a reload`, async () => {
      const spec: CollectionSpec = { name: 'random_filters', dimension: 8, metric: 'cosine', columns: { ...COLUMNS } };
      const next = random(SEED);
      const vector = () => Array.from({ length: 8 }, () => next() - 0.5);
      const point = (id: string, row: FilterRow): Point => ({ id, values: vector(), columns: row.columns as Point['columns'], metadata: row.metadata });
      const points = new Map(fc.sample(rowArb, { seed: SEED, numRuns: ROWS }).map((row, i) => [`r${i}`, point(`r${i}`, row)]));
      const filters = fc.sample(filterArb(3), { seed: SEED + 1, numRuns: FILTERS }).map((f) => parseFilter(f, SCOPE) as FilterNode);
      let store = new EmbeddedVectorStore(db);
      await store.upsert(spec, 'a', [...points.values()]);
      // another project's rows under the same ids never show up
      await store.upsert(spec, 'b', [...points.values()].slice(0, 100).map((p) => ({ ...p, values: vector() })));

      const expectTruth = async (label: string) => {
        const query = vector();
        let narrow = 0;
        for (const filter of filters) {
          const expected = truth('cosine', points.values(), query, filter);
          if (expected.length > 0 && expected.length * 4 < points.size) narrow += 1;
          const what = `${label}: ${JSON.stringify(filter)}`;
          const all = await store.search(spec, 'a', query, { topK: points.size, filter });
          expect(all.map((m) => m.id), what).to.deep.equal(expected.map((e) => e.id));
          all.forEach((m, i) => expect(m.score, what).to.be.closeTo((expected[i] as { score: number }).score, 1e-5));
          const best = await store.search(spec, 'a', query, { topK: 3, filter });
          expect(best.map((m) => m.id), `${what}, top 3`).to.deep.equal(expected.slice(0, 3).map((e) => e.id));
          expect(await store.count(spec, 'a', filter), `${what}, count`).to.equal(expected.length);
        }
        // the narrow filters are what the index serves; enough of them must be among the random ones
        expect(narrow, label).to.be.greaterThan(FILTERS / 5);
      };

      await expectTruth('as written');
      const gone = [...points.keys()].filter((_, i) => i % 5 === 0);
      await store.deleteByIds(spec, 'a', gone);
      for (const id of gone) points.delete(id);
      const rewritten = fc.sample(rowArb, { seed: SEED + 2, numRuns: 120 }).map((row, i) => point(i % 2 === 0 ? `r${i * 3 + 1}` : `n${i}`, row));
      await store.upsert(spec, 'a', rewritten);
      for (const p of rewritten) points.set(p.id, p);
      await expectTruth('after deletions and re-writes');

      // a few filters that each keep a little of the project, so enough is left to search
      const small = (filter: FilterNode) => truth('cosine', points.values(), vector(), filter).length;
      for (const filter of filters.filter((f) => small(f) > 0 && small(f) * 15 < points.size).slice(0, 6)) {
        await store.deleteByFilter(spec, 'a', filter);
        const accept = toPredicate(filter);
        for (const [id, p] of points) if (accept(p as FilterRow)) points.delete(id);
      }
      expect(await store.count(spec, 'a')).to.equal(points.size);
      await expectTruth('after deletions by filter');

      store = new EmbeddedVectorStore(db);
      await expectTruth('read back from the file');
      expect(await store.count(spec, 'b')).to.equal(100);
    });

    for (const metric of ['cosine', 'dotproduct', 'euclidean'] as const) {
      it(`finds the true ${metric} neighbours among several blocks of passing vectors`, async () => {
        // 256 dimensions, so the passing vectors span several of the blocks they are scored in;
        // `n` ranges pick runs of consecutive slots, `group` scattered ones
        const spec: CollectionSpec = { name: `blocks_${metric}`, dimension: 256, metric, columns: {} };
        const next = random(7);
        const vector = () => Array.from({ length: 256 }, () => next() - 0.5);
        const points: Point[] = Array.from({ length: 6000 }, (_, i) => ({ id: `v${i}`, values: vector(), columns: {}, metadata: { n: i, group: `g${i % 12}` } }));
        const store = new EmbeddedVectorStore(db);
        await store.upsert(spec, 'a', points);
        await store.deleteByIds(spec, 'a', ['v0', 'v700', 'v3001']);
        const kept = points.filter((p) => !['v0', 'v700', 'v3001'].includes(p.id));
        const root = { columns: {}, metadata: 'root' } as const;
        for (const f of [{ group: { in: ['g1', 'g5'] } }, { n: { lt: 1400 } }, { n: { gte: 2000, lt: 2100 } }, { OR: [{ group: 'g3' }, { n: { lt: 700 } }] }, { group: { ne: 'g1' } }]) {
          const filter = parseFilter(f, root) as FilterNode;
          const query = vector();
          const expected = truth(metric, kept, query, filter).slice(0, 20);
          const found = await store.search(spec, 'a', query, { topK: 20, filter });
          expect(found.map((m) => m.id), JSON.stringify(f)).to.deep.equal(expected.map((e) => e.id));
          found.forEach((m, i) => expect(m.score).to.be.closeTo((expected[i] as { score: number }).score, 1e-3));
        }

        // Filters that pass many vectors but none near the query: the nearest of the whole slab
        // are all turned away, and the passing ones must still be found.
        const query = vector();
        const near: Point[] = Array.from({ length: 300 }, (_, i) => ({ id: `near${i}`, values: query.map((x) => x + (next() - 0.5) * 0.01), columns: {}, metadata: { group: 'near' } }));
        await store.upsert(spec, 'a', near);
        expect((await store.search(spec, 'a', query, { topK: 5 })).map((m) => m.id.slice(0, 4))).to.deep.equal(Array(5).fill('near'));
        for (const f of [{ group: { ne: 'near' } }, { group: { in: ['g0', 'g1', 'g2', 'g3'] } }]) {
          const filter = parseFilter(f, root) as FilterNode;
          const expected = truth(metric, kept, query, filter).slice(0, 20);
          expect((await store.search(spec, 'a', query, { topK: 20, filter })).map((m) => m.id), JSON.stringify(f)).to.deep.equal(expected.map((e) => e.id));
        }
      });
    }
  });
}
