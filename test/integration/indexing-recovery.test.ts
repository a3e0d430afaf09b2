import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Reconciliation } from '../../core/reconcile.js';
import { ConfigCache } from '../../core/config-cache.js';
import { MemoryIndexer } from '../../core/memory/indexing.js';
import { MemoryModels } from '../../core/memory/memory-models.js';
import { SingleProcessCounts } from '../../db/change-counts.js';
import { modelName } from '../../providers/registry.js';
import { MemoriesRepository } from '../../db/repositories/memories.repository.js';
import { ReconcileRepository } from '../../db/repositories/reconcile.repository.js';
import type { JobEnvelope } from '../../contracts/jobs/catalogue.js';
import { createLogger } from '../../lib/logger.js';
import { badRequest } from '../../lib/errors.js';
import { reachable } from '../../lib/reachable.js';
import { freePort, isolatedDatabaseEnv, isProduction, newProject, PROFILE, repoRoot, startRuntime, tempDir, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Indexing never loses a write: a transient failure (the embedder or Milvus unavailable) leaves a
// memory pending with the reason until it is indexed, and reconciliation repairs what the queue
// cannot see (a job gone with its queue, a vector gone from the store).

const log = createLogger('silent');

interface Memory {
  id: string;
  memory: string;
  embedding_status: string;
  embedding_error: string | null;
}

/** mem0 calls of one project. */
function mem0(t: TestRuntime, key: string) {
  const auth = token(key);
  return {
    async add(user: string, texts: string[]): Promise<Memory[]> {
      const res = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: texts.map((content) => ({ role: 'user', content })), user_id: user, infer: false });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.results as Memory[];
    },
    async get(id: string): Promise<Memory> {
      const res = await t.http.get(`/v1/memories/${id}/`).set('Authorization', auth);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as Memory;
    },
    /** Ids the dense search finds for the user (what the vector index holds), or the HTTP status when it fails. */
    async search(user: string, query: string, topK = 100): Promise<string[] | number> {
      const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query, filters: { user_id: user }, top_k: topK, mode: 'dense' });
      if (res.status !== 200) return res.status;
      return (res.body.results as Array<{ id: string }>).map((r) => r.id);
    },
  };
}

