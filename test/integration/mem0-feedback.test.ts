import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';
import { failure, mem0Client } from '../mem0-client.js';

// mem0's feedback on memories, its summary of an entity's memories, and the platform's organisation
// and project paths (which Cairn answers with a 404 that says so): through mem0's own JavaScript
// client where it has the method, raw HTTP for validation and other projects.

interface Mem0Memory {
  id: string;
  memory: string;
  feedback?: string | null;
  feedbackReason?: string | null;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
  getAll(options: Record<string, unknown>): Promise<{ count: number; results: Mem0Memory[] }>;
  history(id: string): Promise<Array<{ event: string }>>;
  feedback(data: { memoryId: string; feedback?: string | null; feedbackReason?: string | null }): Promise<{ message: string; feedback?: string | null }>;
  getProject(options: { fields?: string[] }): Promise<unknown>;
  updateProject(prompts: Record<string, unknown>): Promise<unknown>;
}

/** A runtime with two projects and mem0's client on the first, for the suite it is called in. */
function serve(): { t: TestRuntime; key: string; otherKey: string; client: Mem0Client; remember(user: string, content: string, timestamp?: number): Promise<Mem0Memory> } {
  const s = {} as ReturnType<typeof serve>;
  let stopServing: () => Promise<void>;
  before(async () => {
    s.t = await startRuntime();
    s.key = (await newProject(s.t)).key;
    s.otherKey = (await newProject(s.t)).key;
    ({ client: s.client, close: stopServing } = await mem0Client<Mem0Client>(s.t, s.key));
    s.remember = async (user, content, timestamp) =>
      (await s.client.add([{ role: 'user', content }], { userId: user, infer: false, ...(timestamp ? { timestamp } : {}) })).results[0] as Mem0Memory;
  });
  after(async () => {
    await stopServing();
    await s.t.close();
  });
  return s;
}

describe(`mem0 feedback (${PROFILE})`, function () {
  this.timeout(60_000);
  const s = serve();
  it("is stored through mem0's client, shown on the memory and in lists, replaced by the next call and withdrawn with null", async () => {
    const { t, key, client, remember } = s;
    const user = unique('fern');
    const memory = await remember(user, 'I live in Lisbon.');
    const before = (await t.http.get(`/v1/memories/${memory.id}/`).set('Authorization', token(key))).body;
    expect(before).to.include({ feedback: null, feedback_reason: null });

    const given = await client.feedback({ memoryId: memory.id, feedback: 'NEGATIVE', feedbackReason: 'I moved to Porto' });
    expect(given).to.include({ feedback: 'NEGATIVE' });
    expect(given.message).to.be.a('string');
    expect(await client.get(memory.id)).to.include({ id: memory.id, memory: 'I live in Lisbon.', feedback: 'NEGATIVE', feedbackReason: 'I moved to Porto' });
    expect((await client.getAll({ filters: { user_id: user } })).results[0]).to.include({ feedback: 'NEGATIVE', feedbackReason: 'I moved to Porto' });
    const raw = (await t.http.get(`/v1/memories/${memory.id}/`).set('Authorization', token(key))).body;
    expect(raw).to.include({ feedback: 'NEGATIVE', feedback_reason: 'I moved to Porto', updated_at: before.updated_at, memory: before.memory });
    expect((await client.history(memory.id)).map((h) => h.event), 'feedback is not a change of the memory').to.deep.equal(['ADD']);

    await client.feedback({ memoryId: memory.id, feedback: 'POSITIVE' });
    expect(await client.get(memory.id)).to.include({ feedback: 'POSITIVE', feedbackReason: null });
    // mem0's Python client sends both fields, null to withdraw
    const withdrawn = await t.http.post('/v1/feedback/').set('Authorization', token(key)).send({ memory_id: memory.id, feedback: null, feedback_reason: null });
    expect(withdrawn.status, JSON.stringify(withdrawn.body)).to.equal(200);
    expect(withdrawn.body).to.include({ id: memory.id, feedback: null, feedback_reason: null });
    expect(await client.get(memory.id)).to.include({ feedback: null, feedbackReason: null });
  });

  it("refuses a bad value (400) and an unknown or another project's memory (404), changing nothing", async () => {
    const { t, key, otherKey, client, remember } = s;
    const memory = await remember(unique('gus'), 'I play the cello.');
    await client.feedback({ memoryId: memory.id, feedback: 'VERY_NEGATIVE', feedbackReason: 'Not me' });
    const send = (body: unknown, k = key) => t.http.post('/v1/feedback/').set('Authorization', token(k)).send(body as object);

    for (const body of [
      { memory_id: memory.id, feedback: 'positive' },
      { memory_id: memory.id, feedback: 'MEH' },
      { memory_id: memory.id, feedback: 1 },
      { memory_id: memory.id, feedback: 'POSITIVE', feedback_reason: 42 },
      { memory_id: memory.id, feedback: 'POSITIVE', score: 5 },
      { feedback: 'POSITIVE' },
    ]) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code, JSON.stringify(body)).to.be.a('string');
      expect(res.body.detail, JSON.stringify(body)).to.be.a('string');
    }
    const unknown = await send({ memory_id: '00000000-0000-0000-0000-000000000000', feedback: 'POSITIVE' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('memory_not_found');
    const otherProject = await send({ memory_id: memory.id, feedback: 'POSITIVE', feedback_reason: 'not mine' }, otherKey);
    expect(otherProject.status).to.equal(404);
    expect(otherProject.body).to.include({ code: 'memory_not_found' });

    expect(await client.get(memory.id), 'nothing changed').to.include({ feedback: 'VERY_NEGATIVE', feedbackReason: 'Not me' });
  });
});

