import { expect } from 'chai';
import { memoriesIndexed, newProject, PROFILE, startRuntime, token, unique, type MemoryStatus as Status, type TestRuntime } from '../helpers.js';

// "Is my import searchable yet?": GET /v3/memories/status/ counts an owner's memories by indexing
// state, and mem0's entity list shows each entity's pending and failed memories beside its total.

interface Entity {
  id: string;
  total_memories: number;
  pending_memories: number;
  failed_memories: number;
}

describe(`memory indexing status (${PROFILE})`, function () {
  this.timeout(120_000);

  const status = async (t: TestRuntime, auth: string, query: Record<string, string> = {}): Promise<Status> => {
    const res = await t.http.get('/v3/memories/status/').query(query).set('Authorization', auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as Status;
  };
  const entities = async (t: TestRuntime, auth: string): Promise<Record<string, Entity>> => {
    const res = await t.http.get('/v1/entities/').set('Authorization', auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return Object.fromEntries((res.body.results as Entity[]).map((e) => [e.id, e]));
  };
  const add = async (t: TestRuntime, auth: string, owner: Record<string, string>, texts: string[]): Promise<Array<{ id: string }>> => {
    const res = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', auth)
      .send({ messages: texts.map((content) => ({ role: 'user', content })), ...owner, infer: false });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.results;
  };

  it('counts an add and a /v1/batch import as pending until they are indexed, per owner and per project', async () => {
    // not started: what is added stays pending until the workers start
    const t = await startRuntime({ start: false });
    try {
      await importThenIndex(t);
    } finally {
      await t.close();
    }
  });

  async function importThenIndex(t: TestRuntime): Promise<void> {
    const a = newProject(t);
    const b = newProject(t);
    const [authA, authB] = [token((await a).key), token((await b).key)];
    const [alice, bob, helper] = [unique('alice'), unique('bob'), unique('helper')];

    await add(t, authA, { user_id: alice, agent_id: helper }, ['I moved to Lisbon in May.', 'I work as a translator.']);
    const batch = await t.http
      .post('/v1/batch/')
      .set('Authorization', authA)
      .send({
        memories: [
          { user_id: alice, messages: ['My sister is called Inês.', 'I swim on Tuesdays.', 'I am learning the guitar.'].map((content) => ({ role: 'user', content })) },
          { user_id: bob, messages: ['I keep bees.', 'I drive an old van.'].map((content) => ({ role: 'user', content })) },
        ],
      });
    expect(batch.status, JSON.stringify(batch.body)).to.equal(201);
    // the same user name in another project is that project's own
    await add(t, authB, { user_id: alice }, ['I live in another project.']);

    expect(await status(t, authA, { user_id: alice })).to.deep.equal({ total: 5, pending: 5, indexed: 0, failed: 0 });
    expect(await status(t, authA, { user_id: bob })).to.deep.equal({ total: 2, pending: 2, indexed: 0, failed: 0 });
    expect(await status(t, authA, { user_id: alice, agent_id: helper })).to.deep.equal({ total: 2, pending: 2, indexed: 0, failed: 0 });
    expect(await status(t, authA, { agent_id: helper })).to.deep.equal({ total: 2, pending: 2, indexed: 0, failed: 0 });
    expect(await status(t, authA, { run_id: unique('nobody') })).to.deep.equal({ total: 0, pending: 0, indexed: 0, failed: 0 });
    expect(await status(t, authA)).to.deep.equal({ total: 7, pending: 7, indexed: 0, failed: 0 });
    expect(await status(t, authB, { user_id: alice })).to.deep.equal({ total: 1, pending: 1, indexed: 0, failed: 0 });
    const listed = await entities(t, authA);
    expect(listed[`user:${alice}`]).to.include({ total_memories: 5, pending_memories: 5, failed_memories: 0 });
    expect(listed[`agent:${helper}`]).to.include({ total_memories: 2, pending_memories: 2, failed_memories: 0 });

    await t.runtime.start();
    expect(await memoriesIndexed(t, authA, { user_id: alice }, 5)).to.deep.equal({ total: 5, pending: 0, indexed: 5, failed: 0 });
    expect(await memoriesIndexed(t, authA, {}, 7)).to.deep.equal({ total: 7, pending: 0, indexed: 7, failed: 0 });
    expect(await memoriesIndexed(t, authB, {}, 1)).to.deep.equal({ total: 1, pending: 0, indexed: 1, failed: 0 });
    // indexed means searchable
    const found = await t.http.post('/v3/memories/search/').set('Authorization', authA).send({ query: 'who keeps bees?', filters: { user_id: bob }, mode: 'dense', top_k: 5 });
    expect(found.status).to.equal(200);
    expect(found.body.results.map((m: { memory: string }) => m.memory)).to.include('I keep bees.');
    expect((await entities(t, authA))[`user:${alice}`]).to.include({ total_memories: 5, pending_memories: 0, failed_memories: 0 });
  }

  describe('on a running server', () => {
    let t: TestRuntime;
    before(async () => {
      t = await startRuntime();
    });
    after(async () => {
      await t.close();
    });

    it('counts the version an update superseded (indexed too) in the status, not in the entity total', async () => {
      const auth = token((await newProject(t)).key);
      const carol = unique('carol');
      const [memory] = await add(t, auth, { user_id: carol }, ['I drink my coffee black.', 'I run marathons.']);
      await memoriesIndexed(t, auth, { user_id: carol }, 2);
      const updated = await t.http.put(`/v1/memories/${memory?.id}/`).set('Authorization', auth).send({ text: 'I drink my coffee with oat milk.' });
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      expect(await memoriesIndexed(t, auth, { user_id: carol }, 3)).to.deep.equal({ total: 3, pending: 0, indexed: 3, failed: 0 });
      expect((await entities(t, auth))[`user:${carol}`]).to.include({ total_memories: 2, pending_memories: 0, failed_memories: 0 });
    });

    it('counts a memory whose indexing failed as failed, in the status and the entity list', async () => {
      const { key, projectId } = await newProject(t);
      const auth = token(key);
      const dave = unique('dave');
      await add(t, auth, { user_id: dave }, ['I play chess online.', 'I grow chillies on the balcony.']);
      await memoriesIndexed(t, auth, { user_id: dave }, 2);
      // what the indexer leaves when an input can never be embedded (a permanent error)
      await t.runtime.db('memories').where({ project_id: projectId, memory: 'I play chess online.' }).update({ embedding_status: 'failed', embedding_error: 'the model refused the input' });

      expect(await status(t, auth, { user_id: dave })).to.deep.equal({ total: 2, pending: 0, indexed: 1, failed: 1 });
      expect((await entities(t, auth))[`user:${dave}`]).to.include({ total_memories: 2, pending_memories: 0, failed_memories: 1 });
    });

    it('refuses an unknown or empty filter with a 400 that says what is wrong, and a call without a key with a 401', async () => {
      const auth = token((await newProject(t)).key);
      for (const query of [{ owner: 'alice' }, { user_id: '' }, { user_id: 'x'.repeat(256) }, { filters: '{"user_id":"alice"}' }]) {
        const res = await t.http.get('/v3/memories/status/').query(query).set('Authorization', auth);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.detail).to.be.a('string').and.not.equal('');
      }
      expect((await t.http.get('/v3/memories/status/').query({ user_id: 'alice' })).status).to.equal(401);
    });
  });
});
