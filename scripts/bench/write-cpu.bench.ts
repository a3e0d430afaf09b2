import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { Api, childEnv, control, percentile, processCpu, production, runScript, startChild, stopChild, type Child, type ProfileName } from './children.js';
import { chatLines } from './corpus.js';

// What does an acknowledged memory add cost in CPU? Two checkouts (--before DIR --after DIR), each
// server run from its own checkout, measured interleaved (before, after, before, after, ...): N
// adds of one chat line each, as a chat import stores them, first as single
// POST /v3/memories/add/ (infer false, C in flight), then as POST /v1/batch/ (B items a request,
// one message each). The figure is the server process's CPU (user + system, /proc) over the run,
// less its embedding model's threads, divided by the adds. Indexing is held back so the model's
// work is not counted: on the embedded profile the outbox relay is stopped (the adds wait in the
// outbox); on production the API process runs alone, its relay enqueueing the jobs in Redis with
// no worker to take them — the enqueue is part of the write. MariaDB's and Redis's CPU over the
// same run are reported beside it (machine-wide processes: other load on them counts too).

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    profile: { type: 'string', default: 'both' },
    adds: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    batch: { type: 'string', default: '50' },
  },
});
const N = Number(args.adds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const BATCH = Number(args.batch);
const PROFILES: ProfileName[] = args.profile === 'both' ? ['embedded', 'production'] : [args.profile as ProfileName];
if (!args.before || !args.after || ![N, ROUNDS, CONCURRENCY, BATCH].every((x) => Number.isInteger(x) && x > 0) || !PROFILES.every((p) => p === 'embedded' || p === 'production')) {
  process.stderr.write('Usage: write-cpu.bench.ts --before DIR --after DIR [--profile embedded|production|both] [--adds 1000] [--rounds 3] [--concurrency 8] [--batch 50]\n');
  process.exit(2);
}
const CHECKOUTS = { before: path.resolve(args.before), after: path.resolve(args.after) };
type Side = keyof typeof CHECKOUTS;
const SIDES: Side[] = ['before', 'after'];
const DATABASES: Record<Side, string> = {
  before: process.env.BENCH_WRITE_BEFORE_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench_write_before',
  after: process.env.BENCH_WRITE_AFTER_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench_write_after',
};
const WARM_UP = 200;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

type Mode = 'single' | 'batch';
const MODES: Mode[] = ['single', 'batch'];

interface Target {
  side: Side;
  child: Child;
  api: Api;
  close(): Promise<void>;
}

interface Run {
  profile: ProfileName;
  side: Side;
  mode: Mode;
  round: number;
  /** The server's CPU a memory added (less the model's threads), ms. */
  cpuMs: number;
  /** MariaDB's and Redis's CPU a memory added, ms (production only). */
  mariadbMs: number;
  redisMs: number;
  /** Memories acknowledged a second. */
  perSecond: number;
}

/** The pid of a machine-wide process by its command name, from /proc (undefined when there is none). */
function pidOf(command: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === command) return Number(entry);
    } catch {
      // ended meanwhile
    }
  }
  return undefined;
}
const MARIADB = pidOf('mariadbd') ?? pidOf('mysqld');
const REDIS = pidOf('redis-server');

