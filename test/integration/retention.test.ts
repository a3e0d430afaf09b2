import { expect } from 'chai';
import { Retention } from '../../core/retention.js';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

/**
 * How long a test waits for the queue's background work (indexing, vector removal, the scheduled
 * sweep). In CI the production suite shares its process's queue with the work of the tests before
 * it and two cores with the other suites: a removal took over 30 s there, 1.4 s on a quiet machine.
 */
const BACKGROUND_MS = 80_000;

const DAY = 24 * 3600 * 1000;
const NOTE = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** HTTP helpers for one project, as its API key sees it. */
function client(t: TestRuntime, key: string, projectId: string) {
  const auth = token(key);
  const api = {
    projectId,
    auth,
    async schema(retention: Record<string, number> | null, name = unique('note').toLowerCase()): Promise<string> {
      const res = await t.http.post('/v1/schemas').set('Authorization', auth).send({ name, json_schema: NOTE, retention, embed_template: '{{text}}' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return name;
    },
    async store(schema: string, text: string, user_id?: string): Promise<string> {
      const res = await t.http.post(`/v1/records/${schema}`).set('Authorization', auth).send({ record: { text }, ...(user_id ? { user_id } : {}) });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      // distinct creation times, so "newest" is unambiguous
      await pause(3);
      return res.body.id as string;
    },
    status: async (schema: string, id: string): Promise<number> => (await t.http.get(`/v1/records/${schema}/${id}`).set('Authorization', auth)).status,
    indexed: (schema: string, id: string) =>
      waitFor(async () => (await t.http.get(`/v1/records/${schema}/${id}`).set('Authorization', auth)).body.embedding_status === 'indexed', {
        timeoutMs: BACKGROUND_MS,
        message: `record ${id} indexed`,
      }),
    async listed(schema: string, user: string): Promise<string[]> {
      const res = await t.http.get(`/v1/records/${schema}?user_id=${user}&limit=100`).set('Authorization', auth);
      return res.body.records.map((r: { id: string }) => r.id);
    },
    async searched(user: string, query: string): Promise<string[]> {
      const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query, filters: { user_id: user }, top_k: 100 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.results.map((r: { id: string }) => r.id);
    },
    async events(id: string): Promise<string[]> {
      const res = await t.http.get(`/v1/memories/${id}/history/`).set('Authorization', auth);
      return res.status === 200 ? res.body.map((h: { event: string }) => h.event) : [];
    },
    async vectors(ids: string[]): Promise<string[]> {
      const spec = await t.runtime.memoryIndexer.collection(projectId);
      return (await t.runtime.vectors.fetch(spec, projectId, ids)).map((v) => v.id);
    },
    vectorsGone: (ids: string[]) => waitFor(async () => (await api.vectors(ids)).length === 0, { timeoutMs: BACKGROUND_MS, message: `vectors of ${ids.join(', ')} removed` }),
  };
  return api;
}

describe(`retention sweeps (${PROFILE})`, function () {
  this.timeout(4 * BACKGROUND_MS);
  let t: TestRuntime;
  /** The controllable clock of the sweeps these tests run. */
  let now = Date.now();
  const retention = (batchSize?: number) => new Retention(t.runtime.repositories.schemas, t.runtime.repositories.memories, t.runtime.records, { now: () => now, batchSize });
  /** A new project, so each test owns its data. */
  const project = async () => {
    const created = await newProject(t);
    return client(t, created.key, created.projectId);
  };

  before(async () => {
    t = await startRuntime();
  });
  after(() => t.close());

  it('max_age_days deletes only records older than the limit, with their vectors, leaving a DELETE in history', async () => {
    const a = await project();
    const user = unique('u');
    const schema = await a.schema({ max_age_days: 30 });
    const old = await a.store(schema, 'The old meeting notes about the harbour bridge', user);
    await pause(20);
    const boundary = Date.now();
    await pause(20);
    const fresh = await a.store(schema, 'The fresh meeting notes about the harbour bridge', user);
    await a.indexed(schema, old);
    await a.indexed(schema, fresh);
    expect((await a.searched(user, 'harbour bridge meeting')).sort()).to.deep.equal([old, fresh].sort());

    now = boundary + 29 * DAY;
    expect((await retention().sweep(a.projectId)).deleted).to.equal(0);
    expect(await a.status(schema, old)).to.equal(200);

    now = boundary + 30 * DAY;
    const swept = await retention().sweep(a.projectId);
    expect(swept).to.deep.include({ deleted: 1, capped: false });
    expect(await a.status(schema, old)).to.equal(404);
    expect(await a.status(schema, fresh)).to.equal(200);
    expect(await a.events(old)).to.deep.equal(['ADD', 'DELETE']);
    expect(await a.events(fresh)).to.deep.equal(['ADD']);
    await a.vectorsGone([old]);
    expect(await a.vectors([fresh])).to.deep.equal([fresh]);
    expect(await a.searched(user, 'harbour bridge meeting')).to.deep.equal([fresh]);
  });

  it('max_count keeps the newest N per user_id, not across users, a missing user_id being a group of its own', async () => {
    const a = await project();
    now = Date.now();
    const [u1, u2] = [unique('u1'), unique('u2')];
    const schema = await a.schema({ max_count: 2 });
    const first: string[] = [];
    for (const n of [1, 2, 3, 4]) first.push(await a.store(schema, `u1 note ${n}`, u1));
    const second = await a.store(schema, 'u2 note', u2);
    const nobody: string[] = [];
    for (const n of [1, 2, 3]) nobody.push(await a.store(schema, `anonymous note ${n}`));
    for (const id of [...first, second, ...nobody]) await a.indexed(schema, id);

    expect((await retention().sweep(a.projectId)).deleted).to.equal(3);
    expect(await a.listed(schema, u1)).to.deep.equal([first[3], first[2]]);
    expect(await a.listed(schema, u2)).to.deep.equal([second]);
    expect(await a.status(schema, nobody[0] as string)).to.equal(404);
    expect(await a.status(schema, nobody[1] as string)).to.equal(200);
    expect(await a.status(schema, nobody[2] as string)).to.equal(200);
    for (const id of [first[0], first[1], nobody[0]] as string[]) expect(await a.events(id)).to.deep.equal(['ADD', 'DELETE']);
    await a.vectorsGone([first[0], first[1], nobody[0]] as string[]);
    expect((await a.searched(u1, 'u1 note')).sort()).to.deep.equal([first[2], first[3]].sort());
    // a second sweep finds nothing more to do
    expect((await retention().sweep(a.projectId)).deleted).to.equal(0);
  });

  it('leaves schemas without retention, free-form memories and other projects alone', async () => {
    const [a, b] = [await project(), await project()];
    const user = unique('u');
    const shared = unique('shared').toLowerCase();
    await a.schema({ max_age_days: 1 }, shared);
    await b.schema(null, shared);
    const kept = await a.schema(null);
    const bExpiring = await b.schema({ max_age_days: 1 });
    const aGone = await a.store(shared, 'expires in project a', user);
    const bSameName = await b.store(shared, 'same schema name in project b, no retention', user);
    const aKept = await a.store(kept, 'no retention in project a', user);
    const bOther = await b.store(bExpiring, 'expires in project b', user);
    const freeForm = await t.http.post('/v3/memories/add/').set('Authorization', a.auth).send({ messages: [{ role: 'user', content: 'I like tea' }], user_id: user, infer: false });
    expect(freeForm.status, JSON.stringify(freeForm.body)).to.equal(200);
    const memoryId = freeForm.body.results[0].id as string;

    now = Date.now() + 40 * DAY;
    expect((await retention().sweep(a.projectId)).deleted).to.equal(1);
    expect(await a.status(shared, aGone)).to.equal(404);
    expect(await b.status(shared, bSameName)).to.equal(200);
    expect(await a.status(kept, aKept)).to.equal(200);
    expect(await b.status(bExpiring, bOther)).to.equal(200);

    // every project: b's schema with retention is swept, nothing else of the above
    await retention().sweep();
    expect(await b.status(bExpiring, bOther)).to.equal(404);
    expect(await b.status(shared, bSameName)).to.equal(200);
    expect(await a.status(kept, aKept)).to.equal(200);
    expect((await t.http.get(`/v1/memories/${memoryId}/`).set('Authorization', a.auth)).status).to.equal(200);
  });

  it('two sweeps at once delete each record once, without errors', async () => {
    const a = await project();
    const user = unique('u');
    const aged = await a.schema({ max_age_days: 1 });
    const counted = await a.schema({ max_count: 3 });
    const expiring: string[] = [];
    for (let i = 0; i < 12; i += 1) expiring.push(await a.store(aged, `aged ${i}`, user));
    const overflow: string[] = [];
    for (let i = 0; i < 10; i += 1) overflow.push(await a.store(counted, `counted ${i}`, user));

    now = Date.now() + 2 * DAY;
    const results = await Promise.all([retention(4).sweep(a.projectId), retention(5).sweep(a.projectId)]);
    expect(results.reduce((sum, r) => sum + r.deleted, 0)).to.equal(12 + 7);
    for (const id of expiring) expect(await a.status(aged, id)).to.equal(404);
    expect(await a.listed(counted, user)).to.deep.equal(overflow.slice(7).reverse());
    for (const id of [...expiring, ...overflow.slice(0, 7)]) expect(await a.events(id)).to.deep.equal(['ADD', 'DELETE']);
    await a.vectorsGone([...expiring, ...overflow.slice(0, 7)]);
  });

  it('deletes memories past their expiration date by more than the grace period, in batches, as a user delete does', async () => {
    const a = await project();
    const b = await project();
    const user = unique('u');
    const add = async (auth: string, content: string, expiration_date?: string): Promise<string> => {
      const res = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: [{ role: 'user', content }], user_id: user, infer: false, ...(expiration_date ? { expiration_date } : {}) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.results[0].id as string;
    };
    const gone = [await add(a.auth, 'A coupon for the bakery', '2030-01-10'), await add(a.auth, 'A coupon for the cinema', '2030-01-10')];
    const graced = await add(a.auth, 'A coupon for the museum', '2030-01-11');
    const lasting = await add(a.auth, 'A library card');
    const foreign = await add(b.auth, 'A coupon for the zoo', '2030-01-10');
    const memory = (id: string, auth = a.auth) => t.http.get(`/v1/memories/${id}/`).set('Authorization', auth);
    for (const id of [...gone, graced, lasting]) {
      await waitFor(async () => (await memory(id)).body.embedding_status === 'indexed', { timeoutMs: BACKGROUND_MS, message: `memory ${id} indexed` });
    }
    const expiry = (graceDays: number) =>
      new Retention(t.runtime.repositories.schemas, t.runtime.repositories.memories, t.runtime.records, { now: () => now, batchSize: 1, expiryGraceDays: graceDays });

    // 2030-01-10 expired on 2030-01-11; with 30 days' grace it is deleted from 2030-02-10
    now = Date.parse('2030-02-09T23:59:59Z');
    expect((await expiry(30).sweep(a.projectId)).deleted).to.equal(0);
    now = Date.parse('2030-02-10T00:00:00Z');
    expect(await expiry(30).sweep(a.projectId)).to.deep.include({ deleted: 2, capped: false });
    for (const id of gone) {
      expect((await memory(id)).status).to.equal(404);
      expect(await a.events(id)).to.deep.equal(['ADD', 'DELETE']);
    }
    await a.vectorsGone(gone);
    for (const id of [graced, lasting]) expect((await memory(id)).status).to.equal(200);
    expect((await memory(foreign, b.auth)).status, 'another project is not swept').to.equal(200);

    // no grace: deleted from the day after the last day it was shown
    now = Date.parse('2030-01-12T00:00:00Z');
    expect((await expiry(0).sweep(a.projectId)).deleted).to.equal(1);
    expect((await memory(graced)).status).to.equal(404);
    expect((await memory(lasting)).status).to.equal(200);
  });
});

describe(`scheduled retention sweep (${PROFILE})`, function () {
  this.timeout(4 * BACKGROUND_MS);
  let t: TestRuntime;

  before(async () => {
    t = await startRuntime({ env: { RETENTION_SWEEP_MS: '1000' } });
  });
  after(() => t.close());

  it('runs by itself: an expired record disappears from GET, memory search and the vector store', async () => {
    const project = await newProject(t);
    const c = client(t, project.key, project.projectId);
    const user = unique('u');
    const schema = await c.schema({ max_age_days: 7 });
    const expired = await c.store(schema, 'A reminder about the lighthouse keeper', user);
    const current = await c.store(schema, 'Another reminder about the lighthouse keeper', user);
    await c.indexed(schema, expired);
    await c.indexed(schema, current);
    // age one record past the policy, as if it had been stored eight days ago
    await t.runtime.db('memories').where({ project_id: project.projectId, id: expired }).update({ created_at: Date.now() - 8 * DAY });

    await waitFor(async () => (await c.status(schema, expired)) === 404, { timeoutMs: BACKGROUND_MS, message: 'the scheduled sweep deleted the expired record' });
    await c.vectorsGone([expired]);
    expect(await c.searched(user, 'lighthouse keeper reminder')).to.deep.equal([current]);
    expect(await c.status(schema, current)).to.equal(200);
    expect(await c.events(expired)).to.deep.equal(['ADD', 'DELETE']);
  });
});