describe(`mem0 summary (${PROFILE})`, function () {
  this.timeout(60_000);
  const s = serve();
  it("summarises one entity's memories newest first, without those marked VERY_NEGATIVE, as mem0's Python client asks (POST /v1/summary/)", async () => {
    const { t, key, otherKey, client, remember } = s;
    const user = unique('hana');
    const now = Math.floor(Date.now() / 1000);
    await remember(user, 'I work at Acme', now - 300);
    const wrong = await remember(user, 'I hate coffee', now - 200);
    await remember(user, 'I moved to Porto', now - 100);
    await remember(unique('ivo'), 'I collect stamps');
    const summarise = (body: object, k = key) => t.http.post('/v1/summary/').set('Authorization', token(k)).send(body);

    const all = await summarise({ filters: { user_id: user } });
    expect(all.status, JSON.stringify(all.body)).to.equal(200);
    expect(all.body).to.deep.equal({ summary: 'I moved to Porto. I hate coffee. I work at Acme.', memory_count: 3 });

    await client.feedback({ memoryId: wrong.id, feedback: 'VERY_NEGATIVE', feedbackReason: 'I love coffee' });
    expect((await summarise({ filters: { AND: [{ user_id: user }] } })).body).to.deep.equal({ summary: 'I moved to Porto. I work at Acme.', memory_count: 2 });

    expect((await summarise({ filters: { user_id: unique('nobody') } })).body).to.deep.equal({ summary: '', memory_count: 0 });
    expect((await summarise({ filters: { user_id: user } }, otherKey)).body, "another project's memories are not read").to.deep.equal({ summary: '', memory_count: 0 });

    // the Python client sends {} when given no filters
    const none = await summarise({});
    expect(none.status).to.equal(400);
    expect(none.body.code).to.equal('entity_required');
    expect((await summarise({ filters: { user_id: user }, format: 'long' })).status).to.equal(400);
    expect((await summarise({ filters: { user_id: user, colour: { eq: 'red' } } })).status).to.equal(400);
  });
});

describe(`mem0 platform paths (${PROFILE})`, function () {
  this.timeout(60_000);
  const s = serve();
  it("answer organisation and project management with a 404 saying Cairn does not have it, through mem0's client too", async () => {
    const { t, key, client } = s;
    const ping = await t.http.get('/v1/ping/').set('Authorization', token(key));
    expect(ping.body.org_id).to.be.a('string');

    const viaClient = await failure(client.getProject({ fields: ['custom_instructions'] }));
    expect(viaClient.constructor.name).to.equal('MemoryNotFoundError');
    expect(viaClient.message).to.match(/does not implement mem0's organization and project management/);
    const update = await failure(client.updateProject({ customInstructions: 'Be brief' }));
    expect(update.message).to.match(/not_supported/);

    const org = ping.body.org_id as string;
    const project = ping.body.project_id as string;
    for (const [method, path] of [
      ['get', `/api/v1/orgs/organizations/${org}/projects/${project}/?fields=custom_categories`],
      ['post', `/api/v1/orgs/organizations/${org}/projects/`],
      ['delete', `/api/v1/orgs/organizations/${org}/projects/${project}/`],
      ['get', `/api/v1/orgs/organizations/${org}/projects/${project}/members/`],
      ['put', `/api/v1/orgs/organizations/${org}/projects/${project}/members/`],
      ['delete', `/api/v1/orgs/organizations/${org}/projects/${project}/members/?email=a%40b.c`],
      ['get', '/api/v1/orgs/organizations/'],
    ] as const) {
      const res = await t.http[method](path).set('Authorization', token(key)).send({ name: 'x', email: 'a@b.c', role: 'READER' });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.code, `${method} ${path}`).to.equal('not_supported');
      expect(res.body.detail, `${method} ${path}`).to.match(/^Cairn does not implement mem0's organization and project management/);
    }
    expect((await t.http.get(`/api/v1/orgs/organizations/${org}/projects/${project}/`)).status, 'still needs a key').to.equal(401);
  });
});