describe(`indexing recovery (${PROFILE})`, function () {
  this.timeout(120_000);

  it('re-indexes a memory whose vector went missing from the store, and queues again one left pending without a job', async () => {
    const t = await startRuntime({ env: { RECONCILE_INTERVAL_MS: '3600000', RECONCILE_GRACE_MS: '0' } });
    try {
      const { key, projectId } = await newProject(t);
      const api = mem0(t, key);
      const user = unique('u');
      const [lost, stuck] = (await api.add(user, ['I keep my bicycle in the garden shed', 'My favourite tea is smoky lapsang souchong'])) as [Memory, Memory];
      expect(lost.embedding_status).to.equal('pending');
      await waitFor(async () => (await api.get(lost.id)).embedding_status === 'indexed' && (await api.get(stuck.id)).embedding_status === 'indexed', {
        timeoutMs: 60_000,
        message: 'both memories indexed',
      });

      // what a Milvus restart that lost recent writes leaves: the row says indexed, the vector is gone
      const spec = await t.runtime.memoryIndexer.collection(projectId);
      await t.runtime.vectors.deleteByIds(spec, projectId, [lost.id, stuck.id]);
      // and a row pending whose job is gone (its queue lost, its worker's attempts spent)
      await t.runtime.db('memories').where({ id: stuck.id }).update({ embedding_status: 'pending', embedding_error: 'Milvus is unreachable (upsert); retry later' });
      expect(await api.search(user, 'where is the bicycle?')).to.deep.equal([]);
      expect((await api.get(stuck.id)).embedding_error).to.match(/Milvus is unreachable/);

      await waitFor(
        async () => {
          await t.runtime.reconciliation.pass(log);
          const found = await api.search(user, 'bicycle shed tea');
          return Array.isArray(found) && found.length === 2 && (await api.get(lost.id)).embedding_status === 'indexed' && (await api.get(stuck.id)).embedding_status === 'indexed';
        },
        { timeoutMs: 60_000, intervalMs: 200, message: 'both memories searchable again after reconciliation' },
      );
      expect((await api.get(stuck.id)).embedding_error).to.equal(null);
      expect([...(await t.runtime.vectors.existing(spec, projectId, [lost.id, stuck.id]))].sort()).to.deep.equal([lost.id, stuck.id].sort());
    } finally {
      await t.close();
    }
  });

  it('marks a batch of memories indexed in one statement, each only while its row is at the revision its job indexed', async () => {
    const t = await startRuntime({ env: { RECONCILE_INTERVAL_MS: '3600000' } });
    try {
      const { key, projectId } = await newProject(t);
      const api = mem0(t, key);
      const user = unique('u');
      const added = (await api.add(user, ['I park at the north gate', 'My locker is number 42', 'I commute by ferry', 'I take the early shift'])) as Memory[];
      await waitFor(async () => (await Promise.all(added.map((m) => api.get(m.id)))).every((m) => m.embedding_status === 'indexed'), { timeoutMs: 60_000, message: 'all four indexed' });
      const [kept, rewritten, deleted, foreign] = added as [Memory, Memory, Memory, Memory];
      const db = t.runtime.db;
      await db('memories').whereIn('id', added.map((m) => m.id)).update({ embedding_status: 'pending', embedding_error: 'retry' });
      const revisionOf = async (id: string): Promise<number> => Number((await db('memories').where({ id }).first('revision')).revision);
      const revisions = await Promise.all(added.map((m) => revisionOf(m.id)));
      // what a batch meets: one row written again after its job read it, one deleted, one of another project's job
      await db('memories').where({ id: rewritten.id }).update({ revision: (revisions[1] as number) + 1 });
      await db('memories').where({ id: deleted.id }).delete();

      const rows = new MemoriesRepository(db);
      const other = (await newProject(t)).projectId;
      const marked = await rows.markIndexedMany(projectId, [
        { id: kept.id, revision: revisions[0] as number },
        { id: rewritten.id, revision: revisions[1] as number },
        { id: deleted.id, revision: revisions[2] as number },
      ]);
      expect(marked).to.deep.equal([true, false, false]);
      expect(await rows.markIndexedMany(other, [{ id: foreign.id, revision: revisions[3] as number }])).to.deep.equal([false]);
      const after = new Map((await db('memories').whereIn('id', added.map((m) => m.id))).map((r: { id: string; embedding_status: string; embedding_error: string | null }) => [r.id, r]));
      expect(after.get(kept.id)).to.include({ embedding_status: 'indexed', embedding_error: null });
      expect(after.get(rewritten.id)).to.include({ embedding_status: 'pending', embedding_error: 'retry' });
      expect(after.get(foreign.id)).to.include({ embedding_status: 'pending' });
      expect(after.has(deleted.id)).to.equal(false);
    } finally {
      await t.close();
    }
  });

  it('indexes the memories one write added with one job: one the store refuses ends failed alone, one it cannot take yet is retried, and a retry writes only what is not indexed', async () => {
    // not started: the write's job stays in the outbox, and this test runs it (no other runtime's
    // relay may take it: a database of its own on production)
    const t = await startRuntime({ start: false, env: { RECONCILE_INTERVAL_MS: '3600000', ...(await isolatedDatabaseEnv()) } });
    try {
      const { key, projectId } = await newProject(t);
      const user = unique('u');
      const texts = ['I keep a bonsai', 'My bike is blue', 'I read before bed', 'I bake sourdough on Sundays', 'I collect stamps'];
      const res = await t.http
        .post('/v1/batch/')
        .set('Authorization', token(key))
        .send({ memories: [{ user_id: user, messages: texts.map((content) => ({ role: 'user', content })) }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const jobs = (await t.runtime.db('outbox').where({ project_id: projectId, job_name: 'memory.index' })) as Array<{ payload: string }>;
      expect(jobs, 'one indexing job for the write').to.have.length(1);
      const payload = JSON.parse((jobs[0] as { payload: string }).payload) as { memoryId: string; revision: number; more: Array<{ memoryId: string; revision: number }> };
      const members = [{ memoryId: payload.memoryId, revision: payload.revision }, ...payload.more];
      const byText = new Map(((await t.runtime.db('memories').where({ project_id: projectId })) as Memory[]).map((m) => [m.memory, m.id]));
      expect(members.map((m) => m.memoryId).sort()).to.deep.equal([...byText.values()].sort());
      const [bad, flaky] = [byText.get('My bike is blue') as string, byText.get('I read before bed') as string];

      // a store that refuses one memory's point for good, and another's once for now
      let flakyFailures = 1;
      const written: string[] = [];
      const store = Object.create(t.runtime.vectors) as typeof t.runtime.vectors;
      store.upsert = async (spec, pid, points) => {
        if (points.some((p) => p.id === bad)) throw badRequest('validation_failed', 'the store refused this point');
        if (points.some((p) => p.id === flaky) && flakyFailures-- > 0) throw new Error('the store is unavailable');
        written.push(...points.map((p) => p.id));
        return t.runtime.vectors.upsert(spec, pid, points);
      };
      const indexer = new MemoryIndexer(
        t.runtime.repositories.memories,
        t.runtime.repositories.memoryEntities,
        store,
        new MemoryModels(t.runtime.repositories.projectSettings, new ConfigCache(new SingleProcessCounts()), t.runtime.embedders, modelName('embed', t.runtime.config.memoryEmbedModel)),
      );
      const states = async (): Promise<Map<string, Memory>> =>
        new Map(((await t.runtime.db('memories').where({ project_id: projectId })) as Memory[]).map((m) => [m.id, m]));

      // first run: the job fails for now (to be retried), every memory the store took is indexed
      let failure = await indexer.indexMany(projectId, members, { attempt: 1, worker: 'test', log }).then(() => null, (err: Error) => err);
      expect(failure?.message).to.equal('the store is unavailable');
      let after = await states();
      expect(after.get(bad)).to.include({ embedding_status: 'failed', embedding_error: 'the store refused this point' });
      expect(after.get(flaky)).to.include({ embedding_status: 'pending', embedding_error: 'the store is unavailable' });
      const open = [...after.values()].filter((m) => m.embedding_status !== 'indexed').map((m) => m.id);
      expect(written.filter((id) => open.includes(id) && id !== flaky)).to.deep.equal([]);

      // the retry writes only what was not indexed, and ends the job failed with the refused memory's reason
      written.length = 0;
      failure = await indexer.indexMany(projectId, members, { attempt: 2, worker: 'test', log }).then(() => null, (err: Error) => err);
      expect(failure?.message).to.equal('the store refused this point');
      expect(written).to.include(flaky);
      expect(written.every((id) => open.includes(id)), `written again: ${written.join(', ')}`).to.equal(true);
      after = await states();
      expect([...after.values()].filter((m) => m.embedding_status === 'indexed')).to.have.length(4);
      expect(after.get(bad)).to.include({ embedding_status: 'failed' });
      const found = await mem0(t, key).search(user, 'what does the user do in the evening?');
      expect(found).to.have.members([...byText.values()].filter((id) => id !== bad));
    } finally {
      await t.close();
    }
  });

  it('keeps memories written while the embedder is unavailable pending with the reason, and makes them searchable once it is back', async () => {
    const empty = tempDir('cairn-no-model-');
    const shared: Record<string, string> = isProduction ? {} : { DATA_DIR: tempDir() };
    const first = await startRuntime({ env: { ...shared, LOCAL_MODEL_DIR: empty, RECONCILE_GRACE_MS: '0' } });
    const user = unique('u');
    const { key } = await newProject(first);
    let written: Memory[];
    try {
      const api = mem0(first, key);
      written = await api.add(user, ['I was born in Lisbon', 'I play the cello on Sundays', 'My dog is called Biscuit']);
      expect(written).to.have.length(3);
      for (const m of written) {
        const seen = await waitFor(
          async () => {
            const now = await api.get(m.id);
            return now.embedding_error ? now : null;
          },
          { timeoutMs: 30_000, message: 'the indexing error recorded on the memory' },
        );
        // a missing model is an operator's fix away: retried, not failed
        expect(seen.embedding_status).to.equal('pending');
        expect(seen.embedding_error).to.match(/LOCAL_MODEL_DIR/);
      }
      await new Promise((r) => setTimeout(r, 3_000));
      for (const m of written) expect((await api.get(m.id)).embedding_status, 'still pending after several retries').to.equal('pending');
    } finally {
      await first.close();
    }

    // the model arrives; a new process on the same data (embedded: same DATA_DIR; production: same
    // database, and a queue of its own, so the first process's jobs are gone with its queue)
    const second = await startRuntime({ env: { ...shared, RECONCILE_GRACE_MS: '0', RECONCILE_INTERVAL_MS: '1000' } });
    try {
      const api = mem0(second, key);
      await waitFor(
        async () => {
          const found = await api.search(user, 'Lisbon cello dog');
          return Array.isArray(found) && found.length === 3 ? found : null;
        },
        { timeoutMs: 90_000, intervalMs: 250, message: 'the memories written without a model searchable' },
      );
      for (const m of written) {
        const now = await api.get(m.id);
        expect(now.embedding_status).to.equal('indexed');
        expect(now.embedding_error).to.equal(null);
      }
    } finally {
      await second.close();
    }
  });
});

describe(`reconciliation paging (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  before(async () => {
    t = await startRuntime({ env: { RECONCILE_INTERVAL_MS: '3600000', RECONCILE_GRACE_MS: '0' } });
  });
  after(async () => {
    await t.close();
  });

  /**
   * A reconciliation of small pages whose queue treats `alive` jobs as still queued and leaves
   * other projects' rows alone; `fresh`: its own configuration cache, so it reads each project's
   * model from the database (as another worker process would).
   */
  function reconciliation(projectId: string, alive: Set<string>, fresh = false): Reconciliation {
    const queue = Object.create(t.runtime.queue) as typeof t.runtime.queue;
    queue.requeue = async (job: JobEnvelope): Promise<boolean> => {
      const data = job.payload as { projectId: string; memoryId?: string; documentId?: string };
      if (data.projectId !== projectId || alive.has(data.memoryId ?? data.documentId ?? '')) return false;
      return t.runtime.queue.requeue(job);
    };
    const indexer = fresh
      ? new MemoryIndexer(
          t.runtime.repositories.memories,
          t.runtime.repositories.memoryEntities,
          t.runtime.vectors,
          new MemoryModels(t.runtime.repositories.projectSettings, new ConfigCache(new SingleProcessCounts()), t.runtime.embedders, modelName('embed', t.runtime.config.memoryEmbedModel)),
        )
      : t.runtime.memoryIndexer;
    return new Reconciliation(new ReconcileRepository(t.runtime.db), t.runtime.repositories.memories, indexer, t.runtime.knowledge, t.runtime.vectors, queue, t.runtime.repositories.projectSettings, {
      graceMs: 0,
      pageSize: 2,
    });
  }

  it('answers 400 for memory metadata longer than a vector store holds, instead of a memory that can never be indexed', async () => {
    const { key } = await newProject(t);
    const res = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', token(key))
      .send({ messages: [{ role: 'user', content: 'a note' }], user_id: unique('u'), infer: false, metadata: { blob: 'x'.repeat(70_000) } });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(400);
    expect(res.body.code).to.equal('metadata_too_large');
  });

  it('requeues pending memories beyond a full page of ones whose jobs are alive but keep failing', async () => {
    const { key, projectId } = await newProject(t);
    const api = mem0(t, key);
    const written = await api.add(unique('u'), ['I grow tomatoes on the balcony', 'My train leaves at seven', 'The boiler was serviced in May']);
    await waitFor(async () => (await Promise.all(written.map((m) => api.get(m.id)))).every((m) => m.embedding_status === 'indexed'), { timeoutMs: 60_000, message: 'all indexed' });
    const ids = written.map((m) => m.id).sort();
    await t.runtime.db('memories').whereIn('id', ids).update({ embedding_status: 'pending', embedding_error: 'Milvus is unreachable (upsert); retry later' });
    // the first page (by id) is held by rows whose jobs are still queued; the last row's job is gone
    const pass = reconciliation(projectId, new Set(ids.slice(0, 2)));
    await waitFor(
      async () => {
        await pass.pass(log);
        return (await api.get(ids[2] as string)).embedding_status === 'indexed';
      },
      { timeoutMs: 30_000, intervalMs: 100, message: 'the memory after the first page requeued and indexed' },
    );
    for (const id of ids.slice(0, 2)) expect((await api.get(id)).embedding_status).to.equal('pending');
  });

  it("skips memories of a project whose embedding model this worker cannot use, and still checks and repairs other projects' memories", async () => {
    const other = await newProject(t);
    const ours = await newProject(t);
    const user = unique('u');
    const [unusable] = await mem0(t, other.key).add(user, ['I water the ferns on Sundays']);
    const [lost] = await mem0(t, ours.key).add(user, ['The spare key is under the blue flowerpot']);
    await waitFor(async () => (await mem0(t, other.key).get((unusable as Memory).id)).embedding_status === 'indexed' && (await mem0(t, ours.key).get((lost as Memory).id)).embedding_status === 'indexed', {
      timeoutMs: 60_000,
      message: 'both memories indexed',
    });
    // another process set the first project's memories to a model this worker has no server for
    // (no OPENAI_BASE_URL here); the second project's vector went missing
    await t.runtime.db('project_settings').insert({ project_id: other.projectId, memory_embed_setting: 'openai/text-embedding-3-small', memory_embed_model: 'openai/text-embedding-3-small', updated_at: Date.now() });
    const spec = await t.runtime.memoryIndexer.collection(ours.projectId);
    await t.runtime.vectors.deleteByIds(spec, ours.projectId, [(lost as Memory).id]);

    // the indexed-memories walk (a cursor shared by every pass, by memory id) starts just before
    // the unusable project's memory, which comes first
    const first = [(unusable as Memory).id, (lost as Memory).id].sort()[0] as string;
    const before = (await t.runtime.db('memories').where('id', '<', first).max('id as id').first()) as { id: string | null };
    await t.runtime.db('reconcile_cursors').where({ name: 'memories.indexed' }).delete();
    await t.runtime.db('reconcile_cursors').insert({ name: 'memories.indexed', position: before.id ?? '', updated_at: Date.now() });
    const pass = reconciliation(ours.projectId, new Set(), true);
    try {
      let skipped = false;
      await waitFor(
        async () => {
          const report = await pass.pass(log);
          skipped ||= report.errors.some((e) => e.includes(other.projectId) && e.includes('openai/text-embedding-3-small'));
          return skipped && (await t.runtime.vectors.existing(spec, ours.projectId, [(lost as Memory).id])).size === 1 && (await mem0(t, ours.key).get((lost as Memory).id)).embedding_status === 'indexed';
        },
        { timeoutMs: 30_000, intervalMs: 100, message: "the unusable project named in a report, and the other project's missing vector repaired" },
      );
      expect(await mem0(t, ours.key).search(user, 'where is the spare key?')).to.deep.equal([(lost as Memory).id]);
      // the unusable project's memory is left as it was
      expect((await mem0(t, other.key).get((unusable as Memory).id)).embedding_status).to.equal('indexed');
    } finally {
      // later test files' runtimes (one database per run) must not meet a model only this test set
      await t.runtime.db('project_settings').where({ project_id: other.projectId }).delete();
    }
  });

  it('skips chunks of a base whose embedding model this worker cannot use, and still checks and repairs the other bases', async () => {
    const { key, projectId } = await newProject(t);
    const auth = token(key);
    const docs: Array<{ kb: string; id: string }> = [];
    for (const content of ['The lighthouse keeper lights the lamp at dusk.', 'The ferry to the island leaves on the hour.']) {
      const kb = unique('kb');
      expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb })).status).to.equal(201);
      const doc = await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: 'note.txt', content });
      docs.push({ kb, id: doc.body.id as string });
    }
    const ready = async (): Promise<boolean> => {
      for (const { kb, id } of docs) if ((await t.http.get(`/v1/knowledge/${kb}/documents/${id}`).set('Authorization', auth)).body.status !== 'ready') return false;
      return true;
    };
    await waitFor(ready, { timeoutMs: 60_000, message: 'both documents ready' });
    const [bad, good] = docs as [{ kb: string; id: string }, { kb: string; id: string }];
    // a base of a model this worker has no key for, read before the other in the chunk walk
    await t.runtime.db('knowledge_bases').where({ project_id: projectId, name: bad.kb }).update({ embed_model: 'cohere/embed-v4.0' });
    const goodModel = ((await t.runtime.db('knowledge_bases').where({ project_id: projectId, name: good.kb }).first('embed_model')) as { embed_model: string }).embed_model;
    const spec = await t.runtime.knowledge.collection(goodModel);
    const goodChunks = async (): Promise<string[]> => ((await t.runtime.db('knowledge_chunks').where({ document_id: good.id }).select('id')) as Array<{ id: string }>).map((c) => c.id);
    await t.runtime.vectors.deleteByIds(spec, projectId, await goodChunks());

    // The chunk walk (a cursor shared by every pass, by chunk id) starts just before this test's
    // chunks, the newest of the table: which base's chunk comes first depends on which document
    // the queue processed first, so the walk goes on until it has met both.
    const ours = ((await t.runtime.db('knowledge_chunks').whereIn('document_id', docs.map((d) => d.id)).select('id')) as Array<{ id: string }>).map((c) => c.id).sort();
    const before = (await t.runtime.db('knowledge_chunks').where('id', '<', ours[0] as string).max('id as id').first()) as { id: string | null };
    await t.runtime.db('reconcile_cursors').where({ name: 'knowledge.chunks' }).delete();
    await t.runtime.db('reconcile_cursors').insert({ name: 'knowledge.chunks', position: before.id ?? '', updated_at: Date.now() });
    const pass = reconciliation(projectId, new Set());
    let skipped = false;
    await waitFor(
      async () => {
        const report = await pass.pass(log);
        skipped ||= report.errors.some((e) => e.includes('cohere/embed-v4.0'));
        const chunks = await goodChunks();
        return skipped && chunks.length > 0 && (await t.runtime.vectors.existing(spec, projectId, chunks)).size === chunks.length && (await ready());
      },
      { timeoutMs: 30_000, intervalMs: 100, message: "the skipped base named in a report, and the other base's missing chunk vectors repaired" },
    );
    expect(skipped, 'the skipped base named in a report').to.equal(true);
  });
});

/** A Milvus Lite of this test's own, which it may stop and start again on the same data. */
class PrivateMilvus {
  private child: ChildProcess | undefined;
  private output = '';
  readonly dataDir = tempDir('cairn-milvus-');

  constructor(readonly port: number) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const bin = path.join(repoRoot, '.cache/milvus-venv/bin/milvus-lite');
    const child = spawn(bin, ['server', '--data-dir', this.dataDir, '--host', '127.0.0.1', '--port', String(this.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000)));
    child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000)));
    this.child = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`milvus-lite exited ${child.exitCode}: ${this.output}`);
        return reachable(this.address, this.port, 500);
      },
      { timeoutMs: 60_000, intervalMs: 200, message: `Milvus Lite on ${this.port}` },
    );
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
}

if (isProduction) {
  describe('indexing through a Milvus restart', function () {
    this.timeout(240_000);
    let milvus: PrivateMilvus;
    let t: TestRuntime | undefined;

    before(async () => {
      milvus = new PrivateMilvus(await freePort());
      await milvus.start();
    });
    after(async () => {
      await t?.close();
      await milvus.stop();
    });

    it('acknowledges writes during the outage, serves search again after the restart without restarting Cairn, and loses and duplicates nothing', async () => {
      t = await startRuntime({
        env: { MILVUS_ADDRESS: milvus.address, MILVUS_TIMEOUT_MS: '3000', RECONCILE_INTERVAL_MS: '1000', RECONCILE_GRACE_MS: '2000' },
      });
      const { key } = await newProject(t);
      const api = mem0(t, key);
      const user = unique('u');
      // a document, so that reconciliation's chunk check has chunks to ask Milvus about
      const kb = unique('kb');
      expect((await t.http.post('/v1/knowledge').set('Authorization', token(key)).send({ name: kb })).status).to.equal(201);
      const doc = await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', token(key)).send({ filename: 'note.txt', content: 'The harbour lights are lit at dusk.' });
      const texts = (from: number, n: number) => Array.from({ length: n }, (_, i) => `Note number ${from + i} about topic ${(from + i) % 7}`);
      const written: Memory[] = [];
      for (let i = 0; i < 40; i += 10) written.push(...(await api.add(user, texts(i, 10))));
      await waitFor(async () => (await api.search(user, 'note about a topic') as string[]).length === 40, { timeoutMs: 60_000, message: '40 memories searchable before the outage' });
      await waitFor(async () => (await t?.http.get(`/v1/knowledge/${kb}/documents/${doc.body.id}`).set('Authorization', token(key)))?.body.status === 'ready', {
        timeoutMs: 60_000,
        message: 'the document ready before the outage',
      });

      await milvus.stop();
      for (let i = 40; i < 100; i += 10) written.push(...(await api.add(user, texts(i, 10))));
      expect(written, 'every write acknowledged during the outage').to.have.length(100);
      const during = await api.search(user, 'note');
      expect(during, 'search during the outage is a 503, not a 500').to.equal(503);
      await waitFor(async () => (await api.get((written[99] as Memory).id)).embedding_error?.match(/Milvus/) ?? null, {
        timeoutMs: 30_000,
        message: 'the outage recorded on a pending memory',
      });
      expect((await api.get((written[99] as Memory).id)).embedding_status).to.equal('pending');
      // reconciliation skips nothing while Milvus is down: both vector checks fail and stay where they were
      const cursors = async () => (await t?.runtime.db('reconcile_cursors').whereIn('name', ['memories.indexed', 'knowledge.chunks']).orderBy('name').select('name', 'position')) ?? [];
      const cursorsBefore = await cursors();
      const report = await t.runtime.reconciliation.pass(log);
      expect(report.errors.filter((e) => /^(indexed memories|knowledge chunks): Milvus is unreachable/.test(e)), report.errors.join('\n')).to.have.length(2);
      expect(await cursors()).to.deep.equal(cursorsBefore);

      await milvus.start();
      const startedAt = Date.now();
      await waitFor(async () => Array.isArray(await api.search(user, 'note')), { timeoutMs: 30_000, message: 'search answering again after the restart' });
      const ids = await waitFor(
        async () => {
          const found = await api.search(user, 'note about a topic');
          return Array.isArray(found) && found.length === 100 ? found : null;
        },
        { timeoutMs: 150_000, intervalMs: 500, message: 'all 100 memories searchable after the restart' },
      );
      const caughtUpMs = Date.now() - startedAt;
      expect(new Set(ids).size, 'no memory found twice').to.equal(100);
      expect([...new Set(ids)].sort()).to.deep.equal(written.map((m) => m.id).sort());
      // a memory is searchable once its vector is written, and marked indexed just after
      const statuses = async () => Promise.all(written.map(async (m) => (await api.get(m.id)).embedding_status));
      await waitFor(async () => (await statuses()).every((status) => status === 'indexed'), { timeoutMs: 60_000, intervalMs: 500, message: 'all 100 memories marked indexed after the restart' });
      for (const m of written) expect((await api.get(m.id)).embedding_status).to.equal('indexed');
      process.stdout.write(`      caught up ${caughtUpMs} ms after Milvus restarted\n`);
    });
  });

  describe('extraction while Redis is down', function () {
    this.timeout(60_000);

    it('answers 503 with Retry-After within its limit instead of waiting for Redis', async () => {
      const port = await freePort();
      const t = await startRuntime({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, EXTRACT_TIMEOUT_MS: '5000' } });
      try {
        const { key } = await newProject(t);
        const auth = token(key);
        const schema = unique('lead').toLowerCase();
        const created = await t.http
          .post('/v1/schemas')
          .set('Authorization', auth)
          .send({ name: schema, json_schema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] } });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        const started = Date.now();
        const res = await t.http.post(`/v1/records/${schema}/extract`).set('Authorization', auth).send({ text: 'Reach me at jane@acme.com', user_id: 'u' });
        const took = Date.now() - started;
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.headers['retry-after']).to.match(/^\d+$/);
        expect(took, `answered in ${took} ms`).to.be.below(5_000 + 1_000);
      } finally {
        await t.close();
      }
    });
  });
}
