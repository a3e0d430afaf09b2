import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { LOCAL_MODEL_DIR, tempDir } from '../helpers.js';
import { Ledger, type Tally } from './ledger.js';
import { Stack } from './stack.js';

// Faults on the production profile (real start:api and start:worker processes, MariaDB, a private
// Redis and a private Milvus Lite). Each case writes while something breaks, lets it recover, and
// counts what was acknowledged, stored, indexed and searchable: nothing acknowledged may be lost
// or stored twice, and everything must become searchable without restarting anything.

const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_MS ?? 20_000);
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

  it('a worker killed mid-batch: its jobs run again on the other worker', async () => {
    stack = await Stack.start({ workers: 2 });
    const ledger = new Ledger(stack);
    const writing = ledger.write(300, 6);
    await sleep(1_500);
    await stack.workers[0]?.kill('SIGKILL');
    const killedAt = Date.now();
    await writing;
    expectClean(await ledger.settle('worker killed mid-batch', killedAt));
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

  it('Milvus stopped for 20 s and restarted: indexing waits, search comes back without a restart', async () => {
    stack = await Stack.start({ workers: 1 });
    const ledger = new Ledger(stack);
    await ledger.write(60, 4);
    await stack.milvus.stop();
    const during = ledger.writeUntil(sleep(OUTAGE_MS), 400, 4);
    await sleep(OUTAGE_MS);
    await during;
    await stack.milvus.start();
    const backAt = Date.now();
    await ledger.write(60, 4);
    expectClean(await ledger.settle('Milvus stopped 20 s and restarted', backAt));
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
    await sleep(Math.min(OUTAGE_MS, 10_000));
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
