import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDatabase, ensureMysqlDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { reachable } from '../../lib/reachable.js';
import { notes } from './corpus.js';
import { Api, childEnv, percentile, production, startChild, startWorker, stopChild } from './children.js';

// Bulk writes: N typed records stored one request at a time (8 in flight) against the same
// records stored in batches of B (POST /v1/records/{schema}/batch, one batch at a time), on the
// production profile (MariaDB, Redis, Milvus Lite; an API process and a worker process). Timed
// from the first request to the last answer (acknowledged) and to every record indexed, the two
// ways interleaved for R rounds; medians. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
  },
});
const N = Number(args.records);
const B = Number(args.batch);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
if (![N, B, ROUNDS, CONCURRENCY].every((x) => Number.isInteger(x) && x > 0) || B > 1000) {
  process.stderr.write('--records, --batch (at most 1000), --rounds and --concurrency must be positive integers\n');
  process.exit(2);
}
// A database of its own: the relay of whatever else runs against cairn_bench would take its outbox entries.
const DATABASE_URL = process.env.BENCH_BULK_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench_bulk';
const SCHEMA = 'bench-bulk';
const USER = 'bench-bulk';
const RUN_TIMEOUT_MS = 180_000;
const POLL_MS = 100;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

type Way = 'single' | 'batch';

interface Run {
  way: Way;
  round: number;
  /** First request to the last answer, seconds. */
  acknowledged: number;
  /** First request to every record seen indexed, seconds. */
  indexed: number;
}

/** Stores `texts` as records of run `runId`, one request each or `B` per request. */
async function write(api: Api, way: Way, texts: string[], runId: string): Promise<void> {
  const item = (note: string) => ({ record: { note }, user_id: USER, run_id: runId });
  if (way === 'batch') {
    for (let i = 0; i < texts.length; i += B) await api.call('POST', `/v1/records/${SCHEMA}/batch`, { records: texts.slice(i, i + B).map(item) });
    return;
  }
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < texts.length; i = next++) await api.call('POST', `/v1/records/${SCHEMA}`, item(texts[i] as string));
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

/** Resolves once every record of the run is indexed (or failed), polling the database. */
async function indexedAll(db: Knex, runId: string, count: number, worker: ChildProcess): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const [row] = (await db('memories').where({ user_id: USER, run_id: runId }).whereIn('embedding_status', ['indexed', 'failed']).count({ n: '*' })) as Array<{ n: number | string }>;
    if (Number(row?.n) >= count) return;
    if (worker.exitCode !== null || worker.signalCode !== null) throw new Error('the worker exited during the run');
    if (Date.now() > deadline) throw new Error(`run ${runId}: not every record indexed within ${RUN_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function measure(api: Api, db: Knex, worker: ChildProcess, way: Way, round: number, seed: number, count = N): Promise<Run> {
  const texts = notes(count, seed);
  const runId = `${way}-${round}-${Date.now().toString(36)}`;
  const started = performance.now();
  const [acknowledged] = await Promise.all([write(api, way, texts, runId).then(() => performance.now() - started), indexedAll(db, runId, count, worker)]);
  const run = { way, round, acknowledged: acknowledged / 1000, indexed: (performance.now() - started) / 1000 };
  process.stderr.write(`[round ${round}] ${way}: acknowledged ${run.acknowledged.toFixed(2)} s, indexed ${run.indexed.toFixed(2)} s\n`);
  return run;
}

/** Deletes the bench's records (their vectors through the queue) and waits until the outbox and the embedding queue are idle. */
async function clean(api: Api, db: Knex, embedding: Queue): Promise<void> {
  await api.call('DELETE', `/v1/memories?user_id=${USER}`);
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const [row] = (await db('outbox').count({ n: '*' })) as Array<{ n: number | string }>;
    const busy = Object.values(await embedding.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).reduce((s, x) => s + x, 0);
    if (Number(row?.n) === 0 && busy === 0) return;
    if (Date.now() > deadline) throw new Error('the queue did not drain after deleting the records');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 0.5);

async function main(): Promise<void> {
  process.stdout.write(`Cairn bulk writes — node ${process.version}, ${os.cpus().length} cores; ${N} records one request at a time (${CONCURRENCY} in flight) vs batches of ${B}, ${ROUNDS} rounds\n`);
  if (!(await reachable(production.milvusAddress, 19530, 1_000))) throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
  await ensureMysqlDatabase(DATABASE_URL);
  const db = createDatabase({ databaseUrl: DATABASE_URL, dataDir: '' });
  await migrateLatest(db);
  const prefix = `bench-bulk-${Date.now().toString(36)}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const env = childEnv('production', dataDir, 'warn', { DATABASE_URL, LOCAL_MODEL_DIR: localModelDir, QUEUE_PREFIX: prefix });
  const connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
  const queues = QUEUE_NAMES.map((name) => new Queue(name, { connection, prefix: prefix }));
  const procs: ChildProcess[] = [];
  try {
    const child = await startChild('api', 'cairn-api', env);
    procs.push(child.proc);
    const embedding = queues[QUEUE_NAMES.indexOf('embedding')] as Queue;
    const worker = await startWorker('worker', env, async () => (await embedding.getWorkersCount()) >= 1);
    procs.push(worker);
    const api = new Api(child);
    await api.call('POST', '/v1/schemas', { name: SCHEMA, json_schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, embed_template: '{{note}}' }, [409]);
    // leftovers of an interrupted run, then a warm-up (model loaded, collection created), not timed
    await clean(api, db, embedding);
    await measure(api, db, worker, 'single', 0, 9_000_000, 64);

    const runs: Run[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // alternate which way goes first, so neither always runs on a warmer (or busier) machine
      const ways: Way[] = round % 2 ? ['single', 'batch'] : ['batch', 'single'];
      for (const way of ways) runs.push(await measure(api, db, worker, way, round, round * 100_000 + (way === 'batch' ? 50_000 : 0)));
    }

    const of = (way: Way, key: 'acknowledged' | 'indexed'): number => median(runs.filter((r) => r.way === way).map((r) => r[key]));
    const summary = {
      bench: 'bulk',
      node: process.version,
      cores: os.cpus().length,
      records: N,
      batch: B,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      runs,
      median: {
        single: { acknowledged: of('single', 'acknowledged'), indexed: of('single', 'indexed') },
        batch: { acknowledged: of('batch', 'acknowledged'), indexed: of('batch', 'indexed') },
      },
      ratio: { acknowledged: of('single', 'acknowledged') / of('batch', 'acknowledged'), indexed: of('single', 'indexed') / of('batch', 'indexed') },
    };
    const row = (label: string, key: 'acknowledged' | 'indexed'): string =>
      `| ${label} | ${of('single', key).toFixed(2)} s | ${of('batch', key).toFixed(2)} s | ${(of('single', key) / of('batch', key)).toFixed(2)}× |`;
    process.stdout.write(
      ['', `| median of ${ROUNDS} | one request each | batches of ${B} | single / batch |`, '|---|---:|---:|---:|', row('all acknowledged', 'acknowledged'), row('all indexed', 'indexed'), ''].join('\n'),
    );
    process.stdout.write(`\n${JSON.stringify(summary)}\n`);
    // the next run starts by cleaning too, so a slow clean-up here only warns
    await clean(api, db, embedding).catch((err: unknown) => process.stderr.write(`warning: ${err instanceof Error ? err.message : String(err)}\n`));
  } finally {
    await Promise.all(procs.map(stopChild));
    for (const queue of queues) await queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:bulk failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
