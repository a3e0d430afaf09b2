import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { parseFilter, type FilterScope } from '../../contracts/filter/filter.js';
import type { CollectionSpec, Metric, VectorStore } from '../../contracts/vector-store.js';
import { PROFILE, startRuntime, type TestRuntime } from '../helpers.js';
import { seededRandom as random } from '../../lib/seeded-random.js';

// One contract, both stores: this suite runs against the embedded store on the embedded profile
// and against Milvus on the production profile.

const SCOPE: FilterScope = { columns: { user_id: 'string', created_at: 'date' }, metadata: 'field' };
const filter = (f: unknown) => parseFilter(f, SCOPE);
const collection = (metric: Metric, dimension = 3): CollectionSpec => ({
  name: `t_${randomBytes(6).toString('hex')}`,
  dimension,
  metric,
  columns: { user_id: 'string', created_at: 'date' },
});
const project = () => randomBytes(8).toString('hex');
const cosine = (u: number[], v: number[]) => {
  let d = 0;
  let nu = 0;
  let nv = 0;
  for (let i = 0; i < u.length; i++) {
    d += (u[i] as number) * (v[i] as number);
    nu += (u[i] as number) ** 2;
    nv += (v[i] as number) ** 2;
  }
  return d / Math.sqrt(nu * nv);
};


