import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';

describe(`vector index API (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  const post = (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object);
  const get = (path: string) => t.http.get(path).set('Authorization', auth);
  const name = () => unique('ix').toLowerCase();

  before(async () => {
    t = await startRuntime({ start: false });
    auth = token((await newProject(t)).key);
  });
  after(() => t.close());

  async function rawIndex(metric = 'cosine', dimension = 3): Promise<string> {
    const n = name();
    const res = await post('/v1/indexes', { name: n, dimension, metric });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return n;
  }

  describe('control plane', () => {
    it('creates a raw index and shows it', async () => {
      const n = name();
      const res = await post('/v1/indexes', { name: n, dimension: 8, metric: 'dotproduct', tags: { team: 'search' } });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ name: n, dimension: 8, metric: 'dotproduct', embed_model: null, managed: false, deletion_protection: 'disabled' });
      expect(res.body.tags).to.deep.equal({ team: 'search' });
      expect(res.body.created_at).to.match(/^\d{4}-\d\d-\d\dT.*Z$/);
      expect((await get(`/v1/indexes/${n}`)).body).to.deep.equal(res.body);
      expect((await get(`/v1/indexes/${n}/`)).status).to.equal(200);
      const list = await get('/v1/indexes');
      expect(list.body.indexes[0].name).to.equal(n);
    });

    it('defaults the metric to cosine and refuses a taken name', async () => {
      const n = name();
      expect((await post('/v1/indexes', { name: n, dimension: 4 })).body.metric).to.equal('cosine');
      const again = await post('/v1/indexes', { name: n, dimension: 4 });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('index_exists');
    });

    it('rejects both or neither of dimension and an embedding model with {detail}', async () => {
      for (const body of [
        { name: name(), dimension: 384, metric: 'cosine', embed: { model: 'local' } },
        { name: name(), dimension: 384, embed_model: 'local' },
        { name: name() },
        { name: name(), metric: 'cosine' },
      ]) {
        const res = await post('/v1/indexes', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.detail).to.be.a('string').and.match(/dimension|embed/);
      }
      expect((await get('/v1/indexes?limit=100')).body.indexes.map((i: { name: string }) => i.name)).to.not.include('never');
    });

    it('rejects unknown fields, bad metrics, bad names and unknown models, naming what is wrong', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ name: name(), dimension: 3, spec: {} }, /spec/],
        [{ name: name(), dimension: 3, metric: 'manhattan' }, /metric/],
        [{ name: 'Bad_Name', dimension: 3 }, /name/],
        [{ name: name(), dimension: 0 }, /dimension/],
        [{ name: name(), embed: { model: 'nope/model' } }, /nope/],
        [{ name: name(), embed: { model: 'cohere/embed-v4.0' } }, /COHERE_API_KEY/],
      ];
      for (const [body, pattern] of cases) {
        const res = await post('/v1/indexes', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(JSON.stringify(res.body)).to.match(pattern);
      }
    });

    it('PATCH: {} returns the index, protection blocks DELETE, tags merge, other fields are refused', async () => {
      const n = await rawIndex();
      const unchanged = await t.http.patch(`/v1/indexes/${n}`).set('Authorization', auth).send({});
      expect(unchanged.status).to.equal(200);
      expect(unchanged.body.name).to.equal(n);
      const on = await t.http.patch(`/v1/indexes/${n}`).set('Authorization', auth).send({ deletion_protection: 'enabled', tags: { a: '1', b: '2' } });
      expect(on.body).to.include({ deletion_protection: 'enabled' });
      expect(on.body.tags).to.deep.equal({ a: '1', b: '2' });
      const refused = await t.http.delete(`/v1/indexes/${n}`).set('Authorization', auth);
      expect(refused.status).to.equal(409);
      expect(refused.body.code).to.equal('deletion_protected');
      const merged = await t.http.patch(`/v1/indexes/${n}`).set('Authorization', auth).send({ deletion_protection: false, tags: { a: '', c: '3' } });
      expect(merged.body.tags).to.deep.equal({ b: '2', c: '3' });
      for (const body of [{ dimension: 5 }, { metric: 'euclidean' }, { name: 'other' }]) {
        const res = await t.http.patch(`/v1/indexes/${n}`).set('Authorization', auth).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await get(`/v1/indexes/${n}`)).body.dimension).to.equal(3);
      expect((await t.http.delete(`/v1/indexes/${n}`).set('Authorization', auth)).status).to.equal(204);
      expect((await get(`/v1/indexes/${n}`)).status).to.equal(404);
    });

    it("hides one project's indexes from another", async () => {
      const n = await rawIndex();
      const other = token((await newProject(t)).key);
      expect((await t.http.get(`/v1/indexes/${n}`).set('Authorization', other)).status).to.equal(404);
      expect((await t.http.post(`/v1/indexes/${n}/query`).set('Authorization', other).send({ vector: [1, 0, 0] })).status).to.equal(404);
      const theirs = await t.http.get('/v1/indexes').set('Authorization', other);
      expect(theirs.body.indexes).to.deep.equal([]);
      // the same name is free in the other project
      expect((await t.http.post('/v1/indexes').set('Authorization', other).send({ name: n, dimension: 3 })).status).to.equal(201);
    });
  });

  describe('data plane', () => {
    it('upserts, queries best first, fetches, filters, deletes and counts', async () => {
      const n = await rawIndex();
      const up = await post(`/v1/indexes/${n}/vectors/upsert`, {
        vectors: [
          { id: 'a', values: [1, 0, 0], metadata: { genre: 'drama', year: 2019 } },
          { id: 'b', values: [0.7, 0.7, 0], metadata: { genre: 'comedy', year: 2022, tags: ['family'] } },
          { id: 'c', values: [0, 0, 1], metadata: { genre: 'drama', year: 2024 } },
        ],
      });
      expect(up.status).to.equal(200);
      expect(up.body).to.deep.equal({ upserted_count: 3 });

      const q = await post(`/v1/indexes/${n}/query`, { vector: [1, 0.1, 0], top_k: 2, include_metadata: true });
      expect(q.status).to.equal(200);
      expect(q.body.matches.map((m: { id: string }) => m.id)).to.deep.equal(['a', 'b']);
      expect(q.body.matches[0].score).to.be.greaterThan(q.body.matches[1].score);
      expect(q.body.matches[0].metadata).to.deep.equal({ genre: 'drama', year: 2019 });
      expect(q.body.matches[0]).to.not.have.property('values');

      const withValues = await post(`/v1/indexes/${n}/query`, { vector: [0, 0, 1], top_k: 1, include_values: true });
      expect(withValues.body.matches[0]).to.include({ id: 'c' });
      expect(withValues.body.matches[0].values).to.deep.equal([0, 0, 1]);
      expect(withValues.body.matches[0]).to.not.have.property('metadata');

      const byId = await post(`/v1/indexes/${n}/query`, { id: 'a', top_k: 1 });
      expect(byId.body.matches[0].id).to.equal('a');

      const filtered = await post(`/v1/indexes/${n}/query`, { vector: [1, 0, 0], top_k: 10, filter: { AND: [{ genre: 'drama' }, { year: { gt: 2020 } }] } });
      expect(filtered.body.matches.map((m: { id: string }) => m.id)).to.deep.equal(['c']);
      const pinecone = await post(`/v1/indexes/${n}/query`, { vector: [1, 0, 0], top_k: 10, filter: { tags: { $in: ['family'] } } });
      expect(pinecone.status).to.equal(200);

      const fetched = await post(`/v1/indexes/${n}/vectors/fetch`, { ids: ['a', 'zzz'] });
      expect(Object.keys(fetched.body.vectors)).to.deep.equal(['a']);
      expect(fetched.body.vectors.a).to.deep.equal({ id: 'a', values: [1, 0, 0], metadata: { genre: 'drama', year: 2019 } });

      expect((await get(`/v1/indexes/${n}/stats`)).body).to.deep.equal({ name: n, dimension: 3, metric: 'cosine', vector_count: 3 });
      expect((await post(`/v1/indexes/${n}/vectors/delete`, { filter: { genre: 'comedy' } })).status).to.equal(200);
      expect((await get(`/v1/indexes/${n}/stats`)).body.vector_count).to.equal(2);
      await post(`/v1/indexes/${n}/vectors/delete`, { ids: ['a'] });
      expect((await get(`/v1/indexes/${n}/stats`)).body.vector_count).to.equal(1);
      await post(`/v1/indexes/${n}/vectors/delete`, { delete_all: true });
      expect((await get(`/v1/indexes/${n}/stats`)).body.vector_count).to.equal(0);
    });

    it('rejects bad vectors with the reason and stores nothing from that batch', async () => {
      const n = await rawIndex();
      const cases: Array<[unknown, RegExp]> = [
        [{ vectors: [{ id: 'ok', values: [1, 0, 0] }, { id: 'x', values: [1, 2] }] }, /\/vectors\/1\/values.*3/],
        [{ vectors: [{ id: 'x', values: [1, 2, 'OVERFLOW'] }] }, /\/vectors\/0\/values\/2/],
        [{ vectors: Array.from({ length: 1001 }, (_, i) => ({ id: `v${i}`, values: [1, 0, 0] })) }, /1000/],
        [{ vectors: [{ id: 'x', values: [1, 0, 0], metadata: { big: 'x'.repeat(41_000) } }] }, /40960/],
        [{ vectors: [{ id: 'x', values: [1, 0, 0], metadata: { nested: { a: 1 } } }] }, /metadata values/],
        [{ vectors: [{ id: 'x', values: [1, 0, 0], metadata: { 'bad key': 1 } }] }, /metadata keys/],
        [{ vectors: [{ id: '', values: [1, 0, 0] }] }, /id/],
        [{ vectors: [{ id: 'x', values: [1, 0, 0], sparse: {} }] }, /sparse/],
      ];
      for (const [body, pattern] of cases) {
        const res = await t.http
          .post(`/v1/indexes/${n}/vectors/upsert`)
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          // a number JSON can carry but a float cannot
          .send(JSON.stringify(body).replace('"OVERFLOW"', '1e400'));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(JSON.stringify(res.body), JSON.stringify(res.body)).to.match(pattern);
      }
      expect((await get(`/v1/indexes/${n}/stats`)).body.vector_count).to.equal(0);
    });

    it('rejects bad queries and filters, naming the offender', async () => {
      const n = await rawIndex();
      const cases: Array<[unknown, RegExp]> = [
        [{ vector: [1, 0] }, /3/],
        [{ vector: [1, 0, 0], text: 'hi' }, /exactly one/],
        [{ top_k: 3 }, /exactly one/],
        [{ text: 'a kitten' }, /raw vectors/],
        [{ vector: [1, 0, 0], filter: { genre: { like: 'x' } } }, /like/],
        [{ vector: [1, 0, 0], filter: { XOR: [] } }, /XOR/],
        [{ vector: [1, 0, 0], top_k: 0 }, /top_k/],
        [{ vector: [1, 0, 0], namespace: 'a' }, /namespace/],
      ];
      for (const [body, pattern] of cases) {
        const res = await post(`/v1/indexes/${n}/query`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.detail, JSON.stringify(res.body)).to.be.a('string');
        expect(JSON.stringify(res.body), JSON.stringify(body)).to.match(pattern);
      }
      for (const body of [{}, { ids: ['a'], delete_all: true }, { delete_all: false }, { filter: {} }]) {
        expect((await post(`/v1/indexes/${n}/vectors/delete`, body)).status, JSON.stringify(body)).to.equal(400);
      }
    });

    it('keeps vectors of a deleted index from reappearing under its name', async () => {
      const n = await rawIndex();
      await post(`/v1/indexes/${n}/vectors/upsert`, { vectors: [{ id: 'a', values: [1, 0, 0] }] });
      expect((await t.http.delete(`/v1/indexes/${n}`).set('Authorization', auth)).status).to.equal(204);
      await post('/v1/indexes', { name: n, dimension: 3 });
      expect((await get(`/v1/indexes/${n}/stats`)).body.vector_count).to.equal(0);
    });
  });

  describe('managed index with the local model', () => {
    const sentences = {
      cat: 'The cat sat on the windowsill, watching the birds outside.',
      revenue: 'Quarterly revenue grew 12 percent on strong cloud sales.',
      recipe: 'Whisk the eggs with sugar until pale, then fold in the flour.',
    };

    it('embeds records server-side and answers a semantic text query', async () => {
      const n = name();
      const created = await post('/v1/indexes', { name: n, embed: { model: 'local', field_map: { text: 'chunk_text' } } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ dimension: 384, metric: 'cosine', embed_model: 'local/all-MiniLM-L6-v2', managed: true });
      expect(created.body.field_map).to.deep.equal({ text: 'chunk_text' });

      const up = await post(`/v1/indexes/${n}/records/upsert`, {
        records: Object.entries(sentences).map(([id, text]) => ({ _id: id, chunk_text: text, topic: id === 'revenue' ? 'finance' : 'life' })),
      });
      expect(up.status, JSON.stringify(up.body)).to.equal(200);
      expect(up.body).to.deep.equal({ upserted_count: 3 });

      const res = await post(`/v1/indexes/${n}/query`, { text: 'a kitten by the window', top_k: 3, include_metadata: true });
      expect(res.status).to.equal(200);
      expect(res.body.matches.map((m: { id: string }) => m.id)[0]).to.equal('cat');
      expect(res.body.matches.at(-1).id).to.not.equal('cat');
      expect(res.body.matches[0].metadata).to.deep.equal({ chunk_text: sentences.cat, topic: 'life' });
      expect(res.body.matches[0].score).to.be.greaterThan(0.3);

      const money = await post(`/v1/indexes/${n}/query`, { text: 'how much money did the company make', top_k: 1, filter: { topic: 'finance' } });
      expect(money.body.matches.map((m: { id: string }) => m.id)).to.deep.equal(['revenue']);
    });

    it('accepts embed_model as a string and rejects records without their text', async () => {
      const n = name();
      const created = await post('/v1/indexes', { name: n, embed_model: 'local/all-MiniLM-L6-v2' });
      expect(created.status).to.equal(201);
      expect(created.body.field_map).to.deep.equal({ text: 'text' });
      const bad = await post(`/v1/indexes/${n}/records/upsert`, { records: [{ _id: 'x', body: 'no text field' }] });
      expect(bad.status).to.equal(400);
      expect(bad.body.detail).to.match(/text/);
      const raw = await rawIndex();
      const notManaged = await post(`/v1/indexes/${raw}/records/upsert`, { records: [{ _id: 'x', text: 'hello' }] });
      expect(notManaged.status).to.equal(400);
      expect(notManaged.body.code).to.equal('index_not_managed');
    });
  });
});
