import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDatabase, type Knex } from '../../db/knex.js';
import { MilvusConnection } from '../../db/milvus.js';
import { MilvusVectorStore } from '../../db/vectors/milvus.store.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { reachable } from '../../lib/reachable.js';
import { startEmbeddingServer, type EmbeddingCall, type EmbeddingServer } from '../../test/embedding-server.js';
import { notes } from './corpus.js';
import { Api, childEnv, cpuSeconds, machineTicks, migrateProduction, production, startChild, startWorker, stopChild, type Child } from './children.js';

// Scale — does adding worker processes add indexing throughput? Production profile (MariaDB,
// Redis, Milvus Lite), memories embedded by an OpenAI-compatible server that answers each call
// after a fixed delay (I/O-bound jobs, as with a remote provider), one API process and 1, 2 or 4
// `start:worker` processes: each round starts one worker and measures, adds one and measures,
// adds two and measures, so the counts run interleaved (1, 2, 4, 1, 2, 4, …). The report gives
// indexed memories per second and the ratios of the medians. The workers run with the settings of
// the environment (defaults unless set). See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    memories: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '1,2,4' },
    rounds: { type: 'string', default: '3' },
    'delay-ms': { type: 'string', default: '50' },
    'timeout-minutes': { type: 'string', default: '10' },
  },
});
const N = Number(args.memories);
const WORKERS = [...new Set(args.workers.split(',').map(Number))].sort((a, b) => a - b);
const ROUNDS = Number(args.rounds);
const DELAY_MS = Number(args['delay-ms']);
const DEADLINE = Date.now() + Number(args['timeout-minutes']) * 60_000;
if (![N, ROUNDS, ...WORKERS].every((x) => Number.isInteger(x) && x > 0) || !(DELAY_MS >= 0) || !(Number(args['timeout-minutes']) > 0)) {
  process.stderr.write('--memories, --rounds, --workers (comma-separated) must be positive integers, --delay-ms and --timeout-minutes numbers\n');
  process.exit(2);
}

/** A model the embedding server serves; its vector length (384, as the local model's) is learned from one call. */
const MODEL = 'openai/bench-scale-embed';
/** Its memories collection (`modelCollection`), dropped after each run: every run starts empty. */
const COLLECTION = 'memories_openai_bench_scale_embed';
const DIMENSION = 384;
/** Messages per mem0 add, and adds in flight. */
const PER_ADD = 100;
const ADDS_IN_FLIGHT = 4;
const WARM_PER_WORKER = 32;
const POLL_MS = 100;
const DRAIN_TIMEOUT_MS = 120_000;
const MILVUS_TIMEOUT_MS = 120_000;
const TARGETS = { twoOverOne: 1.8, fourOverOne: 3.2 };
/** The settings that decide how much one worker does at once, as the workers run with them. */
const SETTINGS = ['WORKER_CONCURRENCY', 'EMBED_CONCURRENCY', 'OPENAI_EMBED_CONCURRENCY', 'OPENAI_EMBED_BATCH'] as const;

class Timeout extends Error {}

