import { expect } from 'chai';
import { Redis } from 'ioredis';
import { isProduction, newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';

const CONTACT = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const CONTACT_V2 = { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string' } }, required: ['name', 'email'] };

/** The HTTP calls of one API process, as one project's key. */
function client(t: TestRuntime, key: string) {
  const auth = token(key);
  return {
    get: (path: string) => t.http.get(path).set('Authorization', auth),
    post: (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object),
    patch: (path: string, body: unknown) => t.http.patch(path).set('Authorization', auth).send(body as object),
    del: (path: string) => t.http.delete(path).set('Authorization', auth),
  };
}
type Client = ReturnType<typeof client>;

/** Asserts a status, showing the body when it is not the one expected. */
async function expectStatus(request: PromiseLike<{ status: number; body: unknown }>, status: number): Promise<Record<string, unknown>> {
  const res = await request;
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  return res.body as Record<string, unknown>;
}

/**
 * Each check writes through `writer` and reads through `reader` right after the write is
 * acknowledged — the same process, or another API process of the deployment — having first read
 * through `reader` so that it holds the configuration as it was before the write.
 */
function readsSeeWrites(writer: () => Client, reader: () => Client): void {
  it('an agent: its fields, tools and rules, its deletion and re-creation, a name that did not exist', async () => {
    const [w, r] = [writer(), reader()];
    const name = unique('agent');
    await expectStatus(r.get(`/v1/agents/${name}`), 404);
    await expectStatus(w.post('/v1/agents', { name, instructions: 'Be brief.' }), 201);
    expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).instructions).to.equal('Be brief.');

    await expectStatus(w.patch(`/v1/agents/${name}`, { instructions: 'Be thorough.' }), 200);
    expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).instructions).to.equal('Be thorough.');

    await expectStatus(w.post(`/v1/agents/${name}/tools`, { name: 'lookup', http: { url: 'https://api.example.com/lookup' } }), 201);
    expect(((await expectStatus(r.get(`/v1/agents/${name}`), 200)).tools as Array<{ name: string }>).map((t) => t.name)).to.deep.equal(['lookup']);
    await expectStatus(w.patch(`/v1/agents/${name}/tools/lookup`, { description: 'Looks things up.' }), 200);
    expect((await expectStatus(r.get(`/v1/agents/${name}/tools/lookup`), 200)).description).to.equal('Looks things up.');

    const rule = await expectStatus(w.post(`/v1/agents/${name}/rules`, { rule_type: 'escalation', condition: 'message.contains("lawyer")', action: 'A person will call.' }), 201);
    expect((await expectStatus(r.get(`/v1/agents/${name}/rules`), 200)).rules).to.have.length(1);
    await expectStatus(w.patch(`/v1/agents/${name}/rules/${rule.id as string}`, { action: 'Someone will call.' }), 200);
    expect((await expectStatus(r.get(`/v1/agents/${name}/rules/${rule.id as string}`), 200)).action).to.equal('Someone will call.');
    await expectStatus(w.del(`/v1/agents/${name}/tools/lookup`), 204);
    expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).tools).to.deep.equal([]);

    const before = await expectStatus(r.get(`/v1/agents/${name}`), 200);
    await expectStatus(w.del(`/v1/agents/${name}`), 204);
    await expectStatus(r.get(`/v1/agents/${name}`), 404);
    const again = await expectStatus(w.post('/v1/agents', { name }), 201);
    const read = await expectStatus(r.get(`/v1/agents/${name}`), 200);
    expect(read.id).to.equal(again.id).and.not.equal(before.id);
    expect(read.instructions).to.equal('');
  });

  it('a renamed agent answers by its new name only', async () => {
    const [w, r] = [writer(), reader()];
    const [name, renamed] = [unique('agent'), unique('agent')];
    await expectStatus(w.post('/v1/agents', { name }), 201);
    await expectStatus(r.get(`/v1/agents/${name}`), 200);
    await expectStatus(w.patch(`/v1/agents/${name}`, { name: renamed }), 200);
    await expectStatus(r.get(`/v1/agents/${name}`), 404);
    await expectStatus(r.get(`/v1/agents/${renamed}`), 200);
  });

  it('a record schema: a record written right after a new version is published is checked against it', async () => {
    const [w, r] = [writer(), reader()];
    const schema = unique('s').toLowerCase();
    await expectStatus(w.post('/v1/schemas', { name: schema, json_schema: CONTACT }), 201);
    expect((await expectStatus(r.post(`/v1/records/${schema}`, { record: { name: 'Ada' }, user_id: 'u1' }), 201)).schema_version).to.equal(1);
    await expectStatus(w.post(`/v1/schemas/${schema}`, { json_schema: CONTACT_V2 }), 201);
    await expectStatus(r.post(`/v1/records/${schema}`, { record: { name: 'Ada' }, user_id: 'u1' }), 400);
    const written = await expectStatus(r.post(`/v1/records/${schema}`, { record: { name: 'Ada', email: 'ada@example.com' }, user_id: 'u1' }), 201);
    expect(written.schema_version).to.equal(2);
    expect((await expectStatus(r.get(`/v1/schemas/${schema}`), 200)).version).to.equal(2);
  });

  it('an index: deletion protection, and an index deleted and created again with another dimension', async () => {
    const [w, r] = [writer(), reader()];
    const index = unique('ix').toLowerCase();
    await expectStatus(w.post('/v1/indexes', { name: index, dimension: 3 }), 201);
    await expectStatus(r.post(`/v1/indexes/${index}/vectors/upsert`, { vectors: [{ id: 'a', values: [1, 0, 0] }] }), 200);
    await expectStatus(w.patch(`/v1/indexes/${index}`, { deletion_protection: 'enabled' }), 200);
    expect((await expectStatus(r.get(`/v1/indexes/${index}`), 200)).deletion_protection).to.equal('enabled');
    await expectStatus(r.del(`/v1/indexes/${index}`), 409);
    await expectStatus(w.patch(`/v1/indexes/${index}`, { deletion_protection: 'disabled' }), 200);
    await expectStatus(w.del(`/v1/indexes/${index}`), 204);
    await expectStatus(r.get(`/v1/indexes/${index}`), 404);
    await expectStatus(w.post('/v1/indexes', { name: index, dimension: 4 }), 201);
    await expectStatus(r.post(`/v1/indexes/${index}/vectors/upsert`, { vectors: [{ id: 'a', values: [1, 0, 0] }] }), 400);
    await expectStatus(r.post(`/v1/indexes/${index}/vectors/upsert`, { vectors: [{ id: 'a', values: [1, 0, 0, 0] }] }), 200);
  });

  it('a knowledge base: created, attached, deleted and created again', async () => {
    const [w, r] = [writer(), reader()];
    const [kb, agent] = [unique('kb'), unique('agent')];
    await expectStatus(w.post('/v1/agents', { name: agent }), 201);
    await expectStatus(r.post(`/v1/knowledge/${kb}/search`, { query: 'telescope' }), 404);
    await expectStatus(w.post('/v1/knowledge', { name: kb }), 201);
    expect((await expectStatus(r.post(`/v1/knowledge/${kb}/search`, { query: 'telescope' }), 200)).results).to.deep.equal([]);
    await expectStatus(r.post(`/v1/agents/${agent}/knowledge`, { kb }), 200);
    expect((await expectStatus(w.get(`/v1/agents/${agent}`), 200)).knowledge).to.deep.equal([kb]);
    await expectStatus(w.del(`/v1/knowledge/${kb}`), 204);
    await expectStatus(r.post(`/v1/knowledge/${kb}/search`, { query: 'telescope' }), 404);
    await expectStatus(r.post(`/v1/knowledge/${kb}/documents`, { filename: 'a.md', content: '# A', source_type: 'markdown' }), 404);
    await expectStatus(w.post('/v1/knowledge', { name: kb, chunk_size: 500 }), 201);
    expect((await expectStatus(r.get(`/v1/knowledge/${kb}`), 200)).chunk_size).to.equal(500);
    await expectStatus(r.post(`/v1/knowledge/${kb}/documents`, { filename: 'a.md', content: '# A', source_type: 'markdown' }), 202);
  });
}

