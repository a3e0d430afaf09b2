import { expect } from 'chai';
import type supertest from 'supertest';
import { memoryCollection } from '../../core/memory/rows.js';
import type { Runtime } from '../../runtime/runtime.js';
import { startEmbeddingServer, type EmbeddingServer } from '../embedding-server.js';
import { isProduction, newProject, PROFILE, profileEnv, startJobProcess, startRuntime, token, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

// A project's memory embedding model, changed through /v1/project/settings: every memory and typed
// record is re-embedded into the new model in the background while search keeps answering from the
// old one, then the project switches and its vectors leave the old model's collection. The new
// model is an OpenAI-compatible stub (deterministic vectors, 64 of them) whose delay makes the re-embedding slow
// enough to watch; small provider batches make it take many pages.

const LOCAL = 'local/all-MiniLM-L6-v2';
/** Provider calls of 8 texts, 2 at once: pages of 32 memories. */
const EMBED_ENV = { OPENAI_EMBED_BATCH: '8', OPENAI_EMBED_CONCURRENCY: '2' };

interface Embedding {
  model: string;
  target: string | null;
  status: 'ready' | 'migrating' | 'failed';
  embedded: number;
  total: number | null;
  started_at: string | null;
  error: string | null;
}

interface Written {
  id: string;
  text: string;
  user: string;
}

/** The project's memory embedding as `GET /v1/project/settings` shows it. */
async function embedding(http: supertest.Agent, auth: string): Promise<Embedding> {
  const res = await http.get('/v1/project/settings').set('Authorization', auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.memory_embedding as Embedding;
}

async function patch(http: supertest.Agent, auth: string, model: string | null): Promise<Embedding> {
  const res = await http.patch('/v1/project/settings').set('Authorization', auth).send({ memory_embed_model: model });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  // the setting as stored: the model's canonical name
  expect(res.body.memory_embed_model).to.equal(model === 'local' ? LOCAL : model);
  return res.body.memory_embedding as Embedding;
}

/** Stores `conversations` mem0 conversations of 10 messages and `records` typed records; returns one of each kind first. */
async function write(http: supertest.Agent, auth: string, conversations: number, records: number): Promise<Written[]> {
  const schema = unique('note').toLowerCase();
  const created = await http.post('/v1/schemas').set('Authorization', auth).send({
    name: schema,
    json_schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
    embed_template: '{{note}}',
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const user = unique('owner');
  const written: Written[] = [];
  const notes = Array.from({ length: records }, (_, i) => `Record ${i}: the ${unique('boiler')} in room ${i} needs a new valve`);
  const stored = await http.post(`/v1/records/${schema}/batch`).set('Authorization', auth).send({ records: notes.map((note) => ({ record: { note }, user_id: user })) });
  expect(stored.status, JSON.stringify(stored.body).slice(0, 500)).to.equal(201);
  written.push(...(stored.body.records as Array<{ id: string; record: { note: string } }>).map((r) => ({ id: r.id, text: r.record.note, user })));
  const chats = Array.from({ length: conversations }, (_, c) => ({
    messages: Array.from({ length: 10 }, (_, j) => ({ role: 'user', content: `Chat ${c} fact ${j}: I ${unique('enjoy')} hobby number ${j}` })),
    user_id: user,
    infer: false,
  }));
  const added = await http.post('/v1/batch/').set('Authorization', auth).send({ memories: chats });
  expect(added.status, JSON.stringify(added.body).slice(0, 500)).to.equal(201);
  written.push(...(added.body.results as Array<{ id: string; memory: string }>).map((m) => ({ id: m.id, text: m.memory, user })));
  return written;
}

/** Memories of the project by embedding status, read from the database. */
async function statuses(runtime: Runtime, projectId: string): Promise<Record<string, number>> {
  const rows = (await runtime.db('memories').where({ project_id: projectId }).select('embedding_status').count({ n: '*' }).groupBy('embedding_status')) as Array<{ embedding_status: string; n: number | string }>;
  return Object.fromEntries(rows.map((r) => [r.embedding_status, Number(r.n)]));
}

async function allIndexed(runtime: Runtime, projectId: string, total: number): Promise<void> {
  let last: Record<string, number> = {};
  await waitFor(
    async () => {
      last = await statuses(runtime, projectId);
      return last.indexed === total;
    },
    { timeoutMs: 180_000, intervalMs: 200, message: `all ${total} memories indexed` },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}: ${JSON.stringify(last)}`);
  });
}

/** Whether a settings row has no re-embedding under way and no model's vectors left to remove. */
const idle = (row: { memory_embed_status: string; memory_embed_drop: string | null }): boolean =>
  row.memory_embed_status !== 'migrating' && (row.memory_embed_drop === null || row.memory_embed_drop === '[]');

/** Waits until the re-embedding is over and the vectors of the models it left are removed. */
async function settled(runtime: Runtime, projectId: string): Promise<void> {
  await waitFor(
    async () => {
      const row = (await runtime.db('project_settings').where({ project_id: projectId }).first()) as { memory_embed_status: string; memory_embed_drop: string | null } | undefined;
      return row !== undefined && row.memory_embed_status === 'ready' && idle(row);
    },
    { timeoutMs: 240_000, intervalMs: 100, message: 're-embedding finished and old vectors removed' },
  );
}

/**
 * Waits until no project of `projectIds` has re-embedding work left. The suite's database is
 * shared with the test files after this one, whose runtimes reconcile every project's unfinished
 * re-embeddings at start: work left here would reach their model servers.
 */
async function quiet(runtime: Runtime, projectIds: string[]): Promise<void> {
  await waitFor(
    async () => {
      const rows = (await runtime.db('project_settings').whereIn('project_id', projectIds)) as Array<{ memory_embed_status: string; memory_embed_drop: string | null }>;
      return rows.every(idle);
    },
    { timeoutMs: 240_000, intervalMs: 100, message: "the suite's projects left no re-embedding work" },
  );
}

/**
 * Takes the suite's projects' memories and settings out of the shared database. Their models are
 * the suite's stub servers, gone after it: the periodic check of indexed memories in later test
 * files' runtimes would otherwise ask those runtimes' own model servers for these models.
 */
async function forget(runtime: Runtime, projectIds: string[]): Promise<void> {
  if (projectIds.length === 0) return;
  await runtime.db('memories').whereIn('project_id', projectIds).delete();
  await runtime.db('project_settings').whereIn('project_id', projectIds).delete();
}

/** How many of the project's vectors a model's memories collection holds. */
async function vectorCount(runtime: Runtime, model: string, projectId: string): Promise<number> {
  return runtime.vectors.count(await memoryCollection(runtime.embedders, model), projectId);
}

/** Dense search for `sample`'s text among its owner's memories: the ids found, best first (asserting a 200). */
async function search(http: supertest.Agent, auth: string, sample: Written, topK = 5): Promise<string[]> {
  const res = await http.post('/v3/memories/search/').set('Authorization', auth).send({ query: sample.text, filters: { user_id: sample.user }, mode: 'dense', top_k: topK });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body.results as Array<{ id: string }>).map((r) => r.id);
}

describe(`memory embedding model per project (${PROFILE})`, function () {
  this.timeout(600_000); // a ceiling for a loaded machine: the tests wait on conditions
  let stub: EmbeddingServer;
  let t: TestRuntime;

  before(async () => {
    stub = await startEmbeddingServer({ delayMs: 150, dimension: 64 });
    t = await startRuntime({ env: { OPENAI_BASE_URL: stub.url, ...EMBED_ENV } });
  });
  const mine: string[] = [];
  /** A project of this suite's, whose re-embedding work is waited for at the end. */
  const project = async (): Promise<{ key: string; projectId: string }> => {
    const created = await newProject(t);
    mine.push(created.projectId);
    return created;
  };
  after(async () => {
    if (t) {
      await quiet(t.runtime, mine);
      await forget(t.runtime, mine);
    }
    await t?.close();
    await stub?.close();
  });

  it('shows the setting and refuses models this server cannot use, changing nothing', async () => {
    const { key } = await project();
    const auth = token(key);
    const shown = await t.http.get('/v1/project/settings/').set('Authorization', auth);
    expect(shown.status).to.equal(200);
    expect(shown.body).to.deep.equal({
      memory_embed_model: null,
      memory_embedding: { model: LOCAL, target: null, status: 'ready', embedded: 0, total: null, started_at: null, error: null },
    });
    const refusals: Array<[object, string]> = [
      [{ memory_embed_model: 'bert' }, 'unknown_embed_model'],
      [{ memory_embed_model: 'cohere/embed-v4.0' }, 'embed_model_unavailable'],
      [{ memory_embed_model: 'local/no-such-model' }, 'unknown_embed_model'],
    ];
    for (const [body, code] of refusals) {
      const res = await t.http.patch('/v1/project/settings').set('Authorization', auth).send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal(code);
      expect(res.body.errors[0].path).to.equal('/memory_embed_model');
    }
    for (const body of [{ memory_embed_model: 7 }, { other: 'x' }, { memory_embed_model: '' }]) {
      const res = await t.http.patch('/v1/project/settings').set('Authorization', auth).send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
    }
    expect((await t.http.get('/v1/project/settings').set('Authorization', auth)).body).to.deep.equal(shown.body);
    // PATCH {} changes nothing; the server's model named explicitly is the model in use: nothing to re-embed
    expect((await t.http.patch('/v1/project/settings').set('Authorization', auth).send({})).body).to.deep.equal(shown.body);
    const same = await patch(t.http, auth, 'local');
    expect(same).to.include({ model: LOCAL, target: null, status: 'ready' });
    expect((await t.http.get('/v1/project/settings').set('Authorization', auth)).body.memory_embed_model).to.equal(LOCAL);
    expect((await t.http.get('/v1/project/settings')).status).to.equal(401);
  });

  it('re-embeds memories and records into the new model while search answers, then switches and empties the old collection', async () => {
    const { key, projectId } = await project();
    const auth = token(key);
    const written = await write(t.http, auth, 12, 60);
    await allIndexed(t.runtime, projectId, written.length);
    const record = written[0] as Written;
    const message = written[60] as Written;
    expect(await search(t.http, auth, record)).to.include(record.id);

    const model = 'openai/stub-embed-a';
    const started = await patch(t.http, auth, model);
    expect(started).to.include({ model: LOCAL, target: model, status: 'migrating' });
    expect(started.started_at).to.be.a('string');

    // search throughout: every answer a 200 holding the record, while progress moves
    let searches = 0;
    let partway: Embedding | null = null;
    let late: Written | null = null;
    for (;;) {
      const state = await embedding(t.http, auth);
      if (state.status !== 'migrating') break;
      if (state.embedded > 0 && state.embedded < (state.total ?? 0)) partway ??= state;
      expect(await search(t.http, auth, record), 'search during the re-embedding').to.include(record.id);
      searches += 1;
      if (partway !== null && late === null) {
        // a write made meanwhile is indexed into both models
        const res = await t.http
          .post('/v3/memories/add/')
          .set('Authorization', auth)
          .send({ messages: [{ role: 'user', content: `A late note: ${unique('kettle')} descaled` }], user_id: record.user, infer: false });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        late = { id: res.body.results[0].id as string, text: res.body.results[0].memory as string, user: record.user };
      }
    }
    expect(partway, 'progress seen partway').to.not.equal(null);
    expect(partway?.total).to.equal(written.length);
    expect(searches).to.be.at.least(2);
    const done = await embedding(t.http, auth);
    expect(done).to.include({ model, target: null, status: 'ready', error: null });
    expect(done.embedded).to.be.at.least(written.length);

    await settled(t.runtime, projectId);
    const all = [...written, late as Written];
    await allIndexed(t.runtime, projectId, all.length);
    expect(await vectorCount(t.runtime, LOCAL, projectId), 'project vectors left in the old collection').to.equal(0);
    const spec = await memoryCollection(t.runtime.embedders, model);
    expect(await t.runtime.vectors.count(spec, projectId), 'vectors in the new collection').to.equal(all.length);
    expect((await t.runtime.vectors.existing(spec, projectId, all.map((w) => w.id))).size).to.equal(all.length);

    // search now embeds the query with the new model: the stub sees it
    for (const sample of [record, message, late as Written]) {
      const calls = stub.calls.length;
      const ids = await search(t.http, auth, sample, 3);
      expect(ids[0], `first hit for "${sample.text}"`).to.equal(sample.id);
      expect(stub.calls.slice(calls).some((c) => c.size === 1 && c.status === 200), 'the query embedded by the stub').to.equal(true);
    }
    // new writes go to the new model alone
    const res = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', auth)
      .send({ messages: [{ role: 'user', content: `After the switch: ${unique('lamp')} replaced` }], user_id: record.user, infer: false });
    await allIndexed(t.runtime, projectId, all.length + 1);
    expect(await vectorCount(t.runtime, LOCAL, projectId)).to.equal(0);
    expect((await search(t.http, auth, { id: res.body.results[0].id, text: res.body.results[0].memory, user: record.user }, 1))[0]).to.equal(res.body.results[0].id);
  });

  it('replaces the target of a re-embedding under way, and cancels one when changed back', async () => {
    const { key, projectId } = await project();
    const auth = token(key);
    const written = await write(t.http, auth, 10, 40);
    await allIndexed(t.runtime, projectId, written.length);
    const [a, b, c] = ['openai/stub-embed-b1', 'openai/stub-embed-b2', 'openai/stub-embed-b3'];
    const partway = async (): Promise<Embedding> =>
      waitFor(
        async () => {
          const state = await embedding(t.http, auth);
          return state.embedded > 0 && state.status === 'migrating' ? state : null;
        },
        { timeoutMs: 120_000, intervalMs: 20, message: 'the re-embedding partway' },
      );

    await patch(t.http, auth, a);
    const atChange = await partway();
    expect(atChange.embedded).to.be.below(written.length);
    const replaced = await patch(t.http, auth, b);
    expect(replaced).to.include({ model: LOCAL, target: b, status: 'migrating', embedded: 0 });
    await settled(t.runtime, projectId);
    expect(await embedding(t.http, auth)).to.include({ model: b, target: null, status: 'ready' });
    expect(await vectorCount(t.runtime, a, projectId), 'vectors left in the replaced target').to.equal(0);
    expect(await vectorCount(t.runtime, LOCAL, projectId), 'vectors left in the old model').to.equal(0);
    expect(await vectorCount(t.runtime, b, projectId)).to.equal(written.length);
    expect((await search(t.http, auth, written[5] as Written, 1))[0]).to.equal((written[5] as Written).id);

    // to c and back to b before it finishes: cancelled, c emptied, b untouched
    await patch(t.http, auth, c);
    await partway();
    const cancelled = await patch(t.http, auth, b);
    expect(cancelled).to.include({ model: b, target: null, status: 'ready' });
    await settled(t.runtime, projectId);
    expect(await vectorCount(t.runtime, c, projectId), 'vectors left in the cancelled target').to.equal(0);
    expect(await vectorCount(t.runtime, b, projectId)).to.equal(written.length);

    // back to the server's model (null): re-embedded into it
    await patch(t.http, auth, null);
    await settled(t.runtime, projectId);
    expect(await embedding(t.http, auth)).to.include({ model: LOCAL, target: null, status: 'ready' });
    expect(await vectorCount(t.runtime, b, projectId)).to.equal(0);
    expect(await vectorCount(t.runtime, LOCAL, projectId)).to.equal(written.length);
    expect((await search(t.http, auth, written[50] as Written, 3))).to.include((written[50] as Written).id);
  });

  it('exports and applies the setting with the rest of the project', async () => {
    const { key } = await project();
    const auth = token(key);
    const exported = await t.http.get('/v1/project/export').set('Authorization', auth);
    expect(exported.body.settings).to.deep.equal({ memory_embed_model: null });
    const spec = { ...exported.body, settings: { memory_embed_model: 'openai/stub-embed-spec' } };
    const dry = await t.http.post('/v1/project/apply').set('Authorization', auth).send({ spec, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
    expect(dry.body.changes.find((c: { kind: string }) => c.kind === 'setting')).to.include({ name: 'memory_embed_model', action: 'update' });
    const bad = await t.http.post('/v1/project/apply').set('Authorization', auth).send({ spec: { ...spec, settings: { memory_embed_model: 'bert' } } });
    expect(bad.status).to.equal(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/spec/settings/memory_embed_model']);
    const applied = await t.http.post('/v1/project/apply').set('Authorization', auth).send({ spec });
    expect(applied.status, JSON.stringify(applied.body)).to.equal(200);
    expect((await embedding(t.http, auth)).target ?? (await embedding(t.http, auth)).model).to.equal('openai/stub-embed-spec');
    const again = await t.http.get('/v1/project/export').set('Authorization', auth);
    expect(again.body.settings).to.deep.equal({ memory_embed_model: 'openai/stub-embed-spec' });
    const unchanged = await t.http.post('/v1/project/apply').set('Authorization', auth).send({ spec, dry_run: true });
    expect(unchanged.body.changes.find((c: { kind: string }) => c.kind === 'setting')).to.include({ action: 'unchanged' });
  });
});

describe(`memory re-embedding: a worker killed mid-way (${PROFILE})`, function () {
  this.timeout(600_000);
  const procs: CairnProcess[] = [];
  let inspector: TestRuntime | null = null;
  let stub: EmbeddingServer | null = null;
  let projectIds: string[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.kill('SIGKILL');
    if (inspector) await forget(inspector.runtime, projectIds.splice(0));
    await inspector?.close();
    inspector = null;
    await stub?.close();
    stub = null;
  });

  it('resumes after the process re-embedding the memories is killed: each memory once in the new model, none left in the old one', async () => {
    stub = await startEmbeddingServer({ delayMs: 200, dimension: 64 });
    // reconciliation would also queue the re-embedding again, but only after its interval: the queue alone must finish it here
    const env = profileEnv({ OPENAI_BASE_URL: stub.url, ...EMBED_ENV, JOB_LOCK_MS: '2000', RECONCILE_INTERVAL_MS: '600000', LOG_LEVEL: 'info' });
    // the test's view of the database and vectors; on production also the API (its relay hands jobs to Redis)
    inspector = await startRuntime({ role: isProduction ? 'api' : 'all', env: { ...env, LOG_LEVEL: 'silent' }, start: isProduction });
    const { runtime } = inspector;
    const { key, projectId } = await newProject(inspector);
    projectIds = [projectId];
    const auth = token(key);
    let http: supertest.Agent = inspector.http;
    const startWorker = async (): Promise<CairnProcess> => {
      const { proc, api } = await startJobProcess(env);
      procs.push(proc);
      if (api) http = api;
      return proc;
    };

    const worker = await startWorker();
    const written = await write(http, auth, 20, 200);
    await allIndexed(runtime, projectId, written.length);
    const model = 'openai/stub-embed-crash';
    await patch(http, auth, model);
    const progress = async (): Promise<{ done: number; status: string }> => {
      const row = (await runtime.db('project_settings').where({ project_id: projectId }).first()) as { memory_embed_done: number | string; memory_embed_status: string };
      return { done: Number(row.memory_embed_done), status: row.memory_embed_status };
    };
    const atKill = await waitFor(async () => ((await progress()).done >= 64 ? progress() : null), { timeoutMs: 120_000, intervalMs: 25, message: 'the re-embedding under way' });
    await worker.kill('SIGKILL');
    procs.splice(procs.indexOf(worker), 1);
    expect(atKill.status).to.equal('migrating');
    expect(atKill.done, 'killed partway').to.be.below(written.length - 32);

    await startWorker();
    await settled(runtime, projectId);
    const shown = await embedding(http, auth);
    expect(shown).to.include({ model, target: null, status: 'ready' });
    const ids = written.map((w) => w.id);
    const spec = await memoryCollection(runtime.embedders, model);
    expect(await runtime.vectors.count(spec, projectId), 'vectors in the new collection').to.equal(written.length);
    expect((await runtime.vectors.existing(spec, projectId, ids)).size, 'memories with a vector').to.equal(written.length);
    expect(await vectorCount(runtime, LOCAL, projectId), 'project vectors left in the old collection').to.equal(0);
    for (const sample of [written[0], written[199], written[200], written[written.length - 1]] as Written[]) {
      expect((await search(http, auth, sample, 3))[0], `first hit for "${sample.text}"`).to.equal(sample.id);
    }
    process.stdout.write(`      killed at ${atKill.done} of ${written.length} re-embedded\n`);
  });
});
