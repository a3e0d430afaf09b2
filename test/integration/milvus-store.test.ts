import { createRequire } from 'node:module';
import { expect } from 'chai';
import { parseFilter, type ColumnType } from '../../contracts/filter/filter.js';
import { MilvusConnection } from '../../db/milvus.js';
import { MilvusVectorStore } from '../../db/vectors/milvus.store.js';
import type { CollectionSpec, Metric, VectorPoint } from '../../contracts/vector-store.js';
import { AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { isProduction, TEST_MILVUS_ADDRESS, unique } from '../helpers.js';

const log = createLogger('silent');

if (isProduction) {
  describe('milvus vector store', function () {
    this.timeout(60_000);
    let connection: MilvusConnection;
    let store: MilvusVectorStore;
    const collections: string[] = [];

    const specOf = (metric: Metric, dimension = 3, columns: Record<string, ColumnType> = {}): CollectionSpec => {
      const name = unique('t').replace('-', '_');
      collections.push(name);
      return { name, dimension, metric, columns };
    };
    const ids = (points: Array<{ id: string }>): string[] => points.map((p) => p.id).sort();

    before(() => {
      connection = new MilvusConnection(TEST_MILVUS_ADDRESS, null, log);
      store = new MilvusVectorStore(connection, log);
    });

    after(async () => {
      for (const name of collections) await store.dropCollection(name);
      await connection.close();
    });

    it('upserts, replaces by id, and fetches with values only when asked', async () => {
      const spec = specOf('cosine', 3, { user_id: 'string', stars: 'number', done: 'boolean', created_at: 'date' });
      await store.upsert(spec, 'proj-a', [
        { id: 'v1', values: [1, 0, 0], columns: { user_id: 'u1', stars: 4.5, done: true, created_at: 1_714_564_800_000 }, metadata: { topic: 'food', tags: ['a', 'b'] } },
        { id: 'v2', values: [0, 1, 0], metadata: { topic: 'travel' } },
      ]);
      const plain = await store.fetch(spec, 'proj-a', ['v1', 'v2', 'missing']);
      expect(ids(plain)).to.deep.equal(['v1', 'v2']);
      const v1 = plain.find((p) => p.id === 'v1');
      expect(v1).to.deep.equal({
        id: 'v1',
        columns: { user_id: 'u1', stars: 4.5, done: true, created_at: 1_714_564_800_000 },
        metadata: { topic: 'food', tags: ['a', 'b'] },
      });
      expect(plain.find((p) => p.id === 'v2')?.columns).to.deep.equal({ user_id: null, stars: null, done: null, created_at: null });

      await store.upsert(spec, 'proj-a', [{ id: 'v1', values: [0, 0, 1], columns: { user_id: 'u2' }, metadata: { topic: 'news' } }]);
      const [replaced] = await store.fetch(spec, 'proj-a', ['v1'], { includeValues: true });
      expect(replaced).to.deep.equal({
        id: 'v1',
        values: [0, 0, 1],
        columns: { user_id: 'u2', stars: null, done: null, created_at: null },
        metadata: { topic: 'news' },
      });
      expect(await store.count(spec, 'proj-a')).to.equal(2);
    });

    it('reads its own writes at once', async () => {
      const spec = specOf('cosine', 2);
      for (let i = 1; i <= 15; i++) {
        await store.upsert(spec, 'proj-a', [{ id: `v${i}`, values: [1, i], metadata: { n: i } }]);
        expect(await store.count(spec, 'proj-a')).to.equal(i);
        const [latest] = await store.fetch(spec, 'proj-a', ['v1']);
        await store.upsert(spec, 'proj-a', [{ id: 'v1', values: [1, 1], metadata: { n: (latest?.metadata.n as number) + 100 } }]);
        expect((await store.fetch(spec, 'proj-a', ['v1']))[0]?.metadata.n).to.equal(1 + 100 * i);
      }
    });

    const cases: Array<[Metric, VectorPoint[], number[], string[], number[]]> = [
      [
        'cosine',
        [
          { id: 'same', values: [2, 0, 0] },
          { id: 'diagonal', values: [1, 1, 0] },
          { id: 'orthogonal', values: [0, 0, 3] },
          { id: 'opposite', values: [-1, 0, 0] },
        ],
        [1, 0, 0],
        ['same', 'diagonal', 'orthogonal', 'opposite'],
        [1, Math.SQRT1_2, 0, -1],
      ],
      [
        'euclidean',
        [
          { id: 'far', values: [3, 0, 0] },
          { id: 'near', values: [1, 0, 0] },
          { id: 'middle', values: [1, 1, 0] },
          { id: 'farthest', values: [0, 0, -4] },
        ],
        [0, 0, 0],
        ['near', 'middle', 'far', 'farthest'],
        [1, 2, 9, 16],
      ],
      [
        'dotproduct',
        [
          { id: 'one', values: [1, 0, 0] },
          { id: 'two', values: [2, 0, 0] },
          { id: 'minus', values: [-1, 5, 0] },
          { id: 'half', values: [0.5, 9, 9] },
        ],
        [1, 0, 0],
        ['two', 'one', 'half', 'minus'],
        [2, 1, 0.5, -1],
      ],
    ];
    for (const [metric, points, query, order, scores] of cases) {
      it(`searches best first with ${metric} scores`, async () => {
        const spec = specOf(metric);
        await store.upsert(spec, 'proj-a', points.map((p) => ({ ...p, metadata: { keep: p.id !== order[1] } })));
        const matches = await store.search(spec, 'proj-a', query, { topK: 10 });
        expect(matches.map((m) => m.id)).to.deep.equal(order);
        matches.forEach((m, i) => expect(m.score).to.be.closeTo(scores[i] as number, 1e-5));
        expect(matches[0]).to.not.have.property('values');

        const top2 = await store.search(spec, 'proj-a', query, { topK: 2, includeValues: true });
        expect(top2.map((m) => m.id)).to.deep.equal(order.slice(0, 2));
        expect(top2[0]?.values).to.deep.equal(points.find((p) => p.id === order[0])?.values);

        const filtered = await store.search(spec, 'proj-a', query, { topK: 10, filter: parseFilter({ keep: true }, { columns: {}, metadata: 'root' }) });
        expect(filtered.map((m) => m.id)).to.deep.equal(order.filter((_, i) => i !== 1));
      });
    }

    it('deletes by ids, by filter, and all of a project', async () => {
      const spec = specOf('cosine', 2, { user_id: 'string' });
      const scope = { columns: spec.columns, metadata: 'field' as const };
      const points = (prefix: string): VectorPoint[] =>
        Array.from({ length: 6 }, (_, i) => ({ id: `${prefix}${i}`, values: [1, i], columns: { user_id: i % 2 ? 'odd' : 'even' }, metadata: { i } }));
      await store.upsert(spec, 'proj-a', points('a'));
      await store.upsert(spec, 'proj-b', points('a'));

      await store.deleteByIds(spec, 'proj-a', ['a0', 'a1', 'nope']);
      expect(await store.count(spec, 'proj-a')).to.equal(4);
      await store.deleteByFilter(spec, 'proj-a', parseFilter({ user_id: 'odd', 'metadata.i': { gte: 5 } }, scope));
      expect(ids(await store.fetch(spec, 'proj-a', ['a2', 'a3', 'a4', 'a5']))).to.deep.equal(['a2', 'a3', 'a4']);
      expect(await store.count(spec, 'proj-a', parseFilter({ user_id: 'even' }, scope))).to.equal(2);
      await store.deleteByFilter(spec, 'proj-a', null);
      expect(await store.count(spec, 'proj-a')).to.equal(0);

      expect(await store.count(spec, 'proj-b')).to.equal(6);
    });

    it('keeps projects apart: search, fetch, count, upsert and delete see one project only', async () => {
      const spec = specOf('cosine', 2);
      await store.upsert(spec, 'proj-a', [{ id: 'shared', values: [1, 0], metadata: { owner: 'a' } }]);
      await store.upsert(spec, 'proj-b', [
        { id: 'shared', values: [1, 0], metadata: { owner: 'b' } },
        { id: 'b-only', values: [1, 0.1], metadata: { owner: 'b' } },
      ]);
      const search = await store.search(spec, 'proj-a', [1, 0], { topK: 10 });
      expect(search.map((m) => [m.id, m.metadata.owner])).to.deep.equal([['shared', 'a']]);
      expect((await store.fetch(spec, 'proj-a', ['shared', 'b-only'])).map((p) => p.metadata.owner)).to.deep.equal(['a']);
      expect(await store.count(spec, 'proj-a')).to.equal(1);
      expect(await store.count(spec, 'proj-b')).to.equal(2);

      await store.deleteByIds(spec, 'proj-a', ['b-only']);
      await store.deleteByFilter(spec, 'proj-a', parseFilter({ owner: 'b' }, { columns: {}, metadata: 'root' }));
      expect(await store.count(spec, 'proj-b')).to.equal(2);
      await store.deleteByFilter(spec, 'proj-a', null);
      expect(await store.count(spec, 'proj-a')).to.equal(0);
      expect(ids(await store.fetch(spec, 'proj-b', ['shared', 'b-only']))).to.deep.equal(['b-only', 'shared']);
    });

    it('drops a collection, and recovers when another process dropped it', async () => {
      const spec = specOf('euclidean', 2);
      await store.upsert(spec, 'proj-a', [{ id: 'x', values: [0, 1] }]);
      await store.dropCollection(spec.name);
      await store.dropCollection(spec.name);
      expect(await store.count(spec, 'proj-a')).to.equal(0);

      await store.upsert(spec, 'proj-a', [{ id: 'x', values: [0, 1] }]);
      const other = new MilvusVectorStore(new MilvusConnection(TEST_MILVUS_ADDRESS, null, log), log);
      await other.dropCollection(spec.name);
      await store.upsert(spec, 'proj-a', [{ id: 'y', values: [1, 1] }]);
      expect(ids(await store.fetch(spec, 'proj-a', ['x', 'y']))).to.deep.equal(['y']);
      await other.dropCollection(spec.name);
      expect(await store.search(spec, 'proj-a', [1, 1], { topK: 3 })).to.deep.equal([]);
    });

    it('loads a released collection again on the next call (Milvus answers code 101, whatever its wording)', async () => {
      const spec = specOf('cosine', 2);
      await store.upsert(spec, 'proj-a', [{ id: 'kept', values: [1, 0] }]);
      const raw = await new MilvusConnection(TEST_MILVUS_ADDRESS, null, log).get();
      try {
        expect((await raw.releaseCollection({ collection_name: spec.name })).error_code).to.equal('Success');
        // what a Milvus restart leaves behind: every read would fail until someone loads it
        const refused = await raw.query({ collection_name: spec.name, filter: 'project_id == "proj-a"', output_fields: ['id'] });
        expect(Number(refused.status.code)).to.equal(101);
        expect((await store.search(spec, 'proj-a', [1, 0], { topK: 1 })).map((m) => m.id)).to.deep.equal(['kept']);
        await raw.releaseCollection({ collection_name: spec.name });
        expect([...(await store.existing(spec, 'proj-a', ['kept', 'gone']))]).to.deep.equal(['kept']);
      } finally {
        await raw.closeConnection();
      }
    });

    it('fetches and deletes long id lists in chunks', async () => {
      const spec = specOf('dotproduct', 2);
      const points = Array.from({ length: 1200 }, (_, i) => ({ id: `p${i}`, values: [1, i / 1200] }));
      await store.upsert(spec, 'proj-a', points);
      expect(await store.fetch(spec, 'proj-a', points.map((p) => p.id))).to.have.length(1200);
      await store.deleteByIds(spec, 'proj-a', points.slice(0, 1100).map((p) => p.id));
      expect(await store.count(spec, 'proj-a')).to.equal(100);
    });

    it('rejects vectors of the wrong dimension or with bad ids as 400s', async () => {
      const spec = specOf('cosine', 3);
      const rejected = async (p: Promise<unknown>): Promise<AppError> => {
        const err = await p.then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(AppError);
        return err as AppError;
      };
      expect((await rejected(store.upsert(spec, 'proj-a', [{ id: 'v', values: [1, 2] }]))).status).to.equal(400);
      expect((await rejected(store.upsert(spec, 'proj-a', [{ id: '', values: [1, 2, 3] }]))).status).to.equal(400);
      expect((await rejected(store.upsert(spec, 'proj-a', [{ id: 'x'.repeat(513), values: [1, 2, 3] }]))).status).to.equal(400);
      expect((await rejected(store.search(spec, 'proj-a', [1, 2], { topK: 1 }))).status).to.equal(400);
    });

    it('answers 400 for metadata longer than Milvus holds in a JSON field, writing nothing', async () => {
      const spec = specOf('cosine', 3);
      const err = await store.upsert(spec, 'proj-a', [{ id: 'big', values: [1, 0, 0], metadata: { blob: 'x'.repeat(70_000) } }]).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).status).to.equal(400);
      expect((err as AppError).code).to.equal('metadata_too_large');
      expect(await store.count(spec, 'proj-a')).to.equal(0);
    });

    it('answers 503 when Milvus cannot be reached', async () => {
      const down = new MilvusConnection('127.0.0.1:1', null, log);
      const unreachable = new MilvusVectorStore(down, log);
      const spec = specOf('cosine', 2);
      for (const attempt of [unreachable.ping(), unreachable.count(spec, 'proj-a')]) {
        const err = await attempt.then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(AppError);
        expect((err as AppError).status).to.equal(503);
        expect((err as AppError).detail).to.match(/Milvus is unreachable/);
      }
      await down.close();
    });

    it('keeps an idle connection: Milvus Lite never closes it for pinging too often', async function () {
      // The server's policy (gRPC's default: a ping without data every 5 minutes, two strikes) turns
      // a client away after its third early ping; with the SDK's pings every 10 s while idle that
      // came after 40–60 s of idle here, and a call then in flight fails. Idling 65 s is the
      // condition under test itself, not a wait for something to finish.
      this.timeout(90_000);
      const grpc = createRequire(import.meta.url)('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
      const logged: string[] = [];
      grpc.setLogger({ error: (...args: unknown[]) => logged.push(args.join(' ')), info: () => undefined, debug: () => undefined });
      const idle = new MilvusConnection(TEST_MILVUS_ADDRESS, null, log);
      try {
        await idle.ping();
        await new Promise((resolve) => setTimeout(resolve, 65_000));
        await idle.ping();
        expect(logged.filter((line) => /excess pings/.test(line))).to.deep.equal([]);
      } finally {
        grpc.setLogger(console);
        await idle.close();
      }
    });
  });
}
