import { expect } from 'chai';
import { memoriesIndexed, newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Client } from '../mem0-client.js';
import { fakeProvider } from '../provider-server.js';

// mem0's own JavaScript client (npm mem0ai) against Cairn: the wire compatibility users rely on.

interface Mem0Memory {
  id: string;
  memory: string;
  userId?: string;
  metadata?: Record<string, unknown>;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  search(query: string, options: Record<string, unknown>): Promise<{ results: Array<Mem0Memory & { score: number }> }>;
  getAll(options: Record<string, unknown>): Promise<{ count: number; results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
  update(id: string, options: Record<string, unknown>): Promise<Mem0Memory>;
  history(id: string): Promise<Array<{ event: string; oldMemory: string | null; newMemory: string | null; memoryId: string }>>;
  delete(id: string): Promise<{ message: string }>;
  deleteAll(options: Record<string, unknown>): Promise<{ message: string }>;
  ping(): Promise<void>;
}

describe(`mem0 compatibility (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let stopServing: () => Promise<void>;
  let key: string;
  let client: Mem0Client;

  before(async () => {
    t = await startRuntime();
    key = (await newProject(t)).key;
    ({ client, close: stopServing } = await mem0Client<Mem0Client>(t, key));
  });
  after(async () => {
    await stopServing();
    await t.close();
  });

  it("round-trips mem0's official client: add, search, list, get, update, history, delete", async () => {
    const user = unique('alice');
    await client.ping();
    const added = await client.add(
      [
        { role: 'user', content: 'I drink green tea every morning.' },
        { role: 'user', content: 'My sister lives in Lisbon.' },
      ],
      { userId: user, infer: false, metadata: { source: 'chat' } },
    );
    expect(added.results.map((r) => r.memory)).to.deep.equal(['I drink green tea every morning.', 'My sister lives in Lisbon.']);
    const tea = added.results[0] as Mem0Memory;
    await memoriesIndexed(t, token(key), { user_id: user }, 2);

    const found = await waitFor(
      async () => {
        const res = await client.search('what does the user drink in the morning?', { filters: { user_id: user }, topK: 2 });
        return res.results.length === 2 ? res : null;
      },
      { timeoutMs: 30_000, message: 'memories searchable' },
    );
    expect(found.results[0]?.id).to.equal(tea.id);
    expect(found.results[0]?.score).to.be.greaterThan(found.results[1]?.score as number);

    const all = await client.getAll({ filters: { user_id: user } });
    expect(all.count).to.equal(2);

    const got = await client.get(tea.id);
    expect(got).to.include({ id: tea.id, memory: 'I drink green tea every morning.', userId: user });
    expect(got.metadata).to.deep.equal({ source: 'chat' });

    const updated = await client.update(tea.id, { text: 'I drink oolong tea every morning.' });
    expect(updated.memory).to.equal('I drink oolong tea every morning.');
    const history = await client.history(tea.id);
    expect(history.map((h) => h.event)).to.deep.equal(['ADD', 'UPDATE']);
    expect(history[1]).to.include({ oldMemory: 'I drink green tea every morning.', newMemory: 'I drink oolong tea every morning.', memoryId: tea.id });

    expect((await client.delete(tea.id)).message).to.match(/deleted/);
    let missing: unknown;
    try {
      await client.get(tea.id);
    } catch (err) {
      missing = err;
    }
    expect((missing as { constructor: { name: string } }).constructor.name).to.equal('MemoryNotFoundError');

    expect((await client.deleteAll({ userId: user })).message).to.match(/^1 memories deleted/);
    expect((await client.getAll({ filters: { user_id: user } })).count).to.equal(0);
  });

  it('infers statements from user messages, needs an entity, and shows typed records as memories', async () => {
    const auth = token(key);
    const user = unique('bo');
    const inferred = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', auth)
      .send({
        messages: [
          { role: 'user', content: 'Hi! I am allergic to peanuts. Can you suggest a snack? I prefer salty food.' },
          { role: 'assistant', content: 'Try salted almonds.' },
        ],
        user_id: user,
      });
    expect(inferred.status, JSON.stringify(inferred.body)).to.equal(200);
    expect(inferred.body.results.map((r: { memory: string }) => r.memory)).to.deep.equal(['I am allergic to peanuts', 'I prefer salty food']);
    expect(inferred.body.results[0].event).to.equal('ADD');
    const again = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', auth)
      .send({ messages: [{ role: 'user', content: 'I PREFER SALTY FOOD. I work at Acme.' }], user_id: user });
    expect(
      again.body.results.map((r: { event: string; memory: string }) => [r.event, r.memory]),
      'a fact the user already has is not stored twice',
    ).to.deep.equal([
      ['NOOP', 'I prefer salty food'],
      ['ADD', 'I work at Acme'],
    ]);

    const anonymous = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'x' }] });
    expect(anonymous.status).to.equal(400);
    const noEntity = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { schema: 'x' } });
    expect(noEntity.status).to.equal(400);
    expect((await t.http.delete('/v1/memories/').set('Authorization', auth)).status).to.equal(400);

    const schema = unique('note').toLowerCase();
    await t.http.post('/v1/schemas').set('Authorization', auth).send({ name: schema, json_schema: { type: 'object', properties: { text: { type: 'string' } } } });
    const rec = await t.http.post(`/v1/records/${schema}`).set('Authorization', auth).send({ record: { text: 'hello' }, user_id: user });
    const asMemory = await t.http.get(`/v1/memories/${rec.body.id}/`).set('Authorization', auth);
    expect(asMemory.body.metadata).to.deep.include({ schema, schema_version: 1, record_id: rec.body.id });
    const page = await t.http.post('/v3/memories/?page=1&page_size=2').set('Authorization', auth).send({ filters: { user_id: user } });
    expect(page.body.count).to.equal(4);
    expect(page.body.results).to.have.length(2);
    expect(page.body.next).to.match(/page=2/);
    const typed = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { AND: [{ user_id: user }, { schema }] } });
    expect(typed.body.results.map((r: { id: string }) => r.id)).to.deep.equal([rec.body.id]);
    const refused = await t.http.put(`/v1/memories/${rec.body.id}/`).set('Authorization', auth).send({ text: 'changed' });
    expect(refused.status).to.equal(400);
    expect(refused.body.detail).to.match(/PATCH \/v1\/records/);
  });

  it('infers facts with the language model MEMORY_MODEL names, through the queue, and makes them searchable', async () => {
    const model = await fakeProvider((request) => {
      const transcript = (request.body.messages as Array<{ content: string }>)[1]?.content ?? '';
      const facts = transcript.includes('vegetarian') ? ['Is vegetarian', 'Lives in Lyon'] : [];
      return {
        status: 200,
        body: { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ facts }) }, finish_reason: 'stop' }] },
      };
    });
    const withModel = await startRuntime({ env: { MEMORY_MODEL: 'openai/facts-model', OPENAI_BASE_URL: model.url } });
    try {
      const auth = token((await newProject(withModel)).key);
      const user = unique('vee');
      const messages = [
        { role: 'user', content: "I'm vegetarian and I moved to Lyon last year." },
        { role: 'assistant', content: 'Good to know!' },
      ];
      const added = await withModel.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages, user_id: user });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      expect(added.body.results.map((r: { memory: string }) => r.memory)).to.deep.equal(['Is vegetarian', 'Lives in Lyon']);
      expect(model.received[0]?.body.model).to.equal('facts-model');

      const repeated = await withModel.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages, user_id: user });
      expect(repeated.body.results.map((r: { event: string; id: string }) => [r.event, r.id])).to.deep.equal(added.body.results.map((r: { id: string }) => ['NOOP', r.id]));
      await memoriesIndexed(withModel, auth, { user_id: user }, 2);

      const hits = await waitFor(async () => {
        const r = await withModel.http.post('/v3/memories/search/').set('Authorization', auth).send({ query: 'what food does the user eat', filters: { user_id: user } });
        return r.body.results?.length === 2 ? r.body.results : null;
      });
      expect(hits[0].memory).to.equal('Is vegetarian');

      await model.close();
      const down = await withModel.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I play chess.' }], user_id: user });
      expect(down.status, 'no language model, no silent loss: the caller is told to retry').to.equal(503);
      expect((await withModel.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id: user } })).body.count).to.equal(2);
    } finally {
      await model.close().catch(() => undefined);
      await withModel.close();
    }
  });
});