async function startTarget(profile: ProfileName, side: Side, stamp: string): Promise<Target> {
  const root = CHECKOUTS[side];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `cairn-write-cpu-${side}-`));
  const databaseUrl = profile === 'production' ? DATABASES[side] : null;
  const prefix = `wc-${side}-${stamp}`;
  const env = childEnv(profile, dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl, QUEUE_PREFIX: prefix } : {}) });
  if (databaseUrl) await runScript(path.join(root, 'scripts', 'migrate.ts'), [], env, root);
  const child = await startChild(side, profile === 'production' ? 'cairn-api' : 'cairn', env, true, root);
  if (profile === 'embedded') await control(child, 'hold');
  return {
    side,
    child,
    api: new Api(child),
    close: async () => {
      await stopChild(child.proc);
      if (profile === 'production') {
        const connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
        for (const name of QUEUE_NAMES) {
          const queue = new Queue(name, { connection, prefix });
          await queue.obliterate({ force: true }).catch(() => undefined);
          await queue.close();
        }
        connection.disconnect();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Adds `texts` for `user`: one a request with CONCURRENCY in flight, or BATCH a /v1/batch request. */
async function add(api: Api, mode: Mode, user: string, texts: string[]): Promise<void> {
  if (mode === 'batch') {
    for (let i = 0; i < texts.length; i += BATCH) {
      await api.call('POST', '/v1/batch/', { memories: texts.slice(i, i + BATCH).map((content) => ({ messages: [{ role: 'user', content }], user_id: user })) });
    }
    return;
  }
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < texts.length; i = next++) {
      await api.call('POST', '/v3/memories/add/', { messages: [{ role: 'user', content: texts[i] }], user_id: user, infer: false });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

const cpuOf = (pid: number | undefined): number => {
  const { total, model } = processCpu(pid);
  return total - model;
};

async function measure(profile: ProfileName, target: Target, mode: Mode, round: number, count: number): Promise<Run> {
  // a user of its own each run: nothing to clean, and the same texts for both checkouts in a round
  const user = `write-cpu-${mode}-${round}`;
  const texts = chatLines(count, round * 100_000 + (mode === 'batch' ? 50_000 : 0));
  const pid = target.child.proc.pid;
  const start = { api: cpuOf(pid), mariadb: cpuOf(MARIADB), redis: cpuOf(REDIS), at: performance.now() };
  await add(target.api, mode, user, texts);
  const seconds = (performance.now() - start.at) / 1000;
  const per = (now: number, then: number): number => ((now - then) * 1000) / count;
  const run: Run = {
    profile,
    side: target.side,
    mode,
    round,
    cpuMs: per(cpuOf(pid), start.api),
    mariadbMs: profile === 'production' ? per(cpuOf(MARIADB), start.mariadb) : 0,
    redisMs: profile === 'production' ? per(cpuOf(REDIS), start.redis) : 0,
    perSecond: count / seconds,
  };
  if (round > 0) {
    const others = profile === 'production' ? `, MariaDB ${run.mariadbMs.toFixed(2)} ms, Redis ${run.redisMs.toFixed(2)} ms` : '';
    process.stderr.write(`[${profile} ${mode} round ${round}] ${target.side}: ${run.cpuMs.toFixed(2)} ms CPU an add${others}, ${run.perSecond.toFixed(0)} adds/s\n`);
  }
  return run;
}

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 0.5);

async function benchProfile(profile: ProfileName): Promise<Run[]> {
  const stamp = Date.now().toString(36);
  const targets: Target[] = [];
  try {
    for (const side of SIDES) targets.push(await startTarget(profile, side, stamp));
    // warm-up, not counted: code optimised, statements prepared, pools filled
    for (const target of targets) for (const mode of MODES) await measure(profile, target, mode, 0, WARM_UP);
    const runs: Run[] = [];
    for (let round = 1; round <= ROUNDS; round++) for (const mode of MODES) for (const target of targets) runs.push(await measure(profile, target, mode, round, N));
    return runs;
  } finally {
    for (const target of targets) await target.close();
  }
}

async function main(): Promise<void> {
  process.stdout.write(
    `Cairn CPU an acknowledged add, before vs after — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)}; ${N} adds a run (single: ${CONCURRENCY} in flight; batch: ${BATCH} a request), ${ROUNDS} rounds interleaved\nbefore: ${CHECKOUTS.before}\nafter:  ${CHECKOUTS.after}\n`,
  );
  const runs: Run[] = [];
  for (const profile of PROFILES) runs.push(...(await benchProfile(profile)));
  const lines = ['', '| profile | mode | before CPU/add | after CPU/add | after / before | before MariaDB/add | after MariaDB/add | before adds/s | after adds/s |', '|---|---|---:|---:|---:|---:|---:|---:|---:|'];
  const medians: Record<string, unknown> = {};
  for (const profile of PROFILES) {
    for (const mode of MODES) {
      const of = (side: Side, key: 'cpuMs' | 'mariadbMs' | 'redisMs' | 'perSecond'): number => median(runs.filter((r) => r.profile === profile && r.mode === mode && r.side === side).map((r) => r[key]));
      const m = (side: Side) => ({ cpuMs: of(side, 'cpuMs'), mariadbMs: of(side, 'mariadbMs'), redisMs: of(side, 'redisMs'), perSecond: of(side, 'perSecond') });
      const before = m('before');
      const after = m('after');
      medians[`${profile}/${mode}`] = { before, after, ratio: after.cpuMs / before.cpuMs };
      const db = (x: number): string => (profile === 'production' ? `${x.toFixed(2)} ms` : '–');
      lines.push(
        `| ${profile} | ${mode} | ${before.cpuMs.toFixed(2)} ms | ${after.cpuMs.toFixed(2)} ms | ${(after.cpuMs / before.cpuMs).toFixed(2)}× | ${db(before.mariadbMs)} | ${db(after.mariadbMs)} | ${before.perSecond.toFixed(0)} | ${after.perSecond.toFixed(0)} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'write-cpu', node: process.version, cores: os.cpus().length, adds: N, concurrency: CONCURRENCY, batch: BATCH, rounds: ROUNDS, checkouts: CHECKOUTS, runs, medians })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:write-cpu failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
