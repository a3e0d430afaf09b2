import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { memoryCollection } from '../../core/memory/rows.js';
import { createDatabase, ensureMysqlDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { MilvusConnection } from '../../db/milvus.js';
import { MilvusVectorStore } from '../../db/vectors/milvus.store.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { reachable } from '../../lib/reachable.js';
import { Providers } from '../../providers/registry.js';
import { childEnv, machineTicks, processCpu, production, runScript, startChild, startWorker, stopChild, type Child, type ProfileName } from './children.js';

// What the benches of the write path (ingest, import) share: Cairn started on data of its own and
// removed afterwards (MariaDB database, Redis prefix, Milvus vectors), waiting for memories to be
// indexed, what a measurement cost in CPU, and the medians and tables of the report.

/** A process whose CPU time is measured. */
export interface Proc {
  name: string;
  pid: number | undefined;
}

/** CPU seconds one process used during a measurement, and the embedding model's part of them. */
export interface ProcessCpu {
  name: string;
  seconds: number;
  model: number;
}

/** What a measurement cost: CPU by process, and how busy the whole machine was (a share of all cores, and in CPU seconds). */
export interface Usage {
  cpu: ProcessCpu[];
  machineBusy: number;
  machineSeconds: number;
}

/**
 * The local services the production profile uses (MariaDB, Redis, Milvus Lite), found by their
 * command lines: their CPU counts toward what a write costs the machine, beside Cairn's own.
 */
export function serviceProcs(): Proc[] {
  const found: Proc[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let command: string;
    try {
      command = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    const name = /\bmariadbd\b|\bmysqld\b/.test(command) ? 'mariadb' : /\bredis-server\b/.test(command) ? 'redis' : /milvus-lite server/.test(command) ? 'milvus' : null;
    if (name !== null) found.push({ name, pid: Number(entry) });
  }
  return found;
}

/** Starts measuring the CPU of `procs` and of the machine; the function returned stops and reports. */
export function meter(procs: Proc[]): () => Usage {
  const before = procs.map((p) => processCpu(p.pid));
  const machine = machineTicks();
  return () => {
    const after = procs.map((p) => processCpu(p.pid));
    const now = machineTicks();
    return {
      cpu: procs.map((p, i) => ({ name: p.name, seconds: (after[i]?.total ?? NaN) - (before[i]?.total ?? NaN), model: (after[i]?.model ?? NaN) - (before[i]?.model ?? NaN) })),
      machineBusy: (now.busy - machine.busy) / Math.max(1, now.total - machine.total),
      machineSeconds: (now.busy - machine.busy) / 100,
    };
  };
}

/** A number for a table: `digits` decimals, or – when it is not one. */
export const fixed = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '–');

/** The median; of an even count, the mean of the middle two. */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[half] as number) : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
};

