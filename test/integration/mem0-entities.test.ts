import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Client } from '../mem0-client.js';

// mem0's entity list and delete (users(), deleteUsers()) and its batch update and delete, through
// mem0's own JavaScript client where it has the method, raw HTTP for what the client never sends.

interface Mem0Memory {
  id: string;
  memory: string;
}
interface Mem0Entity {
  id: string;
  name: string;
  type: string;
  totalMemories: number;
  createdAt: string;
  updatedAt: string;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
  history(id: string): Promise<Array<{ event: string; oldMemory: string | null; newMemory: string | null }>>;
  users(options?: { page?: number; pageSize?: number }): Promise<{ count: number; next: string | null; previous: string | null; results: Mem0Entity[] }>;
  deleteUsers(params?: { userId?: string; agentId?: string; appId?: string; runId?: string }): Promise<{ message: string }>;
  batchUpdate(memories: Array<{ memoryId: string; text: string }>): Promise<{ message: string }>;
  batchDelete(memories: string[]): Promise<{ message: string }>;
}

/** A project with its own key, served to mem0's client. */
interface Tenant {
  auth: string;
  client: Mem0Client;
  close(): Promise<void>;
}

describe(`mem0 entities (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  const tenants: Tenant[] = [];

  async function tenant(): Promise<Tenant> {
    const { key } = await newProject(t);
    const served = await mem0Client<Mem0Client>(t, key);
    const made = { auth: token(key), ...served };
    tenants.push(made);
    return made;
  }

  const add = (c: Mem0Client, texts: string[], owner: Record<string, string>) =>
    c.add(
      texts.map((content) => ({ role: 'user', content })),
      { ...owner, infer: false },
    );

  const search = async (auth: string, query: string, filters: Record<string, string>): Promise<Mem0Memory[]> => {
    const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query, filters, mode: 'dense', top_k: 10 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.results;
  };

  before(async () => {
    t = await startRuntime();
  });
  after(async () => {
    for (const c of tenants) await c.close();
    await t.close();
  });

  it('lists every user, agent, app and run with memories, with its count, to its own project only', async () => {
    const a = await tenant();
    const b = await tenant();
    const [ann, bob, helper, session, app] = [unique('ann'), unique('bob'), unique('helper'), unique('session'), unique('app')];
    await add(a.client, ['I grow tomatoes.', 'I keep chickens.'], { userId: ann, agentId: helper });
    await add(a.client, ['I cycle to work.'], { userId: ann });
    await add(a.client, ['I collect stamps.'], { userId: bob, runId: session, appId: app });
    await add(b.client, ['I am in the other project.'], { userId: unique('carl') });

    const listed = await a.client.users();
    expect(listed.count).to.equal(5);
    expect(listed.next).to.equal(null);
    const counts = Object.fromEntries(listed.results.map((e) => [`${e.type}:${e.name}`, e.totalMemories]));
    expect(counts).to.deep.equal({ [`user:${ann}`]: 3, [`user:${bob}`]: 1, [`agent:${helper}`]: 2, [`run:${session}`]: 1, [`app:${app}`]: 1 });
    expect(listed.results[0]).to.have.keys(['id', 'name', 'type', 'totalMemories', 'pendingMemories', 'failedMemories', 'owner', 'metadata', 'createdAt', 'updatedAt']);
    expect(Date.parse(listed.results[0]?.updatedAt as string)).to.be.greaterThan(0);

    const paged = await a.client.users({ page: 2, pageSize: 2 });
    expect(paged.count).to.equal(5);
    expect(paged.results).to.have.length(2);
    expect(paged.next).to.match(/page=3&page_size=2$/);
    expect(paged.previous).to.match(/page=1&page_size=2$/);

    const other = await b.client.users();
    expect(other.count).to.equal(1);
    expect(other.results.map((e) => e.name)).to.not.include(ann);
  });

  it("deletes one entity's memories and vectors, unsearchable after, leaving the rest; 404 for an unknown type or entity", async () => {
    const a = await tenant();
    const b = await tenant();
    const [dora, eve] = [unique('dora'), unique('eve')];
    const doras = await add(a.client, ['I play the cello in an orchestra.', 'My dog is called Biscuit.'], { userId: dora });
    await add(a.client, ['I play the trumpet in a jazz band.'], { userId: eve });
    await waitFor(async () => ((await search(a.auth, 'which instrument does the user play?', { user_id: dora })).length === 2 ? true : null), {
      timeoutMs: 60_000,
      message: "dora's memories searchable",
    });

    // another project's key cannot delete the entity, nor learn of it
    const foreign = await t.http.delete(`/v2/entities/user/${dora}/`).set('Authorization', b.auth);
    expect(foreign.status).to.equal(404);
    expect((await a.client.users()).count).to.equal(2);
    // B's user of the same name is B's own: deleting A's leaves it
    await add(b.client, ['I am a different Dora.'], { userId: dora });

    expect((await a.client.deleteUsers({ userId: dora })).message).to.equal('Entity deleted successfully.');
    expect((await search(a.auth, 'which instrument does the user play?', { user_id: dora })).length).to.equal(0);
    expect((await search(a.auth, 'which instrument does the user play?', { user_id: eve })).map((m) => m.memory)).to.deep.equal(['I play the trumpet in a jazz band.']);
    const listed = await a.client.users();
    expect(listed.results.map((e) => `${e.type}:${e.name}`)).to.deep.equal([`user:${eve}`]);
    const history = await a.client.history((doras.results[0] as Mem0Memory).id);
    expect(history.map((h) => h.event)).to.deep.equal(['ADD', 'DELETE']);
    expect(history[1]).to.include({ oldMemory: 'I play the cello in an orchestra.', newMemory: null });
    // the vectors are removed through the outbox: nothing left to relay once it is done
    await waitFor(async () => ((await t.runtime.repositories.outbox.countPending()) === 0 ? true : null), { timeoutMs: 30_000, message: 'outbox relayed' });

    const unknownType = await t.http.delete(`/v2/entities/team/${eve}/`).set('Authorization', a.auth);
    expect(unknownType.status).to.equal(404);
    expect(unknownType.body.code).to.equal('entity_type_not_found');
    const gone = await t.http.delete(`/v2/entities/user/${dora}`).set('Authorization', a.auth);
    expect(gone.status).to.equal(404);
    expect(gone.body.code).to.equal('entity_not_found');

    // with no entity named, the client deletes every entity users() lists
    await add(a.client, ['I bake bread.'], { agentId: unique('baker') });
    expect((await a.client.deleteUsers()).message).to.equal('All users, agents, apps and runs deleted.');
    expect((await a.client.users()).count).to.equal(0);
    const others = await b.client.users();
    expect(others.results.map((e) => [e.name, e.totalMemories]), "the other project's entities stay").to.deep.equal([[dora, 1]]);
  });
});

describe(`mem0 batch update and delete (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let a: Tenant;
  let b: Tenant;

  const put = (auth: string, body: unknown) => t.http.put('/v1/batch/').set('Authorization', auth).send(body as object);
  const del = (auth: string, body: unknown) => t.http.delete('/v1/batch/').set('Authorization', auth).send(body as object);
  const texts = async (auth: string, user: string): Promise<string[]> => {
    const res = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id: user } });
    return res.body.results.map((m: Mem0Memory) => m.memory).sort();
  };
  const paths = (res: { body: { errors?: Array<{ path: string }> } }) => (res.body.errors ?? []).map((e) => e.path);

  before(async () => {
    t = await startRuntime();
    const served = async (): Promise<Tenant> => {
      const { key } = await newProject(t);
      return { auth: token(key), ...(await mem0Client<Mem0Client>(t, key)) };
    };
    a = await served();
    b = await served();
  });
  after(async () => {
    await a.close();
    await b.close();
    await t.close();
  });

  it('updates many memories in one request, each re-indexed and with its history, and deletes many', async () => {
    const user = unique('fay');
    const added = await a.client.add(
      ['I live in Oslo.', 'I work as a nurse.', 'I have two cats.'].map((content) => ({ role: 'user', content })),
      { userId: user, infer: false },
    );
    const [oslo, nurse, cats] = added.results as [Mem0Memory, Mem0Memory, Mem0Memory];

    const updated = await a.client.batchUpdate([
      { memoryId: oslo.id, text: 'I live in Bergen.' },
      { memoryId: nurse.id, text: 'I work as a surgeon.' },
    ]);
    expect(updated.message).to.equal('Successfully updated 2 memories');
    expect((await a.client.get(oslo.id)).memory).to.equal('I live in Bergen.');
    expect((await a.client.history(nurse.id)).map((h) => [h.event, h.newMemory])).to.deep.equal([
      ['ADD', 'I work as a nurse.'],
      ['UPDATE', 'I work as a surgeon.'],
    ]);
    const found = await waitFor(
      async () => {
        const res = await t.http.post('/v3/memories/search/').set('Authorization', a.auth).send({ query: 'which city does the user live in?', filters: { user_id: user }, mode: 'dense', top_k: 3 });
        const all = await t.http.post('/v3/memories/').set('Authorization', a.auth).send({ filters: { user_id: user } });
        return all.body.results.every((m: { embedding_status: string }) => m.embedding_status === 'indexed') && res.body.results.length === 3 ? res.body.results : null;
      },
      { timeoutMs: 60_000, message: 'updated memories re-indexed' },
    );
    expect(found[0].memory).to.equal('I live in Bergen.');

    // metadata alone, as mem0's Python client may send it
    const meta = await put(a.auth, { memories: [{ memory_id: cats.id, metadata: { pets: 2 } }] });
    expect(meta.status, JSON.stringify(meta.body)).to.equal(200);
    expect((await t.http.get(`/v1/memories/${cats.id}/`).set('Authorization', a.auth)).body).to.deep.include({ memory: 'I have two cats.', metadata: { pets: 2 } });

    expect((await a.client.batchDelete([oslo.id, cats.id])).message).to.equal('Successfully deleted 2 memories');
    expect(await texts(a.auth, user)).to.deep.equal(['I work as a surgeon.']);
    expect((await t.http.get(`/v1/memories/${oslo.id}/history/`).set('Authorization', a.auth)).body.map((h: { event: string }) => h.event)).to.deep.equal(['ADD', 'UPDATE', 'DELETE']);
    await waitFor(
      async () => {
        const res = await t.http.post('/v3/memories/search/').set('Authorization', a.auth).send({ query: 'which city does the user live in?', filters: { user_id: user }, mode: 'dense', top_k: 3 });
        return res.body.results.length === 1 ? true : null;
      },
      { message: 'deleted memories unsearchable' },
    );
  });

  it('refuses a batch with a bad item, naming it by index, and changes nothing', async () => {
    const user = unique('gus');
    const mine = (await a.client.add([{ role: 'user', content: 'I sail.' }, { role: 'user', content: 'I knit.' }], { userId: user, infer: false })).results.map((m) => m.id);
    const theirs = (await b.client.add([{ role: 'user', content: 'I am B.' }], { userId: unique('hal'), infer: false })).results[0]?.id as string;
    const [sail, knit] = mine as [string, string];

    const updates: Array<[unknown, string[]]> = [
      [[{ memory_id: sail, text: 'I sail boats.' }, { memory_id: knit, text: 'I knit socks.' }, { memory_id: 'no-such-memory', text: 'x' }], ['/memories/2/memory_id']],
      [[{ memory_id: sail, text: 'I sail boats.' }, { memory_id: theirs, text: 'mine now' }], ['/memories/1/memory_id']],
      [[{ memory_id: sail, text: 'I sail boats.' }, { memory_id: sail, text: 'I sail ships.' }], ['/memories/1/memory_id']],
      [[{ memory_id: sail, text: 'I sail boats.' }, { memory_id: knit, text: 'I knit.', colour: 'red' }], ['/memories/1/colour']],
      [[{ memory_id: sail, text: 'I sail boats.' }, { text: 'whose?', metadata: {} }], ['/memories/1/memory_id']],
      [[{ memory_id: knit, text: '   ' }], ['/memories/0/text']],
    ];
    for (const [memories, expected] of updates) {
      const res = await put(a.auth, { memories });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(paths(res)).to.deep.equal(expected);
    }
    const deletes: Array<[unknown, string[]]> = [
      [[{ memory_id: sail }, { memory_id: 'no-such-memory' }], ['/memories/1/memory_id']],
      [[{ memory_id: theirs }, { memory_id: knit }], ['/memories/0/memory_id']],
      [[{ memory_id: sail }, { id: knit }], ['/memories/1/id', '/memories/1/memory_id']],
    ];
    for (const [memories, expected] of deletes) {
      const res = await del(a.auth, { memories });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(paths(res)).to.have.members(expected);
    }

    // project B's key cannot touch A's memories, and learns nothing of them
    const foreignUpdate = await put(b.auth, { memories: [{ memory_id: sail, text: 'hijacked' }] });
    expect(foreignUpdate.status).to.equal(400);
    expect(foreignUpdate.body.code).to.equal('validation_failed');
    const foreignDelete = await del(b.auth, { memories: [{ memory_id: sail }, { memory_id: knit }] });
    expect(foreignDelete.status).to.equal(400);
    expect(paths(foreignDelete)).to.deep.equal(['/memories/0/memory_id', '/memories/1/memory_id']);

    expect(await texts(a.auth, user)).to.deep.equal(['I knit.', 'I sail.']);
    expect((await t.http.get(`/v1/memories/${sail}/history/`).set('Authorization', a.auth)).body).to.have.length(1);
    expect((await t.http.get(`/v1/memories/${theirs}/`).set('Authorization', b.auth)).body.memory).to.equal('I am B.');
  });

  it('refuses more than 1000 items and an empty batch', async () => {
    const user = unique('ida');
    const id = (await a.client.add([{ role: 'user', content: 'I swim.' }], { userId: user, infer: false })).results[0]?.id as string;
    const over = Array.from({ length: 1001 }, () => ({ memory_id: id, text: 'I swim daily.' }));
    const tooMany = await put(a.auth, { memories: over });
    expect(tooMany.status, JSON.stringify(tooMany.body).slice(0, 300)).to.equal(400);
    expect(paths(tooMany)).to.include('/memories');
    const tooManyDeletes = await del(a.auth, { memories: over.map(({ memory_id }) => ({ memory_id })) });
    expect(tooManyDeletes.status).to.equal(400);
    expect((await put(a.auth, { memories: [] })).status).to.equal(400);
    expect((await del(a.auth, {})).status).to.equal(400);
    expect(await texts(a.auth, user)).to.deep.equal(['I swim.']);
  });
});
