import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

describe(`typed records and memory search (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  const post = (path: string, body: unknown, key = auth) => t.http.post(path).set('Authorization', key).send(body as object);
  const get = (path: string, key = auth) => t.http.get(path).set('Authorization', key);
  const patch = (path: string, body: unknown) => t.http.patch(path).set('Authorization', auth).send(body as object);

  const LEAD = {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'Full name' },
      email: { type: 'string' },
      seats: { type: 'integer' },
      budget: { type: 'number' },
      stage: { type: 'string', enum: ['new', 'qualified', 'won'] },
      tags: { type: 'array', items: { type: 'string' } },
      active: { type: 'boolean' },
    },
    required: ['name'],
  };

  async function schema(json_schema: unknown = LEAD, extra: Record<string, unknown> = {}): Promise<string> {
    const name = unique('lead').toLowerCase();
    const res = await post('/v1/schemas', { name, json_schema, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return name;
  }

  const indexed = (schemaName: string, id: string) =>
    waitFor(
      async () => {
        const res = await get(`/v1/records/${schemaName}/${id}`);
        return res.body.embedding_status === 'indexed' ? res.body : null;
      },
      { timeoutMs: 30_000, message: `record ${id} indexed` },
    );

  before(async () => {
    t = await startRuntime();
    auth = token((await newProject(t)).key);
  });
  after(() => t.close());

  it('stores a valid record pinned to the latest version, indexes it, and finds it by meaning', async () => {
    const name = await schema(LEAD, { embed_template: '{{name}} is a {{stage}} lead. {{tags}}' });
    const res = await post(`/v1/records/${name}`, {
      record: { name: 'Ada Lovelace', stage: 'qualified', seats: 12, budget: 1200.5, tags: ['analytical engines', 'poetry'], active: true },
      user_id: 'alice',
      agent_id: 'sales-bot',
      metadata: { source: 'crm' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ schema: name, schema_version: 1, user_id: 'alice', agent_id: 'sales-bot', embedding_status: 'pending' });
    expect(res.body.record).to.deep.equal({ name: 'Ada Lovelace', stage: 'qualified', seats: 12, budget: 1200.5, tags: ['analytical engines', 'poetry'], active: true });
    const done = await indexed(name, res.body.id);
    expect(done.embedding_status).to.equal('indexed');

    const search = await post('/v3/memories/search/', { query: 'who is interested in computing machines?', filters: { user_id: 'alice' } });
    expect(search.status, JSON.stringify(search.body)).to.equal(200);
    const hit = search.body.results.find((r: { id: string }) => r.id === res.body.id);
    expect(hit, JSON.stringify(search.body)).to.exist;
    expect(hit.memory).to.equal('Ada Lovelace is a qualified lead. analytical engines, poetry');
    expect(hit.user_id).to.equal('alice');
    expect(hit.metadata).to.deep.include({ source: 'crm', schema: name, schema_version: 1, record_id: res.body.id });
    expect(hit.metadata.record.name).to.equal('Ada Lovelace');
    expect(hit.score).to.be.a('number');
    expect(hit.created_at).to.match(/Z$/);
  });

  it('rejects records that break the schema, naming every problem, and stores nothing', async () => {
    const name = await schema();
    const cases: Array<[unknown, string[]]> = [
      [{ name: 'x', phone: '123' }, ['/record/phone']],
      [{ name: 'x', seats: 1.5 }, ['/record/seats']],
      [{ name: 'x', budget: 'lots' }, ['/record/budget']],
      [{ name: 'x', stage: 'lost' }, ['/record/stage']],
      [{ name: 'x', tags: ['a', 2] }, ['/record/tags/1']],
      [{ email: 'a@b.c' }, ['/record/name']],
      [{ seats: 'two', stage: 'nope' }, ['/record/name', '/record/seats', '/record/stage']],
    ];
    for (const [record, paths] of cases) {
      const res = await post(`/v1/records/${name}`, { record, user_id: 'u1' });
      expect(res.status, JSON.stringify(record)).to.equal(400);
      expect(res.body.detail).to.be.a('string');
      const found = (res.body.errors ?? []).map((e: { path: string }) => e.path);
      for (const p of paths) expect(found, JSON.stringify(res.body)).to.include(p);
    }
    expect((await post(`/v1/records/${name}`, { record: { name: 'x' }, user_id: 'u1', extra: 1 })).status).to.equal(400);
    expect((await post('/v1/records/no-such-schema', { record: { name: 'x' } })).status).to.equal(404);
    expect((await get(`/v1/records/${name}`)).body.records).to.deep.equal([]);
  });

  it('merge-patches a record against the version it is pinned to, even after a newer version made a field required', async () => {
    const name = await schema();
    const created = await post(`/v1/records/${name}`, { record: { name: 'Grace', stage: 'new', tags: ['navy'] }, user_id: 'u2' });
    const v2 = await post(`/v1/schemas/${name}`, { json_schema: { ...LEAD, required: ['name', 'email'] } });
    expect(v2.status, JSON.stringify(v2.body)).to.equal(201);
    expect(v2.body.version).to.equal(2);

    // pinned to v1: email is still optional for this record
    const patched = await t.http
      .patch(`/v1/records/${name}/${created.body.id}`)
      .set('Authorization', auth)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ stage: 'won', tags: null, seats: 3 }));
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.schema_version).to.equal(1);
    expect(patched.body.record).to.deep.equal({ name: 'Grace', stage: 'won', seats: 3 });
    expect(patched.body.embedding_status).to.equal('pending');

    // a new record is validated against v2
    const fresh = await post(`/v1/records/${name}`, { record: { name: 'Linus' }, user_id: 'u2' });
    expect(fresh.status).to.equal(400);
    expect(fresh.body.errors.map((e: { path: string }) => e.path)).to.include('/record/email');

    // a patch whose result breaks v1 is refused and changes nothing
    const bad = await patch(`/v1/records/${name}/${created.body.id}`, { name: null, stage: 'lost' });
    expect(bad.status).to.equal(400);
    const paths = bad.body.errors.map((e: { path: string }) => e.path);
    expect(paths).to.include.members(['/record/name', '/record/stage']);
    expect((await get(`/v1/records/${name}/${created.body.id}`)).body.record).to.deep.equal({ name: 'Grace', stage: 'won', seats: 3 });
    const done = await indexed(name, created.body.id);
    expect(done.record.stage).to.equal('won');
  });

  it('lists by entity newest first with paging, and deletes a record with its vector', async () => {
    const name = await schema(LEAD, { embed_template: '{{name}}' });
    const ids: string[] = [];
    for (const who of ['Ann', 'Bob', 'Cy']) ids.push((await post(`/v1/records/${name}`, { record: { name: who }, user_id: 'lister' })).body.id);
    await post(`/v1/records/${name}`, { record: { name: 'Other' }, user_id: 'someone-else' });
    const page = await get(`/v1/records/${name}?user_id=lister&limit=2`);
    expect(page.body.records.map((r: { record: { name: string } }) => r.record.name)).to.deep.equal(['Cy', 'Bob']);
    const next = await get(`/v1/records/${name}?user_id=lister&limit=2&offset=2`);
    expect(next.body.records.map((r: { record: { name: string } }) => r.record.name)).to.deep.equal(['Ann']);

    for (const id of ids) await indexed(name, id);
    expect((await t.http.delete(`/v1/records/${name}/${ids[2]}`).set('Authorization', auth)).status).to.equal(204);
    expect((await get(`/v1/records/${name}/${ids[2]}`)).status).to.equal(404);
    const projectId = ((await t.runtime.apiKeys.authenticate(auth.slice('Token '.length))) as { projectId: string }).projectId;
    const spec = await t.runtime.memoryIndexer.collection(projectId);
    await waitFor(async () => (await t.runtime.vectors.fetch(spec, projectId, [ids[2] as string])).length === 0, { timeoutMs: 30_000, message: 'vector removed' });
    const search = await post('/v3/memories/search', { query: 'Cy', filters: { AND: [{ user_id: 'lister' }, { schema: name }] }, top_k: 10 });
    expect(search.body.results.map((r: { id: string }) => r.id)).to.not.include(ids[2]);
    expect(search.body.results).to.have.length(2);
  });

  it('search needs an entity id, honours schema and threshold filters, and rejects unknown filter keys', async () => {
    const name = await schema({ type: 'object', properties: { note: { type: 'string' } } }, { embed_template: '{{note}}' });
    const cat = (await post(`/v1/records/${name}`, { record: { note: 'The cat sat on the windowsill watching birds.' }, user_id: 'bea' })).body.id;
    const money = (await post(`/v1/records/${name}`, { record: { note: 'Quarterly revenue grew 12 percent.' }, user_id: 'bea' })).body.id;
    await indexed(name, cat);
    await indexed(name, money);

    const res = await post('/v3/memories/search/', { query: 'a kitten by the window', filters: { AND: [{ user_id: 'bea' }, { schema: name }] } });
    expect(res.body.results.map((r: { id: string }) => r.id)).to.deep.equal([cat, money]);
    const strict = await post('/v3/memories/search/', { query: 'a kitten by the window', filters: { user_id: 'bea' }, threshold: 0.3 });
    expect(strict.body.results.map((r: { id: string }) => r.id)).to.deep.equal([cat]);
    const since = await post('/v3/memories/search/', { query: 'kitten', filters: { AND: [{ user_id: 'bea' }, { created_at: { gte: '2100-01-01' } }] } });
    expect(since.body.results).to.deep.equal([]);

    for (const [filters, pattern] of [
      [{ schema: name }, /user_id/],
      [{ OR: [{ user_id: 'bea' }, { user_id: 'x' }] }, /user_id/],
      [{ user_id: 'bea', colour: 'red' }, /colour/],
      [{ user_id: { like: 'b%' } }, /like/],
    ] as const) {
      const bad = await post('/v3/memories/search/', { query: 'x', filters });
      expect(bad.status, JSON.stringify(filters)).to.equal(400);
      expect(bad.body.detail).to.match(pattern);
    }
  });

  it('meters memory.add for every stored record or memory, and nothing for a rejected one', async () => {
    const key = token((await newProject(t)).key);
    const name = unique('meter').toLowerCase();
    await post('/v1/schemas', { name, json_schema: LEAD }, key);
    await post(`/v1/records/${name}`, { record: { name: 'A' }, user_id: 'm' }, key);
    await post(`/v1/records/${name}`, { record: { name: 'B' }, user_id: 'm' }, key);
    await post(`/v1/records/${name}`, { record: { seats: 'x' }, user_id: 'm' }, key);
    await post('/v3/memories/add/', { messages: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }], user_id: 'm', infer: false }, key);
    const usage = await get('/v1/usage', key);
    expect(usage.status).to.equal(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.body.totals).to.deep.equal({ 'memory.add': 4 });
    expect(usage.body.days).to.deep.equal([{ day: today, operation: 'memory.add', count: 4 }]);
    expect(usage.body.to).to.equal(today);
    expect((await get('/v1/usage?from=2000-01-01&to=2000-01-31', key)).body.totals).to.deep.equal({ 'memory.add': 0 });
    expect((await get('/v1/usage?from=2020-02-01&to=2020-01-01', key)).status).to.equal(400);
  });

  it("never shows one project's records to another", async () => {
    const name = await schema();
    const mine = await post(`/v1/records/${name}`, { record: { name: 'Secret' }, user_id: 'shared-user' });
    await indexed(name, mine.body.id);
    const other = token((await newProject(t)).key);
    expect((await get(`/v1/records/${name}/${mine.body.id}`, other)).status).to.equal(404);
    const theirs = await post('/v3/memories/search/', { query: 'Secret', filters: { user_id: 'shared-user' } }, other);
    expect(theirs.status).to.equal(200);
    expect(theirs.body.results).to.deep.equal([]);
  });
});