/** A Markdown table, columns right-aligned. */
export function render(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A database of its own on the BENCH_DATABASE_URL server, named `name`. */
export function databaseUrlNamed(name: string): string {
  const url = new URL(production.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/mysql';
  const admin = createDatabase({ databaseUrl: url.toString(), dataDir: '' });
  try {
    await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
  } finally {
    await admin.destroy();
  }
}

/** Deletes every Redis key under `prefix` (queues, the key cache, change counters). */
export async function removePrefix(connection: Redis, prefix: string): Promise<void> {
  for (let cursor = '0'; ; ) {
    const [next, keys] = await connection.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length > 0) await connection.del(...keys);
    if ((cursor = next) === '0') break;
  }
}

/**
 * Deletes a run's vectors from the local model's memories collection (one delete of its project's
 * vectors, on a Milvus connection of its own). The collection itself stays: tests and other runs
 * against the same Milvus may be using it.
 */
export async function removeVectors(projectId: string, localModelDir: string, milvusTimeoutMs: number): Promise<void> {
  const log = createLogger('warn');
  const providers = new Providers(loadConfig({ DATA_DIR: os.tmpdir(), LOCAL_MODEL_DIR: localModelDir }), log);
  const milvus = new MilvusConnection(production.milvusAddress, null, log, milvusTimeoutMs);
  try {
    const spec = await memoryCollection(providers.embedders, 'local');
    const store = new MilvusVectorStore(milvus, log);
    await store.deleteByFilter(spec, projectId, null);
    const left = await store.count(spec, projectId);
    if (left > 0) throw new Error(`${left} vectors of the run are still in ${spec.name}`);
  } finally {
    await milvus.close();
    await providers.close();
  }
}

/** A Cairn process of a bench: its CPU is measured, and a bench stops waiting once it is gone. */
export interface CairnProc extends Proc {
  alive(): boolean;
}

/**
 * Cairn started for a bench on data of its own: the process serving HTTP (on the embedded profile
 * the only one), the database the bench reads progress from, and (production) the bench's handle
 * on the embedding queue of the run's prefix.
 */
export interface BenchCairn {
  http: Child;
  db: Knex;
  projectId: string;
  procs: CairnProc[];
  embedding: Queue | null;
  /** Stops the processes and removes everything the run wrote. */
  close(): Promise<void>;
}

function procOf(name: string, proc: Child['proc']): CairnProc {
  return { name, pid: proc.pid, alive: () => proc.exitCode === null && proc.signalCode === null };
}

async function projectOf(db: Knex): Promise<string> {
  return ((await db('projects').where({ name: 'bench' }).first('id')) as { id: string }).id;
}

/** The embedded profile: one Cairn process (role `all`, as `npm start` runs it) on a new DATA_DIR, whose SQLite file (WAL) the bench reads. */
export async function startEmbeddedCairn(localModelDir: string): Promise<BenchCairn> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  let child: Child | null = null;
  const db = createDatabase({ databaseUrl: null, dataDir });
  const close = async (): Promise<void> => {
    if (child) await stopChild(child.proc);
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    child = await startChild('cairn', 'cairn', childEnv('embedded', dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir }));
    return { http: child, db, projectId: await projectOf(db), procs: [procOf('cairn', child.proc)], embedding: null, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The production profile: an API process (role `api`) and `workers` `start:worker` processes on the
 * MariaDB database `databaseUrl` (created and migrated here), the Redis prefix `prefix` and Milvus
 * Lite. On close the database, the prefix's keys and the run's vectors are removed (the collection
 * stays: see `removeVectors`).
 */
export async function startProductionCairn(options: { databaseUrl: string; prefix: string; workers: number; localModelDir: string; milvusTimeoutMs: number }): Promise<BenchCairn> {
  const { databaseUrl, prefix, workers: count, localModelDir, milvusTimeoutMs } = options;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const env = childEnv('production', dataDir, 'warn', { DATABASE_URL: databaseUrl, LOCAL_MODEL_DIR: localModelDir, MILVUS_TIMEOUT_MS: String(milvusTimeoutMs), QUEUE_PREFIX: prefix });
  await ensureMysqlDatabase(databaseUrl);
  const db = createDatabase({ databaseUrl, dataDir: '' });
  const connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
  const queues = QUEUE_NAMES.map((name) => new Queue(name, { connection, prefix }));
  const embedding = queues[QUEUE_NAMES.indexOf('embedding')] as Queue;
  const children: Child['proc'][] = [];
  let projectId: string | null = null;
  const close = async (): Promise<void> => {
    await Promise.all(children.map(stopChild));
    for (const queue of queues) await queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(queues.map((q) => q.close()));
    // the key cache and change counters under the same prefix
    await removePrefix(connection, prefix);
    connection.disconnect();
    if (projectId !== null) await removeVectors(projectId, localModelDir, milvusTimeoutMs).catch((err: unknown) => process.stderr.write(`warning: the run's vectors were not removed: ${String(err)}\n`));
    await db.destroy();
    await dropDatabase(databaseUrl);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migrateLatest(db);
    const api = await startChild('api', 'cairn-api', env);
    children.push(api.proc);
    const workers = await Promise.all(Array.from({ length: count }, (_, i) => startWorker(`worker ${i + 1}`, env, async () => (await embedding.getWorkersCount()) >= count)));
    children.push(...workers);
    projectId = await projectOf(db);
    return { http: api, db, projectId, procs: [procOf('api', api.proc), ...workers.map((w, i) => procOf(`worker ${i + 1}`, w))], embedding, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Memories of some users indexed and failed (for good). */
export interface Progress {
  indexed: number;
  failed: number;
}

/** Counts the memories of `users` by `embedding_status` in the database: cheaper than asking the API. */
async function progress(cairn: BenchCairn, users: string[]): Promise<Progress> {
  const rows = (await cairn
    .db('memories')
    .where({ project_id: cairn.projectId })
    .whereIn('user_id', users)
    .select('embedding_status')
    .count({ n: '*' })
    .groupBy('embedding_status')) as Array<{ embedding_status: string; n: number | string }>;
  const of = (status: string): number => Number(rows.find((r) => r.embedding_status === status)?.n ?? 0);
  return { indexed: of('indexed'), failed: of('failed') };
}

const POLL_MS = 100;

/**
 * Polls until `count` memories of `users` are indexed or failed; throws when a Cairn process dies,
 * on abort, or when `checkDeadline` (called with what is awaited) throws.
 */
export async function waitIndexed(cairn: BenchCairn, users: string[], count: number, checkDeadline: (what: string) => void, signal?: AbortSignal): Promise<Progress> {
  for (;;) {
    const last = await progress(cairn, users);
    if (last.indexed + last.failed >= count) return last;
    if (signal?.aborted) throw new Error('aborted');
    const dead = cairn.procs.find((p) => !p.alive());
    if (dead) throw new Error(`${dead.name} exited during the run`);
    checkDeadline(`waiting for ${count - last.indexed - last.failed} memories to be indexed`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Thrown once a bench's `--timeout-minutes` have passed: the rounds measured so far are still reported. */
export class Timeout extends Error {}

/** A bench's time limit: `check` throws a `Timeout` naming what was awaited once it has passed. */
export function deadline(minutes: number): (what: string) => void {
  const at = Date.now() + minutes * 60_000;
  return (what) => {
    if (Date.now() > at) throw new Timeout(`timed out (--timeout-minutes ${minutes}) while ${what}`);
  };
}

/**
 * Runs `run` on each profile in turn, after checking that Milvus answers when production is among
 * them. A `Timeout` ends the runs: its message is returned (null when every profile ran).
 */
export async function eachProfile(profiles: ProfileName[], run: (profile: ProfileName) => Promise<void>): Promise<string | null> {
  if (profiles.includes('production') && !(await reachable(production.milvusAddress, 19530, 1_000))) {
    throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start (or set BENCH_MILVUS_ADDRESS)`);
  }
  for (const profile of profiles) {
    try {
      await run(profile);
    } catch (err) {
      if (!(err instanceof Timeout)) throw err;
      return err.message;
    }
  }
  return null;
}

/** The raw embedder's measurement: texts embedded a second, and what that cost. */
export interface Raw extends Usage {
  sentences: number;
  seconds: number;
  sentencesPerSecond: number;
}

const rawEntry = path.join(path.dirname(new URL(import.meta.url).pathname), 'raw-embedder.ts');

/** Runs `raw-embedder.ts` with `args` (see its usage) in a child process started for this measurement alone. */
export async function rawEmbedder(args: string[], localModelDir: string): Promise<Raw> {
  const out = await runScript(rawEntry, args, childEnv('embedded', os.tmpdir(), 'warn', { LOCAL_MODEL_DIR: localModelDir }));
  const r = JSON.parse(out.trim().split('\n').pop() as string) as Omit<Raw, 'cpu'> & { cpuSeconds: number; modelCpuSeconds: number };
  return {
    sentences: r.sentences,
    seconds: r.seconds,
    sentencesPerSecond: r.sentencesPerSecond,
    cpu: [{ name: 'raw embedder', seconds: r.cpuSeconds, model: r.modelCpuSeconds }],
    machineBusy: r.machineBusy,
    machineSeconds: r.machineSeconds,
  };
}
