import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { LOCAL_MODEL_DIR, tempDir, waitFor } from '../helpers.js';
import { Ledger, type Tally } from './ledger.js';
import { Stack } from './stack.js';
import { entitiesOf } from '../../core/memory/entities.js';

// Faults on the production profile (real start:api and start:worker processes, MariaDB, a private
// Redis and a private Milvus Lite). Each case writes while something breaks, lets it recover, and
// counts what was acknowledged, stored, indexed and searchable: nothing acknowledged may be lost
// or stored twice, and everything must become searchable without restarting anything.

const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_MS ?? 20_000);
// Longer than a fixed budget of retries would last (5 attempts over ~15 s of backoff): such an outage
// must delay indexing, never end it.
const LONG_OUTAGE_MS = Number(process.env.FAULT_LONG_OUTAGE_MS ?? 30_000);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function expectClean(tally: Tally): void {
  expect(tally.acknowledged, 'some writes were acknowledged').to.be.greaterThan(0);
  expect(tally.lost, 'acknowledged writes lost').to.equal(0);
  expect(tally.duplicated, 'writes stored twice').to.equal(0);
  expect(tally.searchable, 'acknowledged writes searchable').to.equal(tally.acknowledged);
}

describe('faults (production profile)', function () {
  this.timeout(420_000);
  let stack: Stack | undefined;

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('a worker killed mid-batch: its jobs run again on the other worker, and the entity index and validity stay consistent', async () => {
    stack = await Stack.start({ workers: 2 });
    const ledger = new Ledger(stack);
    const writing = ledger.write(300, 6);
    await sleep(1_000);
    // updates supersede texts while the worker dies: the versions and new texts are indexed by jobs it may hold
    const updating = ledger.update(60, 2);
    await sleep(500);
    await stack.workers[0]?.kill('SIGKILL');
    const killedAt = Date.now();
    await writing;
    const updated = await updating;
    expectClean(await ledger.settle('worker killed mid-batch', killedAt));
    expect(updated.length, 'updates acknowledged').to.be.greaterThan(0);
    // the versions are indexed too before the index is compared: waited on as a client waits on an
    // import, through the status endpoint, which must then count every acknowledged write and each
    // version an acknowledged update superseded as indexed, and nothing pending or failed
    const project = stack;
    const status = await waitFor(
      async () => {
        const res = await project.http().get('/v3/memories/status/').set('Authorization', project.auth()).timeout({ response: 10_000 });
        return res.status === 200 && res.body.pending === 0 ? res.body : null;
      },
      { timeoutMs: 120_000, intervalMs: 1_000, message: 'nothing pending in /v3/memories/status/' },
    );
    const written = ledger.acknowledged().length + updated.length;
    expect(status, 'indexing status once settled').to.deep.equal({ total: written, pending: 0, indexed: written, failed: 0 });
    const { entityMismatches, orphanEntities, badChains } = await ledger.consistency(updated, (text) => entitiesOf(text).map((e) => `${e.kind}:${e.key.slice(0, 200)}`));
    expect(entityMismatches, 'memories whose entity rows differ from their text').to.deep.equal([]);
    expect(orphanEntities, 'entity rows of memories that do not exist').to.equal(0);
    expect(badChains, 'updated memories without exactly one version ending when the new text began').to.deep.equal([]);
  });

  it('Redis stopped for 20 s: writes go on, queued work resumes when it is back', async () => {
    stack = await Stack.start({ workers: 1 });
    const ledger = new Ledger(stack);
    const before = ledger.write(60, 4);
    await stack.redis.stop();
    await before;
    const during = ledger.writeUntil(sleep(OUTAGE_MS), 400, 4);
    await sleep(OUTAGE_MS);
    await during;
    await stack.redis.start();
    const backAt = Date.now();
    await ledger.write(60, 4);
    expectClean(await ledger.settle('Redis stopped 20 s', backAt));
  });

  it('Milvus stopped for 30 s and restarted: indexing waits, search comes back without a restart', async () => {
    stack = await Stack.start({ workers: 1 });
    const http = stack.http();
    const auth = stack.auth();
    expect((await http.post('/v1/indexes').set('Authorization', auth).send({ name: 'points', dimension: 3, metric: 'cosine' })).status).to.equal(201);
    const upsert = await http.post('/v1/indexes/points/vectors/upsert').set('Authorization', auth).send({ vectors: [{ id: 'a', values: [1, 0, 0] }, { id: 'b', values: [0, 1, 0] }] });
    expect(upsert.status).to.equal(200);
    const ledger = new Ledger(stack);
    await ledger.write(60, 4);
    await stack.milvus.stop();
    const during = ledger.writeUntil(sleep(LONG_OUTAGE_MS), 400, 4);
    await sleep(LONG_OUTAGE_MS);
    await during;
    await stack.milvus.start();
    const backAt = Date.now();
    // The API was not restarted: index queries answer again as soon as Milvus does.
    const query = await waitFor(async () => {
      const res = await http.post('/v1/indexes/points/query').set('Authorization', auth).send({ vector: [1, 0.1, 0], top_k: 1 });
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 503]);
      return res.status === 200 ? res : null;
    }, { timeoutMs: 60_000, intervalMs: 500, message: 'index query answers after Milvus restarts' });
    expect(query.body.matches[0]?.id).to.equal('a');
    await ledger.write(60, 4);
    expectClean(await ledger.settle('Milvus stopped 30 s and restarted', backAt));
  });

  it('the API killed during a burst: what it acknowledged is kept, and indexed once restarted', async () => {
    stack = await Stack.start({ workers: 1 });
    const ledger = new Ledger(stack);
    const burst = ledger.write(400, 8);
    await sleep(2_000);
    await stack.api.kill('SIGKILL');
    await burst;
    await stack.startApi();
    const backAt = Date.now();
    await ledger.write(40, 4);
    expectClean(await ledger.settle('API killed during a burst', backAt));
  });

  it('the embedder unavailable, then back: memories wait as pending and are indexed once the model is there', async () => {
    const modelDir = tempDir('cairn-fault-models-');
    stack = await Stack.start({ workers: 1, modelDir });
    const ledger = new Ledger(stack);
    await ledger.write(80, 4);
    await sleep(LONG_OUTAGE_MS);
    const rows: Array<{ embedding_status: string }> = await stack.db('memories').select('embedding_status');
    expect(rows.length).to.be.greaterThan(0);
    expect(rows.every((r) => r.embedding_status === 'pending'), 'nothing ends failed while the model is missing').to.equal(true);
    fs.cpSync(LOCAL_MODEL_DIR, modelDir, { recursive: true });
    expect(fs.existsSync(path.join(modelDir, 'all-MiniLM-L6-v2'))).to.equal(true);
    const backAt = Date.now();
    await ledger.write(20, 4);
    expectClean(await ledger.settle('embedder unavailable, then back', backAt));
  });
});