function checkDeadline(what: string): void {
  if (Date.now() > DEADLINE) throw new Timeout(`timed out (--timeout-minutes ${args['timeout-minutes']}) while ${what}`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The embedding queue of the bench's QUEUE_PREFIX: paused while memories are written, so every run starts with all its jobs queued. */
class EmbeddingQueue {
  private readonly connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
  readonly queue: Queue;

  constructor(prefix: string) {
    this.queue = new Queue('embedding', { connection: this.connection, prefix: prefix });
  }

  async queued(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'paused', 'prioritized', 'delayed');
    return Object.values(counts).reduce((s, x) => s + x, 0);
  }

  /** Removes every job (and the paused state); no worker may be running. */
  async clear(): Promise<void> {
    await this.queue.obliterate({ force: true });
  }

  async close(): Promise<void> {
    await this.clear().catch(() => undefined);
    await this.queue.close();
    this.connection.disconnect();
  }
}

/** Memories of one user by indexing status. */
async function progress(db: Knex, projectId: string, user: string): Promise<{ indexed: number; failed: number }> {
  const rows = (await db('memories').where({ project_id: projectId, user_id: user }).select('embedding_status').count({ n: '*' }).groupBy('embedding_status')) as Array<{
    embedding_status: string;
    n: number | string;
  }>;
  const of = (status: string): number => Number(rows.find((r) => r.embedding_status === status)?.n ?? 0);
  return { indexed: of('indexed'), failed: of('failed') };
}

async function waitIndexed(db: Knex, projectId: string, user: string, count: number, workers: ChildProcess[]): Promise<{ indexed: number; failed: number }> {
  for (;;) {
    const now = await progress(db, projectId, user);
    if (now.indexed + now.failed >= count) return now;
    const dead = workers.find((w) => w.exitCode !== null || w.signalCode !== null);
    if (dead) throw new Error(`worker ${dead.pid ?? '?'} exited during the run`);
    checkDeadline(`waiting for ${count - now.indexed - now.failed} memories of ${user} to be indexed`);
    await sleep(POLL_MS);
  }
}

/** Outbox entries not yet handed to the queue (leased ones left out: see the ingest bench). */
async function outboxWaiting(db: Knex): Promise<number> {
  const [row] = (await db('outbox')
    .where((q) => q.whereNull('locked_until').orWhere('locked_until', '<', Date.now()))
    .count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}

/**
 * Drops the bench model's memories collection, on a connection of its own: one held open between
 * runs idles long enough for Milvus Lite to refuse its keep-alive pings.
 */
async function dropVectors(): Promise<void> {
  const milvus = new MilvusConnection(production.milvusAddress, null, createLogger('warn'), MILVUS_TIMEOUT_MS);
  try {
    await new MilvusVectorStore(milvus, createLogger('warn')).dropCollection(COLLECTION);
  } finally {
    await milvus.close();
  }
}

/** Until the outbox has handed every entry to the queue. */
async function waitRelayed(db: Knex): Promise<void> {
  const until = Date.now() + DRAIN_TIMEOUT_MS;
  while ((await outboxWaiting(db)) > 0) {
    if (Date.now() > until) throw new Error(`the outbox did not drain within ${DRAIN_TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
}

/** mem0 add (infer false) of `texts` for `user`, `PER_ADD` messages a request, `ADDS_IN_FLIGHT` requests at once. */
async function addMemories(api: Api, user: string, texts: string[]): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let at = next; at < texts.length; at = next) {
      next += PER_ADD;
      const messages = texts.slice(at, at + PER_ADD).map((content) => ({ role: 'user', content }));
      await api.call('POST', '/v3/memories/add', { messages, user_id: user, infer: false });
    }
  };
  await Promise.all(Array.from({ length: ADDS_IN_FLIGHT }, lane));
}

interface RunResult {
  round: number;
  workers: number;
  seconds: number;
  indexedPerSecond: number;
  failed: number;
  /** Embedding calls during the run, their mean size and the most in flight at once. */
  calls: number;
  meanBatch: number;
  maxInFlight: number;
  /** CPU seconds the worker processes used per second of the run, and the machine's busy share. */
  workerCpu: number;
  machineBusy: number;
}

interface Context {
  db: Knex;
  queue: EmbeddingQueue;
  api: Api;
  projectId: string;
  env: NodeJS.ProcessEnv;
  server: EmbeddingServer;
}

/**
 * One measurement with the workers running now: a warm-up, then `texts` added while the queue is
 * paused, then the clock runs from resuming it until every memory is indexed. The rows are deleted
 * afterwards with the queue paused again and their jobs dropped: the vectors go with the collection
 * at the end of the round rather than one delete job each (Milvus Lite takes ~0.1 s a delete).
 */
async function measure(ctx: Context, workers: ChildProcess[], round: number, texts: string[]): Promise<RunResult> {
  const { db, queue, api, projectId, server } = ctx;
  const w = workers.length;
  const tag = `${round}-${w}-${Date.now().toString(36)}`;
  const warmUser = `bench-scale-warm-${tag}`;
  const user = `bench-scale-${tag}`;
  // Not timed: the workers embed and write a few memories first (connections, the collection, the
  // model's vector length).
  await addMemories(api, warmUser, notes(WARM_PER_WORKER * w, 5_000_000 + round * 10_000 + w * 100));
  await waitIndexed(db, projectId, warmUser, WARM_PER_WORKER * w, workers);

  await queue.queue.pause();
  await addMemories(api, user, texts);
  await waitRelayed(db);
  while ((await queue.queued()) < N) {
    checkDeadline('waiting for the jobs to be queued');
    await sleep(POLL_MS);
  }
  process.stderr.write(`[round ${round}, workers ${w}] ${N} indexing jobs queued; running them\n`);
  const firstCall = server.calls.length;
  const cpuBefore = workers.map((p) => cpuSeconds(p.pid));
  const machineBefore = machineTicks();
  const started = performance.now();
  await queue.queue.resume();
  const done = await waitIndexed(db, projectId, user, N, workers);
  const seconds = (performance.now() - started) / 1000;
  const machineAfter = machineTicks();
  const workerCpu = workers.reduce((s, p, i) => s + cpuSeconds(p.pid) - (cpuBefore[i] as number), 0) / seconds;
  const calls: EmbeddingCall[] = server.calls.slice(firstCall);
  process.stderr.write(`[round ${round}, workers ${w}] ${(done.indexed / seconds).toFixed(0)} indexed/s; cleaning up\n`);

  await queue.queue.pause();
  await api.call('DELETE', `/v1/memories?user_id=${user}`);
  await api.call('DELETE', `/v1/memories?user_id=${warmUser}`);
  await waitRelayed(db);
  await queue.clear(); // the delete jobs
  await queue.queue.resume();
  return {
    round,
    workers: w,
    seconds,
    indexedPerSecond: done.indexed / seconds,
    failed: done.failed,
    calls: calls.length,
    meanBatch: calls.reduce((s, c) => s + c.size, 0) / Math.max(1, calls.length),
    maxInFlight: Math.max(0, ...calls.map((c) => c.inFlight)),
    workerCpu,
    machineBusy: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
  };
}

/** One round: worker processes added up to each count of `WORKERS` in turn (1, 2, 4), measured at each. */
async function round(ctx: Context, r: number, texts: string[], results: RunResult[]): Promise<void> {
  const workers: ChildProcess[] = [];
  try {
    for (const w of WORKERS) {
      process.stderr.write(`\n[round ${r}, workers ${w}] starting worker processes ${workers.length + 1}–${w}\n`);
      const added = Array.from({ length: w - workers.length }, (_, i) => workers.length + i + 1);
      workers.push(...(await Promise.all(added.map((n) => startWorker(`worker ${n}`, ctx.env, async () => (await ctx.queue.queue.getWorkersCount()) >= w)))));
      results.push(await measure(ctx, workers, r, texts));
    }
  } finally {
    await Promise.all(workers.map(stopChild));
    await dropVectors();
  }
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const fixed = (x: number, digits = 1): string => x.toFixed(digits);

function table(results: RunResult[]): string {
  const head = ['round', 'workers', 'indexed/s', 'seconds', 'failed', 'calls', 'texts/call', 'calls in flight (max)', 'worker CPU (cores)', 'machine busy'];
  const rows = results.map((r) => [
    String(r.round),
    String(r.workers),
    fixed(r.indexedPerSecond, 0),
    fixed(r.seconds, 2),
    String(r.failed),
    String(r.calls),
    fixed(r.meanBatch, 1),
    String(r.maxInFlight),
    fixed(r.workerCpu, 2),
    `${fixed(r.machineBusy * 100, 0)} %`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  return [line(head), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const settings = SETTINGS.map((name) => `${name} ${process.env[name] ?? 'default'}`).join(', ');
  process.stdout.write(
    `Cairn scale — node ${process.version}, ${os.cpus().length} cores; ${N} memories, embedding calls answered after ${DELAY_MS} ms, workers ${WORKERS.join(', ')} × ${ROUNDS} rounds (${settings})\n`,
  );
  if (!(await reachable(production.milvusAddress, 19530, 1_000))) {
    throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
  }
  await migrateProduction();
  const server = await startEmbeddingServer({ delayMs: DELAY_MS, dimension: DIMENSION });
  const prefix = `bench-scale-${Date.now().toString(36)}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const env = childEnv('production', dataDir, 'warn', { QUEUE_PREFIX: prefix, OPENAI_BASE_URL: server.url, MEMORY_EMBED_MODEL: MODEL, MILVUS_TIMEOUT_MS: String(MILVUS_TIMEOUT_MS) });
  const queue = new EmbeddingQueue(prefix);
  const db = createDatabase(loadConfig(env as Record<string, string>));
  let child: Child | null = null;
  const results: RunResult[] = [];
  let timedOut: string | null = null;
  try {
    child = await startChild('api', 'cairn-api', env);
    const api = new Api(child);
    const { id: projectId } = (await db('projects').where({ name: 'bench' }).first('id')) as { id: string };
    const texts = notes(N, 0);
    const ctx: Context = { db, queue, api, projectId, env, server };
    await dropVectors(); // left by an interrupted run
    for (let r = 1; r <= ROUNDS && timedOut === null; r++) {
      try {
        await round(ctx, r, texts, results);
      } catch (err) {
        if (!(err instanceof Timeout)) throw err;
        timedOut = err.message;
      }
    }
  } finally {
    if (child) await stopChild(child.proc);
    await queue.close();
    await db.destroy();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const medians = Object.fromEntries(WORKERS.map((w) => [w, median(results.filter((r) => r.workers === w).map((r) => r.indexedPerSecond))]));
  const base = medians[1];
  const ratios = Object.fromEntries(WORKERS.filter((w) => w !== 1).map((w) => [`${w}/1`, base ? (medians[w] as number) / base : NaN]));
  process.stdout.write(`\n${table(results)}\n\nmedian indexed/s: ${WORKERS.map((w) => `${w} worker${w > 1 ? 's' : ''} ${fixed(medians[w] as number, 0)}`).join(', ')}\n`);
  process.stdout.write(`ratios of the medians: ${Object.entries(ratios).map(([k, v]) => `${k} = ${fixed(v, 2)}`).join(', ')} (targets 2/1 ≥ ${TARGETS.twoOverOne}, 4/1 ≥ ${TARGETS.fourOverOne})\n`);
  if (timedOut) process.stdout.write(`\n${timedOut}\n`);
  const summary = { bench: 'scale', node: process.version, cores: os.cpus().length, memories: N, delayMs: DELAY_MS, settings, results, medians, ratios, targets: TARGETS, timedOut };
  process.stdout.write(`\n${JSON.stringify(summary)}\n`);
  return timedOut !== null || results.some((r) => r.failed > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:scale failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