describe(`vector store contract (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let store: VectorStore;
  const made: string[] = [];
  const spec = (metric: Metric, dimension?: number) => {
    const s = collection(metric, dimension);
    made.push(s.name);
    return s;
  };

  before(async () => {
    t = await startRuntime({ start: false });
    store = t.runtime.vectors;
    expect(store.kind).to.equal(PROFILE === 'production' ? 'milvus' : 'embedded');
  });
  after(async () => {
    for (const name of made) await store.dropCollection(name);
    await t.close();
  });

  it('tells which of a list of ids have a vector, per project', async () => {
    const s = spec('cosine');
    const p = project();
    const other = project();
    await store.ensureCollection(s);
    expect([...(await store.existing(s, p, ['a']))]).to.deep.equal([]);
    const many = Array.from({ length: 1100 }, (_, i) => ({ id: `m${i}`, values: [1, i, 0], columns: { user_id: 'u', created_at: i } }));
    await store.upsert(s, p, [...many, { id: 'a', values: [1, 0, 0] }]);
    await store.upsert(s, other, [{ id: 'b', values: [0, 1, 0] }]);
    await store.deleteByIds(s, p, ['m7']);
    const asked = ['a', 'b', 'm7', 'missing', ...many.map((m) => m.id)];
    const found = await store.existing(s, p, asked);
    expect(found.size).to.equal(1100);
    expect(found.has('a')).to.equal(true);
    expect(found.has('b') || found.has('m7') || found.has('missing')).to.equal(false);
    expect([...(await store.existing(s, other, ['a', 'b']))]).to.deep.equal(['b']);
  });

  it('upserts, replaces by id, and fetches with and without values', async () => {
    const s = spec('cosine');
    const p = project();
    await store.ensureCollection(s);
    await store.upsert(s, p, [
      { id: 'a', values: [1, 0, 0], columns: { user_id: 'u1', created_at: 1000 }, metadata: { genre: 'drama', tags: ['x', 'y'] } },
      { id: 'b', values: [0, 1, 0], columns: { user_id: 'u2', created_at: 2000 }, metadata: { year: 2020 } },
    ]);
    await store.upsert(s, p, [{ id: 'a', values: [0, 0, 1], columns: { user_id: 'u1', created_at: 1500 }, metadata: { genre: 'comedy' } }]);
    const fetched = await store.fetch(s, p, ['a', 'b', 'missing'], { includeValues: true });
    const byId = Object.fromEntries(fetched.map((f) => [f.id, f]));
    expect(Object.keys(byId).sort()).to.deep.equal(['a', 'b']);
    expect(byId.a?.values).to.deep.equal([0, 0, 1]);
    expect(byId.a?.metadata).to.deep.equal({ genre: 'comedy' });
    expect(byId.a?.columns).to.include({ user_id: 'u1', created_at: 1500 });
    expect(byId.b?.metadata).to.deep.equal({ year: 2020 });
    const bare = await store.fetch(s, p, ['b']);
    expect(bare[0]?.values).to.equal(undefined);
    expect(await store.count(s, p)).to.equal(2);
  });

  const hand = [
    { id: 'x', values: [1, 0] },
    { id: 'y', values: [0.8, 0.6] },
    { id: 'z', values: [-1, 0] },
    { id: 'w', values: [3, 4] },
  ];
  const expectations: Record<Metric, { order: string[]; scores: number[] }> = {
    // query [1, 0]
    cosine: { order: ['x', 'y', 'w', 'z'], scores: [1, 0.8, 0.6, -1] },
    dotproduct: { order: ['w', 'x', 'y', 'z'], scores: [3, 1, 0.8, -1] },
    euclidean: { order: ['x', 'y', 'z', 'w'], scores: [0, 0.4, 4, 20] },
  };
  for (const metric of ['cosine', 'dotproduct', 'euclidean'] as const) {
    it(`orders matches best first with ${metric} scores`, async () => {
      const s = spec(metric, 2);
      const p = project();
      await store.upsert(s, p, hand);
      const matches = await store.search(s, p, [1, 0], { topK: 4 });
      expect(matches.map((m) => m.id)).to.deep.equal(expectations[metric].order);
      matches.forEach((m, i) => expect(m.score).to.be.closeTo(expectations[metric].scores[i] as number, 1e-4));
      const two = await store.search(s, p, [1, 0], { topK: 2, includeValues: true });
      expect(two.map((m) => m.id)).to.deep.equal(expectations[metric].order.slice(0, 2));
      expect(two[0]?.values).to.have.length(2);
    });
  }

  it('filters search, count and delete by columns and metadata', async () => {
    const s = spec('cosine');
    const p = project();
    await store.upsert(s, p, [
      { id: '1', values: [1, 0, 0], columns: { user_id: 'alice', created_at: 1_000 }, metadata: { genre: 'drama', year: 2019, tags: ['a'] } },
      { id: '2', values: [0.9, 0.1, 0], columns: { user_id: 'alice', created_at: 2_000 }, metadata: { genre: 'comedy', year: 2021 } },
      { id: '3', values: [0.8, 0.2, 0], columns: { user_id: 'bob', created_at: 3_000 }, metadata: { genre: 'drama', year: 2023, tags: ['b'] } },
      { id: '4', values: [0, 1, 0], columns: { user_id: 'bob', created_at: 4_000 }, metadata: {} },
    ]);
    const ids = async (f: unknown) => (await store.search(s, p, [1, 0, 0], { topK: 10, filter: filter(f) })).map((m) => m.id);
    expect(await ids({ user_id: 'alice' })).to.deep.equal(['1', '2']);
    expect(await ids({ metadata: { genre: 'drama' } })).to.deep.equal(['1', '3']);
    expect(await ids({ AND: [{ user_id: 'bob' }, { 'metadata.year': { gte: 2020 } }] })).to.deep.equal(['3']);
    expect(await ids({ OR: [{ 'metadata.tags': { contains: 'a' } }, { created_at: { gt: '1970-01-01T00:00:03Z' } }] })).to.deep.equal(['1', '4']);
    expect(await ids({ NOT: { user_id: { in: ['alice'] } } })).to.deep.equal(['3', '4']);
    expect(await store.count(s, p, filter({ metadata: { genre: { ne: 'drama' } } }))).to.equal(1);
    await store.deleteByFilter(s, p, filter({ user_id: 'alice' }));
    expect((await store.search(s, p, [1, 0, 0], { topK: 10 })).map((m) => m.id)).to.deep.equal(['3', '4']);
    await store.deleteByIds(s, p, ['3', 'nope']);
    expect(await store.count(s, p)).to.equal(1);
    await store.deleteByFilter(s, p, null);
    expect(await store.count(s, p)).to.equal(0);
    expect(await store.search(s, p, [1, 0, 0], { topK: 10 })).to.deep.equal([]);
  });

  describe('filters pinning string columns with eq and in', () => {
    // Enough points that a pin is a small part of the project, with pins shared by many points,
    // points with no pin at all, and deletions and re-writes that move points between slots.
    const PINNED_SCOPE: FilterScope = { columns: { user_id: 'string', app_id: 'string', created_at: 'date' }, metadata: 'field' };
    type Pinned = { id: string; values: number[]; columns: { user_id: string | null; app_id: string | null; created_at: number }; metadata: { n: number } };
    const cases: Array<{ filter: unknown; keeps: (p: Pinned) => boolean }> = [
      { filter: { user_id: 'u3' }, keeps: (p) => p.columns.user_id === 'u3' },
      { filter: { user_id: { in: ['u1', 'u4', 'nobody'] } }, keeps: (p) => ['u1', 'u4'].includes(p.columns.user_id as string) },
      { filter: { user_id: 'nobody' }, keeps: () => false },
      { filter: { app_id: 'a' }, keeps: (p) => p.columns.app_id === 'a' },
      { filter: { AND: [{ user_id: 'u2' }, { app_id: 'b' }] }, keeps: (p) => p.columns.user_id === 'u2' && p.columns.app_id === 'b' },
      { filter: { AND: [{ app_id: { in: ['a', 'b'] } }, { created_at: { gte: '1970-01-01T00:00:00.150Z' } }] }, keeps: (p) => p.columns.app_id !== null && p.columns.created_at >= 150 },
      { filter: { AND: [{ user_id: { in: ['u0', 'u5'] } }, { metadata: { n: { lt: 4 } } }, { app_id: 'a' }] }, keeps: (p) => ['u0', 'u5'].includes(p.columns.user_id as string) && p.metadata.n < 4 && p.columns.app_id === 'a' },
      { filter: { OR: [{ user_id: 'u6' }, { app_id: 'b' }] }, keeps: (p) => p.columns.user_id === 'u6' || p.columns.app_id === 'b' },
      { filter: { NOT: { user_id: 'u1' } }, keeps: (p) => p.columns.user_id !== 'u1' },
    ];
    const pinnedSpec = (): CollectionSpec => ({ ...spec('cosine', 8), columns: PINNED_SCOPE.columns });
    const makePoints = (next: () => number, from: number, count: number): Pinned[] =>
      Array.from({ length: count }, (_, j) => {
        const i = from + j;
        return {
          id: `p${i}`,
          values: Array.from({ length: 8 }, () => next() - 0.5),
          // every 11th point has no user, every 13th no app
          columns: { user_id: i % 11 === 10 ? null : `u${i % 7}`, app_id: i % 13 === 12 ? null : i % 3 === 0 ? 'b' : 'a', created_at: i },
          metadata: { n: i % 9 },
        };
      });
    /** Search (every match, and the best 5), count: each must be what a test of every point gives. */
    const expectTruth = async (s: CollectionSpec, p: string, points: Map<string, Pinned>, query: number[], label: string) => {
      for (const { filter: f, keeps } of cases) {
        const node = parseFilter(f, PINNED_SCOPE);
        const truth = [...points.values()]
          .filter(keeps)
          .map((pt) => ({ id: pt.id, score: cosine(query, pt.values) }))
          .sort((x, y) => y.score - x.score)
          .map((x) => x.id);
        const all = await store.search(s, p, query, { topK: points.size, filter: node });
        expect(all.map((m) => m.id), `${label}: ${JSON.stringify(f)}`).to.deep.equal(truth);
        const best = await store.search(s, p, query, { topK: 5, filter: node });
        expect(best.map((m) => m.id), `${label}, top 5: ${JSON.stringify(f)}`).to.deep.equal(truth.slice(0, 5));
        for (const m of best) expect(m.columns.user_id ?? null, m.id).to.equal(points.get(m.id)?.columns.user_id);
        expect(await store.count(s, p, node), `${label}, count: ${JSON.stringify(f)}`).to.equal(truth.length);
      }
    };

    it('searches and counts exactly what the filter keeps, after deletions move points and re-writes change pins', async () => {
      const s = pinnedSpec();
      const p = project();
      const next = random(11);
      await store.ensureCollection(s);
      const points = new Map(makePoints(next, 0, 300).map((pt) => [pt.id, pt]));
      await store.upsert(s, p, [...points.values()]);
      // another project with the same pins must never show up
      await store.upsert(s, project(), makePoints(random(12), 0, 50));
      const query = Array.from({ length: 8 }, () => next() - 0.5);
      await expectTruth(s, p, points, query, 'as written');

      // the first, a middle and the last points, and a run of u3's: each hole takes the last point
      const gone = ['p0', 'p150', 'p299', ...[...points.values()].filter((pt) => pt.columns.user_id === 'u3').slice(0, 20).map((pt) => pt.id)];
      await store.deleteByIds(s, p, gone);
      for (const id of gone) points.delete(id);
      await expectTruth(s, p, points, query, 'after deletions');

      // a re-write moves a point from one pin to another, or out of every pin
      const moved = [...points.values()].filter((pt) => pt.columns.user_id === 'u1').slice(0, 15);
      for (const [i, pt] of moved.entries()) {
        pt.columns = { ...pt.columns, user_id: i % 3 === 0 ? null : 'u3', app_id: i % 2 === 0 ? 'b' : 'c' };
        pt.values = Array.from({ length: 8 }, () => next() - 0.5);
      }
      const added = makePoints(next, 300, 40);
      for (const pt of added) points.set(pt.id, pt);
      await store.upsert(s, p, [...moved, ...added]);
      await expectTruth(s, p, points, query, 'after re-writes');

      await store.deleteByFilter(s, p, parseFilter({ AND: [{ user_id: { in: ['u2', 'u4'] } }, { app_id: 'a' }] }, PINNED_SCOPE));
      for (const pt of [...points.values()]) if (['u2', 'u4'].includes(pt.columns.user_id as string) && pt.columns.app_id === 'a') points.delete(pt.id);
      await store.deleteByFilter(s, p, parseFilter({ user_id: 'u5' }, PINNED_SCOPE));
      for (const pt of [...points.values()]) if (pt.columns.user_id === 'u5') points.delete(pt.id);
      expect(await store.count(s, p)).to.equal(points.size);
      await expectTruth(s, p, points, query, 'after deletions by filter');

      await store.deleteByFilter(s, p, null);
      points.clear();
      const again = makePoints(next, 1000, 30);
      for (const pt of again) points.set(pt.id, pt);
      await store.upsert(s, p, again);
      await expectTruth(s, p, points, query, 'emptied and written again');
    });
  });

  it('never lets one project see or change another project\'s vectors', async () => {
    const s = spec('cosine');
    const [a, b] = [project(), project()];
    await store.upsert(s, a, [{ id: 'same', values: [1, 0, 0], metadata: { owner: 'a' } }, { id: 'only-a', values: [0, 1, 0] }]);
    await store.upsert(s, b, [{ id: 'same', values: [0, 0, 1], metadata: { owner: 'b' } }]);
    expect((await store.search(s, b, [1, 0, 0], { topK: 10 })).map((m) => m.id)).to.deep.equal(['same']);
    expect((await store.fetch(s, b, ['same', 'only-a']))[0]?.metadata).to.deep.equal({ owner: 'b' });
    expect(await store.fetch(s, b, ['only-a'])).to.deep.equal([]);
    expect(await store.count(s, b)).to.equal(1);
    await store.deleteByIds(s, b, ['only-a']);
    await store.deleteByFilter(s, b, null);
    expect(await store.count(s, a)).to.equal(2);
    expect((await store.fetch(s, a, ['same']))[0]?.metadata).to.deep.equal({ owner: 'a' });
  });

  it('finds the true nearest neighbours of random 64-dimensional data', async () => {
    const s = spec('cosine', 64);
    const p = project();
    const next = random(7);
    const points = Array.from({ length: 500 }, (_, i) => ({
      id: `v${i}`,
      values: Array.from({ length: 64 }, () => next() - 0.5),
      metadata: { even: i % 2 === 0 },
    }));
    await store.upsert(s, p, points);
    let found = 0;
    for (let q = 0; q < 10; q++) {
      const query = Array.from({ length: 64 }, () => next() - 0.5);
      const truth = points
        .filter((pt) => pt.metadata.even)
        .map((pt) => ({ id: pt.id, score: cosine(query, pt.values) }))
        .sort((x, y) => y.score - x.score)
        .slice(0, 10);
      const got = await store.search(s, p, query, { topK: 10, filter: filter({ metadata: { even: true } }) });
      expect(got).to.have.length(10);
      for (let i = 1; i < got.length; i++) expect((got[i - 1] as { score: number }).score).to.be.at.least((got[i] as { score: number }).score);
      found += got.filter((g) => truth.some((tr) => tr.id === g.id)).length;
    }
    // exact on the embedded store; HNSW on Milvus may trade a neighbour for speed
    expect(found / 100).to.be.at.least(store.kind === 'embedded' ? 1 : 0.9);
  });

  it('drops a collection with its vectors', async () => {
    const s = spec('euclidean');
    const p = project();
    await store.upsert(s, p, [{ id: 'a', values: [1, 2, 3] }]);
    await store.dropCollection(s.name);
    await store.dropCollection(s.name);
    await store.ensureCollection(s);
    expect(await store.count(s, p)).to.equal(0);
  });
});
