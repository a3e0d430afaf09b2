import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { TestIssuer } from '../oidc-issuer.js';

// Every list answers at most 50 rows when asked without `limit` (the documented default), and
// `offset` reaches the rest. Each list gets 51+ rows, written through the API where that is cheap
// and through the repositories where the API would run models or create collections.

const DEFAULT_LIMIT = 50;
const ROWS = DEFAULT_LIMIT + 3;

describe(`list paging (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  let projectId: string;
  let issuer: TestIssuer;

  before(async () => {
    issuer = await TestIssuer.start();
    // not started: no job runs, so the rows stay as written
    t = await startRuntime({
      start: false,
      env: {
        SECRETS_KEY: randomBytes(32).toString('base64'),
        TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
        OIDC_ISSUER: issuer.url,
        OIDC_AUDIENCE: issuer.audience,
      },
    });
    const project = await newProject(t);
    projectId = project.projectId;
    auth = token(project.key);
  });
  after(async function () {
    this.timeout(120_000);
    // run the jobs the documents and records queued, so no later test's relay inherits them
    await t.runtime.start();
    await waitFor(async () => (await t.runtime.repositories.outbox.countPending()) === 0, { timeoutMs: 100_000, message: 'outbox drained' });
    await t?.close();
    await issuer?.close();
  });

  const get = (path: string, authorization = auth) => t.http.get(path).set('Authorization', authorization);
  /** Sends `count` requests built by `request(i)`, one after another, each expected to succeed. */
  async function each(count: number, request: (i: number) => Promise<{ status: number; text: string }>): Promise<void> {
    for (let i = 0; i < count; i += 1) {
      const res = await request(i);
      expect(res.status, res.text.slice(0, 300)).to.be.oneOf([200, 201, 202]);
    }
  }

  /** The list at `path` answers 50 rows without parameters and the rest from offset 50, none twice. */
  async function expectDefaultPage(
    path: string,
    field: string,
    total: number,
    { key = (row: Record<string, unknown>) => row.id ?? row.name, authorization = auth } = {},
  ): Promise<void> {
    const first = await get(path, authorization);
    expect(first.status, first.text.slice(0, 300)).to.equal(200);
    expect(first.body[field]).to.have.length(DEFAULT_LIMIT);
    const next = await get(`${path}${path.includes('?') ? '&' : '?'}offset=${DEFAULT_LIMIT}`, authorization);
    expect(next.status).to.equal(200);
    expect(next.body[field]).to.have.length(total - DEFAULT_LIMIT);
    const ids = [...first.body[field], ...next.body[field]].map(key);
    expect(new Set(ids).size).to.equal(total);
  }

  it('GET /v1/knowledge', async () => {
    await each(ROWS, (i) => t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: `kb-${i}` }));
    await expectDefaultPage('/v1/knowledge', 'knowledge_bases', ROWS);
  });

  it('GET /v1/knowledge/{name}/documents', async () => {
    const kb = unique('docs');
    expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb })).status).to.equal(201);
    await each(ROWS, (i) =>
      t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: `note-${i}.txt`, content: `note ${i}` }),
    );
    await expectDefaultPage(`/v1/knowledge/${kb}/documents`, 'documents', ROWS);
  });

  it('GET /v1/agents and GET /v1/agents/{name}/runs', async () => {
    await each(ROWS, (i) => t.http.post('/v1/agents').set('Authorization', auth).send({ name: `agent-${i}` }));
    await expectDefaultPage('/v1/agents', 'agents', ROWS);

    const agent = (await t.runtime.repositories.agents.findAgent(projectId, 'agent-0')) as { id: string };
    for (let i = 0; i < ROWS; i += 1) {
      await t.runtime.repositories.agents.insertRun({
        id: randomUUID(),
        project_id: projectId,
        agent_id: agent.id,
        conversation_id: `conversation-${i}`,
        status: 'ok',
        escalated: false,
        llm_calls: 1,
        tokens_in: 1,
        tokens_out: 1,
        latency_ms: 1,
        input: '[]',
        answer: `answer ${i}`,
        detail: '{}',
        created_at: Date.now() + i,
      });
    }
    await expectDefaultPage('/v1/agents/agent-0/runs', 'runs', ROWS);
  });

  it('GET /v1/secrets', async () => {
    await each(ROWS, (i) => t.http.put(`/v1/secrets/SECRET_${i}`).set('Authorization', auth).send({ value: `value-${i}` }));
    await expectDefaultPage('/v1/secrets', 'secrets', ROWS);
  });

  it('GET /v1/api-keys', async () => {
    // the project's first key is one of them
    await each(ROWS - 1, (i) => t.http.post('/v1/api-keys').set('Authorization', auth).send({ name: `key ${i}` }));
    await expectDefaultPage('/v1/api-keys', 'api_keys', ROWS);
  });

  it('GET /v1/schemas/{name}/versions', async () => {
    const name = unique('paged').toLowerCase();
    const jsonSchema = (i: number) => ({ type: 'object', properties: { note: { type: 'string', description: `version ${i}` } } });
    expect((await t.http.post('/v1/schemas').set('Authorization', auth).send({ name, json_schema: jsonSchema(1) })).status).to.equal(201);
    // each version follows the one before
    for (let i = 2; i <= ROWS; i += 1) {
      const res = await t.http.post(`/v1/schemas/${name}`).set('Authorization', auth).send({ json_schema: jsonSchema(i) });
      expect(res.status, res.text.slice(0, 300)).to.be.oneOf([200, 201]);
    }
    await expectDefaultPage(`/v1/schemas/${name}/versions`, 'versions', ROWS, { key: (v) => v.version });
  });

  it('GET /v1/records/{schema}', async () => {
    const name = unique('notes').toLowerCase();
    const jsonSchema = { type: 'object', properties: { note: { type: 'string' } } };
    expect((await t.http.post('/v1/schemas').set('Authorization', auth).send({ name, json_schema: jsonSchema })).status).to.equal(201);
    const records = Array.from({ length: ROWS }, (_, i) => ({ record: { note: `note ${i}` }, user_id: 'pager' }));
    const stored = await t.http.post(`/v1/records/${name}/batch`).set('Authorization', auth).send({ records });
    expect(stored.status, stored.text.slice(0, 300)).to.equal(201);
    await expectDefaultPage(`/v1/records/${name}`, 'records', ROWS);
  });

  it('GET /v1/indexes', async () => {
    // named indexes through the repository: the API would create a vector collection for each
    for (let i = 0; i < ROWS; i += 1) {
      await t.runtime.repositories.indexes.insert({
        id: randomUUID(),
        project_id: projectId,
        name: `index-${i}`,
        dimension: 4,
        metric: 'cosine',
        embed_model: null,
        field_map: null,
        deletion_protection: false,
        tags: '{}',
        collection: `paging_${i}`,
        created_at: Date.now() + i,
        updated_at: Date.now() + i,
      });
    }
    await expectDefaultPage('/v1/indexes', 'indexes', ROWS);
  });

  it('GET /api/v1/webhooks/{id}/deliveries', async () => {
    const hook = await t.http
      .post(`/api/v1/webhooks/projects/${projectId}`)
      .set('Authorization', auth)
      .send({ name: 'paged', url: 'http://127.0.0.1:9/cairn', event_types: ['memory_add'] });
    expect(hook.status, hook.text.slice(0, 300)).to.be.oneOf([200, 201]);
    const webhookId = hook.body.webhook_id as string;
    const now = Date.now();
    await t.runtime.db.transaction((trx) =>
      t.runtime.repositories.webhooks.addDeliveries(
        trx,
        Array.from({ length: ROWS }, (_, i) => ({
          id: randomUUID(),
          project_id: projectId,
          webhook_id: webhookId,
          event: 'memory_add',
          memory_id: randomUUID(),
          body: '{}',
          status: 'pending' as const,
          attempts: 0,
          status_code: null,
          last_error: null,
          created_at: now + i,
          updated_at: now + i,
          delivered_at: null,
        })),
      ),
    );
    await expectDefaultPage(`/api/v1/webhooks/${webhookId}/deliveries`, 'results', ROWS);
  });

  it('GET /projects/{owner}/{project}/versions and /members', async () => {
    const owner = unique('owner');
    const base = `/projects/${owner}/${unique('app')}`;
    const asOwner = TestIssuer.bearer(await issuer.token(owner));
    const spec = { name: 'app', agents: [{ name: 'support', model: 'local' }] };
    await each(ROWS, (i) => t.http.post(`${base}/versions`).set('Authorization', asOwner).send({ version: `1.0.${i}`, spec }));
    await expectDefaultPage(`${base}/versions`, 'versions', ROWS, { key: (v) => v.version, authorization: asOwner });

    await each(ROWS, (i) => t.http.put(`${base}/members/member-${i}`).set('Authorization', asOwner));
    await expectDefaultPage(`${base}/members`, 'members', ROWS, { authorization: asOwner });
  });
});