describe(`configuration reads see every acknowledged write (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let key: string;

  before(async () => {
    t = await startRuntime({ start: false });
    key = (await newProject(t)).key;
  });
  after(() => t.close());

  describe('through the same API process', () => {
    readsSeeWrites(
      () => client(t, key),
      () => client(t, key),
    );
  });

  if (isProduction) {
    it('with Redis unreachable: reads go to the database and see every write', async function () {
      this.timeout(90_000);
      const cut = await startRuntime({ role: 'api', start: false, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
      try {
        const c = client(cut, (await newProject(cut)).key);
        const name = unique('agent');
        await expectStatus(c.post('/v1/agents', { name, instructions: 'one' }), 201);
        expect((await expectStatus(c.get(`/v1/agents/${name}`), 200)).instructions).to.equal('one');
        await expectStatus(c.patch(`/v1/agents/${name}`, { instructions: 'two' }), 200);
        expect((await expectStatus(c.get(`/v1/agents/${name}`), 200)).instructions).to.equal('two');
      } finally {
        await cut.close();
      }
    });

    describe('through a second API process of the deployment', () => {
      let second: TestRuntime;
      before(async () => {
        // same database, same Redis prefix
        second = await startRuntime({ role: 'api', start: false, env: { QUEUE_PREFIX: t.env.QUEUE_PREFIX as string } });
      });
      after(() => second.close());

      readsSeeWrites(
        () => client(t, key),
        () => client(second, key),
      );

      it('while the reading process serves a stream of other reads of the same project', async () => {
        const [w, r] = [client(t, key), client(second, key)];
        const name = unique('agent');
        await expectStatus(w.post('/v1/agents', { name, instructions: 'v0' }), 201);
        let reading = true;
        const stream = (async () => {
          while (reading) await Promise.all(Array.from({ length: 8 }, () => r.get(`/v1/agents/${name}`)));
        })();
        try {
          for (let version = 1; version <= 10; version++) {
            await expectStatus(w.patch(`/v1/agents/${name}`, { instructions: `v${version}` }), 200);
            expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).instructions).to.equal(`v${version}`);
          }
        } finally {
          reading = false;
          await stream;
        }
      });

      it('after Redis lost its counts (a restart without persistence)', async () => {
        const { key: own, projectId } = await newProject(t);
        const [w, r] = [client(t, own), client(second, own)];
        const name = unique('agent');
        await expectStatus(w.post('/v1/agents', { name, instructions: 'one' }), 201);
        expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).instructions).to.equal('one');
        const redis = new Redis(t.env.REDIS_URL as string);
        try {
          await redis.del(`${t.env.QUEUE_PREFIX as string}:config-changes:${projectId}`);
        } finally {
          redis.disconnect();
        }
        await expectStatus(w.patch(`/v1/agents/${name}`, { instructions: 'two' }), 200);
        expect((await expectStatus(r.get(`/v1/agents/${name}`), 200)).instructions).to.equal('two');
      });
    });
  }
});
