import { expect } from 'chai';
import { MAX_INDEX_GROUP } from '../../contracts/jobs/catalogue.js';
import { isolatedDatabaseEnv, memoriesIndexed, newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

describe(`bulk writes (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  const post = (path: string, body: unknown, key = auth) => t.http.post(path).set('Authorization', key).send(body as object);
  const get = (path: string, key = auth) => t.http.get(path).set('Authorization', key);

  const CONTACT = {
    type: 'object',
    properties: { name: { type: 'string' }, email: { type: 'string' }, seats: { type: 'integer' }, note: { type: 'string' } },
    required: ['name'],
  };

  async function schema(): Promise<string> {
    const name = unique('contact').toLowerCase();
    const res = await post('/v1/schemas', { name, json_schema: CONTACT, embed_template: '{{name}}: {{note}}' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return name;
  }

  /** Every record of a user, through the API's list, a page of 100 at a time. */
  async function recordsOf(schemaName: string, user: string, key = auth): Promise<Array<{ id: string; embedding_status: string; record: Record<string, unknown> }>> {
    const all = [];
    for (let offset = 0; ; offset += 100) {
      const res = await get(`/v1/records/${schemaName}?user_id=${user}&limit=100&offset=${offset}`, key);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      all.push(...res.body.records);
      if (res.body.records.length < 100) return all;
    }
  }

  const allIndexed = (schemaName: string, user: string, count: number) =>
    waitFor(
      async () => {
        const rows = await recordsOf(schemaName, user);
        return rows.length === count && rows.every((r) => r.embedding_status === 'indexed') ? rows : null;
      },
      { timeoutMs: 90_000, intervalMs: 250, message: `${count} records of ${user} indexed` },
    );

  const usage = async (key: string): Promise<number> => Number((await get('/v1/usage', key)).body.totals['memory.add'] ?? 0);

  before(async () => {
    t = await startRuntime();
    auth = token((await newProject(t)).key);
  });
  after(() => t.close());

  describe('POST /v1/records/{schema}/batch', () => {
    it('stores every record of a good batch in order, indexes them all, and makes each findable', async () => {
      const name = await schema();
      const user = unique('importer');
      const notes = Array.from({ length: 200 }, (_, i) => `customer number ${i} asked about ${['invoices', 'gardening', 'violin lessons', 'snow tyres'][i % 4]}`);
      const res = await post(`/v1/records/${name}/batch`, {
        records: notes.map((note, i) => ({ record: { name: `Person ${i}`, note, seats: i }, user_id: user, metadata: { row: i } })),
      });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).to.equal(201);
      expect(res.body.records).to.have.length(200);
      expect(res.body.records.map((r: { record: { seats: number } }) => r.record.seats)).to.deep.equal(notes.map((_, i) => i));
      expect(new Set(res.body.records.map((r: { id: string }) => r.id)).size).to.equal(200);
      expect(res.body.records[7]).to.include({ schema: name, schema_version: 1, user_id: user, embedding_status: 'pending' });
      expect(res.body.records[7].metadata).to.deep.equal({ row: 7 });

      // found by its words at once, before it is embedded
      const keyword = await post('/v3/memories/search/', { query: 'violin lessons number 6', filters: { user_id: user }, mode: 'keyword', top_k: 3 });
      expect(keyword.body.results[0]?.id).to.equal(res.body.records[6].id);

      const stored = await allIndexed(name, user, 200);
      expect(stored.map((r) => r.id).sort()).to.deep.equal(res.body.records.map((r: { id: string }) => r.id).sort());
      const dense = await post('/v3/memories/search/', { query: 'Person 13: customer number 13 asked about gardening', filters: { user_id: user }, mode: 'dense', top_k: 3 });
      expect(dense.status).to.equal(200);
      expect(dense.body.results.map((r: { id: string }) => r.id)).to.include(res.body.records[13].id);
      expect(await t.runtime.repositories.outbox.countPending()).to.equal(0);
    });

    it('refuses a batch with bad items, naming each by its index, and stores none of it', async () => {
      const key = token((await newProject(t)).key);
      const name = unique('contact').toLowerCase();
      await post('/v1/schemas', { name, json_schema: CONTACT }, key);
      const user = unique('importer');
      const records = Array.from({ length: 10 }, (_, i) => ({ record: { name: `P${i}`, email: `p${i}@example.com` }, user_id: user }));
      records[3] = { record: { name: 'P3', email: 42 as never }, user_id: user };
      records[8] = { record: { email: 'p8@example.com', seats: 'many' } as never, user_id: user };
      const res = await post(`/v1/records/${name}/batch`, { records }, key);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.detail).to.match(/2 of 10/);
      const paths = res.body.errors.map((e: { path: string }) => e.path);
      expect(paths).to.have.members(['/records/3/record/email', '/records/8/record/name', '/records/8/record/seats']);
      expect(res.body.errors.every((e: { message: string }) => e.message.length > 0)).to.equal(true);

      // a field the single write refuses is refused here, by index, before any record is checked
      const unknown = await post(`/v1/records/${name}/batch`, { records: [records[0], { ...records[1], colour: 'red' }] }, key);
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/records/1/colour']);

      expect(await recordsOf(name, user, key)).to.have.length(0);
      expect(await usage(key)).to.equal(0);
      expect(await t.runtime.repositories.outbox.countPending()).to.equal(0);
    });

    it('refuses an empty batch and one over 1000 records; an unknown schema is a 404', async () => {
      const name = await schema();
      const user = unique('importer');
      const empty = await post(`/v1/records/${name}/batch`, { records: [] });
      expect(empty.status).to.equal(400);
      const over = await post(`/v1/records/${name}/batch`, { records: Array.from({ length: 1001 }, (_, i) => ({ record: { name: `P${i}` }, user_id: user })) });
      expect(over.status, JSON.stringify(over.body).slice(0, 300)).to.be.oneOf([400, 413]);
      if (over.status === 400) expect(over.body.errors.map((e: { path: string }) => e.path)).to.include('/records');
      expect(await recordsOf(name, user)).to.have.length(0);
      const missing = await post(`/v1/records/${unique('nope').toLowerCase()}/batch`, { records: [{ record: { name: 'x' }, user_id: user }] });
      expect(missing.status).to.equal(404);
    });

    it('relays 500 records written one request at a time, every one indexed and the outbox emptied', async () => {
      const name = await schema();
      const user = unique('writer');
      let next = 0;
      const lane = async (): Promise<void> => {
        for (let i = next++; i < 500; i = next++) {
          const res = await post(`/v1/records/${name}`, { record: { name: `W${i}`, note: `written alone, number ${i}` }, user_id: user });
          expect(res.status).to.equal(201);
        }
      };
      await Promise.all(Array.from({ length: 8 }, lane));
      await allIndexed(name, user, 500);
      await waitFor(async () => (await t.runtime.repositories.outbox.countPending()) === 0, { message: 'outbox empty' });
    });
  });

  describe('POST /v1/batch (mem0 add, many at once)', () => {
    it('stores every message of every item as given, in order, each owned as its item says, metered and searchable', async () => {
      const key = token((await newProject(t)).key);
      const [ann, bob] = [unique('ann'), unique('bob')];
      const res = await post(
        '/v1/batch/',
        {
          memories: [
            { messages: [{ role: 'user', content: 'I keep bees on the roof.' }, { role: 'assistant', content: 'How many hives?' }], user_id: ann, timestamp: 1_700_000_000 },
            { messages: [{ role: 'user', content: 'I am learning Portuguese.' }], user_id: bob, agent_id: 'tutor', metadata: { source: 'import' }, infer: false },
            { messages: [{ role: 'user', content: 'Three hives, mostly.' }], user_id: ann },
          ],
        },
        key,
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.results.map((m: { memory: string }) => m.memory)).to.deep.equal(['I keep bees on the roof.', 'How many hives?', 'I am learning Portuguese.', 'Three hives, mostly.']);
      expect(res.body.results.every((m: { event: string }) => m.event === 'ADD')).to.equal(true);
      expect(res.body.results[0].created_at).to.equal('2023-11-14T22:13:20.000Z');
      expect(res.body.results[2]).to.deep.include({ user_id: bob, agent_id: 'tutor', metadata: { source: 'import' } });
      expect(await usage(key)).to.equal(4);

      const list = await t.http.post('/v3/memories/').set('Authorization', key).send({ filters: { user_id: ann } });
      expect(list.body.count).to.equal(3);
      const found = await waitFor(
        async () => {
          const search = await post('/v3/memories/search/', { query: 'does anyone keep honey bees?', filters: { user_id: ann }, mode: 'dense', top_k: 3 }, key);
          return search.body.results.length === 3 ? search.body.results : null;
        },
        { timeoutMs: 30_000, message: "ann's memories indexed" },
      );
      expect(found[0].memory).to.equal('I keep bees on the roof.');
    });

    it('refuses a batch with a bad item, naming its index, and stores none of it', async () => {
      const key = token((await newProject(t)).key);
      const user = unique('carol');
      const good = { messages: [{ role: 'user', content: 'I like plums.' }], user_id: user };
      const cases: Array<[unknown[], string]> = [
        [[good, good, { messages: [{ role: 'user', content: 'whose is this?' }] }], '/memories/2'],
        [[good, { ...good, infer: true }], '/memories/1/infer'],
        [[good, good, good, { ...good, messages: [{ role: 'robot', content: 'beep' }] }], '/memories/3/messages/0/role'],
        [[{ ...good, metadata: { blob: 'x'.repeat(70_000) } }, good], '/memories/0'],
      ];
      for (const [memories, path] of cases) {
        const res = await post('/v1/batch', { memories }, key);
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).to.deep.equal([path]);
      }
      const list = await t.http.post('/v3/memories/').set('Authorization', key).send({ filters: { user_id: user } });
      expect(list.body.count).to.equal(0);
      expect(await usage(key)).to.equal(0);
    });

    it('refuses more than 1000 messages in all', async () => {
      const key = token((await newProject(t)).key);
      const user = unique('dave');
      const item = { messages: Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: `fact ${i}` })), user_id: user };
      const res = await post('/v1/batch', { memories: Array.from({ length: 11 }, () => item) }, key);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('batch_too_large');
      expect(await usage(key)).to.equal(0);
    });
  });

  describe('indexing jobs of batch writes', () => {
    it('queues one job for each 32 memories a batch adds, updates or deletes, and leaves the vectors as the rows say', async () => {
      // not started: the writes' jobs stay in the outbox until the runtime starts (with a database of
      // its own on production, where the suite's running runtime would relay them)
      const s = await startRuntime({ start: false, env: await isolatedDatabaseEnv() });
      try {
        const { key, projectId } = await newProject(s);
        const bearer = token(key);
        const user = unique('u');
        /** The members of each memory.index job the outbox holds for the project, oldest job first. */
        const jobs = async (): Promise<string[][]> =>
          ((await s.runtime.db('outbox').where({ project_id: projectId, job_name: 'memory.index' }).orderBy('id')) as Array<{ payload: string }>).map((entry) => {
            const p = JSON.parse(entry.payload) as { memoryId: string; revision: number; more?: Array<{ memoryId: string; revision: number }> };
            return [p, ...(p.more ?? [])].map((m) => `${m.memoryId}@${m.revision}`);
          });
        const texts = Array.from({ length: 40 }, (_, i) => `note ${i}: I water the ${['ferns', 'cactus', 'basil', 'orchid'][i % 4]} on day ${i}`);
        const added = await s.http
          .post('/v1/batch/')
          .set('Authorization', bearer)
          .send({ memories: [{ user_id: user, messages: texts.map((content) => ({ role: 'user', content })) }] });
        expect(added.status, JSON.stringify(added.body).slice(0, 300)).to.equal(201);
        const ids = ((await s.runtime.db('memories').where({ project_id: projectId }).orderBy('created_at')) as Array<{ id: string }>).map((r) => r.id);
        let queued = await jobs();
        expect(queued.map((members) => members.length)).to.deep.equal([MAX_INDEX_GROUP, 40 - MAX_INDEX_GROUP]);
        expect(queued.flat().sort()).to.deep.equal(ids.map((id) => `${id}@1`).sort());

        // 20 texts changed: each memory at revision 2 and the text it had kept as a version (revision 1)
        const changed = ids.slice(0, 20);
        const updated = await s.http
          .put('/v1/batch/')
          .set('Authorization', bearer)
          .send({ memories: changed.map((id, i) => ({ memory_id: id, text: `note ${i}: I moved the plants to the window sill` })) });
        expect(updated.status, JSON.stringify(updated.body).slice(0, 300)).to.equal(200);
        queued = (await jobs()).slice(2);
        expect(queued.map((members) => members.length)).to.deep.equal([MAX_INDEX_GROUP, 40 - MAX_INDEX_GROUP]);
        expect(queued.flat().filter((m) => m.endsWith('@2')).sort()).to.deep.equal(changed.map((id) => `${id}@2`).sort());

        // 10 deleted, 5 of them with their versions
        const gone = [...ids.slice(15, 20), ...ids.slice(30, 35)];
        const deleted = await s.http.delete('/v1/batch/').set('Authorization', bearer).send({ memories: gone.map((id) => ({ memory_id: id })) });
        expect(deleted.status, JSON.stringify(deleted.body).slice(0, 300)).to.equal(200);
        queued = (await jobs()).slice(4);
        expect(queued.map((members) => members.length)).to.deep.equal([15]);

        await s.runtime.start();
        // the 30 memories left and the 15 versions of those changed and kept
        expect(await memoriesIndexed(s, bearer, { user_id: user })).to.deep.equal({ total: 45, pending: 0, indexed: 45, failed: 0 });
        const res = await s.http
          .post('/v3/memories/search/')
          .set('Authorization', bearer)
          .send({ query: 'plants on the window sill', filters: { user_id: user }, top_k: 100, mode: 'dense' });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(200);
        const found = (res.body.results as Array<{ id: string; memory: string }>).map((r) => r.id);
        expect(found).to.have.members(ids.filter((id) => !gone.includes(id)));
        const top = (res.body.results as Array<{ id: string }>).slice(0, 15).map((r) => r.id);
        expect(top.every((id) => changed.includes(id)), 'the changed texts are found by what they say now').to.equal(true);
      } finally {
        await s.close();
      }
    });
  });
});
