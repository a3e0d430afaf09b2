import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDatabase, type Knex } from '../../db/knex.js';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { reachable } from '../../lib/reachable.js';
import { chatLines } from './corpus.js';
import { Api, childEnv, latency, percentile, production, runScript, startChild, startWorker, stopChild, timed, type ProfileName } from './children.js';

// Does the write path stay as fast across a change? Two checkouts (--before DIR --after DIR), each
// server started from its own checkout's scripts on its own database, measured interleaved
// (before, after, before, after, ...) on the same machine: the latency of POST /v3/memories/add/
// (infer false, one short chat line a request, 8 in flight) and indexing throughput (memories
// indexed a second, from the first add until every one is indexed). Medians of R rounds, and
// after / before. Embedded profile: one process, SQLite in a fresh directory per checkout.
// Production profile: an API process and a worker process per checkout, each checkout its own
// MariaDB database and Redis prefix, Milvus Lite shared (each database its own project, which is
// Milvus's partition key).

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    profile: { type: 'string', default: 'both' },
    adds: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
  },
});
const N = Number(args.adds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const PROFILES: ProfileName[] = args.profile === 'both' ? ['embedded', 'production'] : [args.profile as ProfileName];
if (!args.before || !args.after || ![N, ROUNDS, CONCURRENCY].every((x) => Number.isInteger(x) && x > 0) || !PROFILES.every((p) => p === 'embedded' || p === 'production')) {
  process.stderr.write('Usage: write-path.bench.ts --before DIR --after DIR [--profile embedded|production|both] [--adds 1000] [--rounds 3] [--concurrency 8]\n');
  process.exit(2);
}
const CHECKOUTS = { before: path.resolve(args.before), after: path.resolve(args.after) };
type Side = keyof typeof CHECKOUTS;
const SIDES: Side[] = ['before', 'after'];
for (const side of SIDES) {
  if (!fs.existsSync(path.join(CHECKOUTS[side], 'scripts', 'bench', 'servers.ts'))) throw new Error(`--${side} ${CHECKOUTS[side]} is not a Cairn checkout`);
}
// Databases of their own: the two checkouts' migrations differ, and another bench's relay must not take their outbox entries.
const DATABASES: Record<Side, string> = {
  before: process.env.BENCH_WRITE_BEFORE_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench_ws_before',
  after: process.env.BENCH_WRITE_AFTER_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench_ws_after',
};
const WARM_UP = 64;
const RUN_TIMEOUT_MS = 300_000;
// deleting 1,000 memories queues their vector deletes; on a busy machine those take minutes
const CLEAN_TIMEOUT_MS = 300_000;
const POLL_MS = 100;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

/** A checkout's running server(s) on a profile, and what the bench reads of them. */
interface Target {
  side: Side;
  api: Api;
  db: Knex;
  procs: ChildProcess[];
  /** The production profile's queues, obliterated at the end. */
  queues: Queue[];
  /** The production profile's embedding queue, to wait for it to drain (the maintenance queue always holds its delayed schedules). */
  embedding: Queue | null;
  close(): Promise<void>;
}

interface Run {
  profile: ProfileName;
  side: Side;
  round: number;
  p50: number;
  p99: number;
  /** Memories indexed a second, from the first add to the last one indexed. */
  perSecond: number;
  /** First add to the last answer, seconds. */
  acknowledged: number;
}

async function startTarget(profile: ProfileName, side: Side, stamp: string): Promise<Target> {
  const root = CHECKOUTS[side];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `cairn-write-${side}-`));
  const procs: ChildProcess[] = [];
  const connection = profile === 'production' ? new Redis(production.redisUrl, { maxRetriesPerRequest: null }) : null;
  const prefix = `ws-${side}-${stamp}`;
  const queues = connection ? QUEUE_NAMES.map((name) => new Queue(name, { connection, prefix })) : [];
  const databaseUrl = profile === 'production' ? DATABASES[side] : null;
  const env = childEnv(profile, dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl, QUEUE_PREFIX: prefix } : {}) });
  const close = async (): Promise<void> => {
    await Promise.all(procs.map(stopChild));
    for (const queue of queues) await queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(queues.map((q) => q.close()));
    connection?.disconnect();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // each checkout migrates its own database with its own migrations
    if (databaseUrl) await runScript(path.join(root, 'scripts', 'migrate.ts'), [], env, root);
    const child = await startChild(`${side}`, profile === 'production' ? 'cairn-api' : 'cairn', env, true, root);
    procs.push(child.proc);
    if (connection) {
      const embedding = queues[QUEUE_NAMES.indexOf('embedding')] as Queue;
      procs.push(await startWorker(`${side}-worker`, env, async () => (await embedding.getWorkersCount()) >= 1, root));
    }
    const db = createDatabase({ databaseUrl, dataDir });
    return {
      side,
      api: new Api(child),
      db,
      procs,
      queues,
      embedding: connection ? (queues[QUEUE_NAMES.indexOf('embedding')] as Queue) : null,
      close: async () => {
        await db.destroy();
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

const userOf = (round: number): string => `write-bench-${round}`;

/** Resolves once `count` memories of `user` are indexed (or failed), polling the database. */
async function indexedAll(target: Target, user: string, count: number): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const [row] = (await target.db('memories').where({ user_id: user }).whereIn('embedding_status', ['indexed', 'failed']).count({ n: '*' })) as Array<{ n: number | string }>;
    if (Number(row?.n) >= count) return;
    if (target.procs.some((p) => p.exitCode !== null || p.signalCode !== null)) throw new Error(`a ${target.side} server exited during the run`);
    if (Date.now() > deadline) throw new Error(`${target.side}: not every memory of ${user} indexed within ${RUN_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Adds `texts` for `user`, one a request, CONCURRENCY in flight; the latency of each add (ms). */
async function add(api: Api, user: string, texts: string[]): Promise<number[]> {
  const samples: number[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < texts.length; i = next++) {
      samples.push(await timed(() => api.call('POST', '/v3/memories/add/', { messages: [{ role: 'user', content: texts[i] }], user_id: user, infer: false })));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return samples;
}

/** Deletes `user`'s memories and waits until the outbox (and on production the embedding queue) are idle, so the next run starts from the same state. */
async function clean(target: Target, user: string): Promise<void> {
  await target.api.call('DELETE', `/v1/memories?user_id=${user}`);
  const deadline = Date.now() + CLEAN_TIMEOUT_MS;
  for (;;) {
    const [row] = (await target.db('outbox').count({ n: '*' })) as Array<{ n: number | string }>;
    const busy = target.embedding ? Object.values(await target.embedding.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).reduce((s, x) => s + x, 0) : 0;
    if (Number(row?.n) === 0 && busy === 0) return;
    if (Date.now() > deadline) throw new Error(`${target.side}: the outbox (${Number(row?.n)}) and embedding queue (${busy}) did not drain after deleting ${user}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function measure(profile: ProfileName, target: Target, round: number, count: number): Promise<Run> {
  const user = userOf(round);
  await clean(target, user);
  // the same texts for both checkouts in a round
  const texts = chatLines(count, round * 100_000);
  const started = performance.now();
  const [[samples, acknowledged]] = await Promise.all([
    add(target.api, user, texts).then((latencies) => [latencies, (performance.now() - started) / 1000] as const),
    indexedAll(target, user, count),
  ]);
  const seconds = (performance.now() - started) / 1000;
  const { p50, p99 } = latency(samples);
  const run: Run = { profile, side: target.side, round, p50, p99, perSecond: count / seconds, acknowledged };
  if (round > 0) process.stderr.write(`[${profile} round ${round}] ${target.side}: add p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ${run.perSecond.toFixed(1)} indexed/s\n`);
  await clean(target, user);
  return run;
}

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 0.5);

async function benchProfile(profile: ProfileName): Promise<Run[]> {
  const stamp = Date.now().toString(36);
  const targets: Target[] = [];
  try {
    // both checkouts run side by side for the whole profile; only one is written to at a time
    for (const side of SIDES) targets.push(await startTarget(profile, side, stamp));
    // warm-up, not counted: model loaded, statements prepared, the collection there
    for (const target of targets) await measure(profile, target, 0, WARM_UP);
    const runs: Run[] = [];
    for (let round = 1; round <= ROUNDS; round++) for (const target of targets) runs.push(await measure(profile, target, round, N));
    return runs;
  } finally {
    for (const target of targets) await target.close();
  }
}

async function main(): Promise<void> {
  process.stdout.write(
    `Cairn write path, before vs after — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)}; ${N} adds (infer false, one chat line each, ${CONCURRENCY} in flight), ${ROUNDS} rounds interleaved\nbefore: ${CHECKOUTS.before}\nafter:  ${CHECKOUTS.after}\n`,
  );
  if (PROFILES.includes('production') && !(await reachable(production.milvusAddress, 19530, 1_000))) {
    throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
  }
  const runs: Run[] = [];
  for (const profile of PROFILES) runs.push(...(await benchProfile(profile)));

  const of = (profile: ProfileName, side: Side, key: 'p50' | 'p99' | 'perSecond'): number => median(runs.filter((r) => r.profile === profile && r.side === side).map((r) => r[key]));
  const lines = ['', '| profile | round | before p50 | after p50 | before p99 | after p99 | before indexed/s | after indexed/s |', '|---|---|---:|---:|---:|---:|---:|---:|'];
  const medians: Record<string, unknown> = {};
  for (const profile of PROFILES) {
    const cell = (side: Side, round: number, key: 'p50' | 'p99' | 'perSecond'): string => {
      const value = runs.find((r) => r.profile === profile && r.side === side && r.round === round)?.[key] ?? NaN;
      return key === 'perSecond' ? value.toFixed(1) : `${value.toFixed(1)} ms`;
    };
    for (let round = 1; round <= ROUNDS; round++) {
      lines.push(`| ${profile} | ${round} | ${cell('before', round, 'p50')} | ${cell('after', round, 'p50')} | ${cell('before', round, 'p99')} | ${cell('after', round, 'p99')} | ${cell('before', round, 'perSecond')} | ${cell('after', round, 'perSecond')} |`);
    }
    const m = (side: Side) => ({ p50: of(profile, side, 'p50'), p99: of(profile, side, 'p99'), perSecond: of(profile, side, 'perSecond') });
    const before = m('before');
    const after = m('after');
    const ratio = { p50: after.p50 / before.p50, p99: after.p99 / before.p99, perSecond: after.perSecond / before.perSecond };
    medians[profile] = { before, after, ratio };
    lines.push(
      `| ${profile} | **median** | ${before.p50.toFixed(1)} ms | ${after.p50.toFixed(1)} ms | ${before.p99.toFixed(1)} ms | ${after.p99.toFixed(1)} ms | ${before.perSecond.toFixed(1)} | ${after.perSecond.toFixed(1)} |`,
      `| ${profile} | after / before | ${ratio.p50.toFixed(2)}× | | ${ratio.p99.toFixed(2)}× | | ${ratio.perSecond.toFixed(2)}× | |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'write-path', node: process.version, cores: os.cpus().length, adds: N, concurrency: CONCURRENCY, rounds: ROUNDS, checkouts: CHECKOUTS, runs, medians })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:write-path failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
