import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Queue } from 'bullmq';
import type { Knex } from '../../db/knex.js';
import { notes } from './corpus.js';
import { Api, control, latency, timed, type Latency, type ProfileName } from './children.js';
import {
  databaseUrlNamed,
  deadline,
  eachProfile,
  fixed,
  median,
  meter,
  rawEmbedder,
  render,
  startEmbeddedCairn,
  startProductionCairn,
  waitIndexed as waitFor,
  type BenchCairn,
  type Progress,
  type Raw,
  type Usage,
} from './runs.js';

// P3 — ingest: typed records indexed per second by Cairn's write path (HTTP write → outbox →
// queue → embed → vector store) against the raw local embedder (batch 32), on the embedded profile
// (one process: SQLite, in-process queue and vector index) and on the production profile (an API
// process and one `start:worker` process on MariaDB, Redis and Milvus Lite). Each round measures
// the raw embedder in a process of its own, then the pipeline twice:
// - backlog: records written while indexing is held back (production: the embedding queue paused;
//   embedded: the outbox relay stopped), timed from the release until every row is indexed;
// - end to end: records posted one a request, N in flight, timed from the first POST until every
//   row is indexed.
// Each pipeline figure is divided by the same round's raw figure; the report gives every round,
// the CPU each process used, and the medians. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'both' },
    records: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '32' },
    'raw-sentences': { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    'write-batch': { type: 'string', default: '500' },
    workers: { type: 'string', default: '1' },
    'timeout-minutes': { type: 'string', default: '30' },
  },
});
const PROFILES: ProfileName[] = args.profile === 'both' ? ['embedded', 'production'] : [args.profile as ProfileName];
const N = Number(args.records);
const ROUNDS = Number(args.rounds);
const B = Number(args.batch);
const RAW_SENTENCES = Number(args['raw-sentences'] ?? Math.ceil(N / B) * B);
const CONCURRENCY = Number(args.concurrency);
const WRITE_BATCH = Number(args['write-batch']);
const WORKERS = Number(args.workers);
if (
  !PROFILES.every((p) => p === 'embedded' || p === 'production') ||
  ![N, ROUNDS, B, RAW_SENTENCES, CONCURRENCY, WRITE_BATCH, WORKERS].every((x) => Number.isInteger(x) && x > 0) ||
  WRITE_BATCH > 1000 ||
  !(Number(args['timeout-minutes']) > 0)
) {
  process.stderr.write(
    '--profile is embedded, production or both; --records, --rounds, --batch, --raw-sentences, --concurrency, --write-batch (at most 1000) and --workers must be positive integers, --timeout-minutes a number\n',
  );
  process.exit(2);
}
const checkDeadline = deadline(Number(args['timeout-minutes']));
const MILVUS_TIMEOUT_MS = 120_000;
const POLL_MS = 100;
const WARM_RECORDS = 16;
const SCHEMA = 'bench-ingest';
const TOPICS = ['work', 'family', 'health', 'travel', 'money', 'hobby'];
const TARGET = { ratio: 0.8 };
const STAMP = Date.now().toString(36);
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The raw embedder on this round's notes. */
function rawRound(round: number): Promise<Raw> {
  checkDeadline('measuring the raw embedder');
  return rawEmbedder([String(B), String(RAW_SENTENCES), String(50_000_000 + round * 1_000_000)], localModelDir);
}

/**
 * Cairn on one profile, as the bench drives it: its API, the database it polls for indexing
 * progress, its processes, and a way to hold indexing back while records are written.
 */
interface System extends BenchCairn {
  profile: ProfileName;
  api: Api;
  /** From now on written records wait: none is indexed until `release`. */
  hold(): Promise<void>;
  /** Resolves once the indexing work of `count` records waits to be run. */
  waitHeld(count: number): Promise<void>;
  release(): Promise<void>;
}

async function outboxCount(db: Knex, waitingOnly: boolean): Promise<number> {
  const query = db('outbox');
  // leased entries are on their way: a relay whose delete of a delivered entry failed keeps it leased for minutes
  if (waitingOnly) query.where((q) => q.whereNull('locked_until').orWhere('locked_until', '<', Date.now()));
  const [row] = (await query.count({ n: '*' })) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  while (!(await done())) {
    checkDeadline(what);
    await sleep(POLL_MS);
  }
}

/**
 * The embedded profile: one Cairn process on a fresh DATA_DIR (`startEmbeddedCairn`). Indexing is
 * held back by stopping the process's outbox relay (`hold` on its stdin), so written records wait
 * in the outbox.
 */
async function embeddedSystem(): Promise<System> {
  const cairn = await startEmbeddedCairn(localModelDir);
  return {
    ...cairn,
    profile: 'embedded',
    api: new Api(cairn.http),
    hold: () => control(cairn.http, 'hold'),
    waitHeld: (count) => until('waiting for the writes to reach the outbox', async () => (await outboxCount(cairn.db, false)) >= count),
    release: () => control(cairn.http, 'release'),
  };
}

/** The production database of this run: the BENCH_DATABASE_URL server, a database named for the run. */
const runDatabaseUrl = (): string => databaseUrlNamed(`cairn_bench_ingest_${STAMP}`);

/**
 * The production profile: an API process and `--workers` worker processes on a MariaDB database
 * and a Redis prefix of this run's own and Milvus Lite (`startProductionCairn`). Indexing is held
 * back by pausing the embedding queue (the bench's own BullMQ `Queue`), so written records wait
 * there as jobs.
 */
async function productionSystem(): Promise<System> {
  const cairn = await startProductionCairn({ databaseUrl: runDatabaseUrl(), prefix: `bench-ingest-${STAMP}`, workers: WORKERS, localModelDir, milvusTimeoutMs: MILVUS_TIMEOUT_MS });
  const embedding = cairn.embedding as Queue;
  const queued = async (): Promise<number> => Object.values(await embedding.getJobCounts('waiting', 'paused', 'prioritized', 'delayed')).reduce((s, x) => s + x, 0);
  return {
    ...cairn,
    profile: 'production',
    api: new Api(cairn.http),
    hold: () => embedding.pause(),
    waitHeld: (count) => until('waiting for the jobs to be queued', async () => (await outboxCount(cairn.db, true)) === 0 && (await queued()) >= count),
    release: () => embedding.resume(),
  };
}

/** Polls until `count` records of `user` are indexed or failed; throws when a Cairn process dies, on abort, or past the deadline. */
const waitIndexed = (sys: System, user: string, count: number, signal?: AbortSignal): Promise<Progress> => waitFor(sys, [user], count, checkDeadline, signal);

const item = (text: string, i: number, user: string) => ({ record: { note: text, topic: TOPICS[i % TOPICS.length] }, user_id: user, run_id: user });

/** One record a request, `CONCURRENCY` requests in flight, each timed. */
async function postAll(api: Api, texts: string[], user: string, abort: AbortController): Promise<{ ids: string[]; latencies: number[] }> {
  const ids: string[] = [];
  const latencies: number[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < texts.length; i = next++) {
      latencies[i] = await timed(async () => {
        ids[i] = (await api.call('POST', `/v1/records/${SCHEMA}`, item(texts[i] as string, i, user))).id as string;
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  } catch (err) {
    abort.abort();
    throw err;
  }
  return { ids, latencies };
}

/** `WRITE_BATCH` records a request (`POST /v1/records/{schema}/batch`), one request after the other. */
async function postBatches(api: Api, texts: string[], user: string): Promise<void> {
  for (let at = 0; at < texts.length; at += WRITE_BATCH) {
    await api.call('POST', `/v1/records/${SCHEMA}/batch`, { records: texts.slice(at, at + WRITE_BATCH).map((text, i) => item(text, at + i, user)) });
  }
}

async function ensureSchema(api: Api): Promise<void> {
  await api.call(
    'POST',
    '/v1/schemas',
    {
      name: SCHEMA,
      json_schema: {
        type: 'object',
        properties: { note: { type: 'string' }, topic: { type: 'string', enum: TOPICS } },
        required: ['note', 'topic'],
        additionalProperties: false,
      },
      embed_template: '{{note}}',
      description: 'P3 ingest benchmark',
    },
    [409],
  );
}

/** Not timed: loads the model in every process, creates the vector collection, opens the connections. */
async function warmUp(sys: System): Promise<void> {
  const user = `warm-${STAMP}`;
  const texts = notes(WARM_RECORDS * sys.procs.length, 2_000_000);
  await postAll(sys.api, texts, user, new AbortController());
  await waitIndexed(sys, user, texts.length);
  await sys.api.call('POST', '/v3/memories/search', { query: texts[0], filters: { user_id: user }, top_k: 1 });
}

interface Pipeline extends Usage {
  records: number;
  seconds: number;
  indexedPerSecond: number;
  ratio: number;
  failed: number;
}

/** Records written while indexing is held back, then timed from the release until every one is indexed. */
async function backlog(sys: System, round: number, raw: Raw): Promise<Pipeline> {
  const user = `backlog-${round}-${STAMP}`;
  const texts = notes(N, round * 1_000_000);
  await sys.hold();
  await postBatches(sys.api, texts, user);
  await sys.waitHeld(N);
  process.stderr.write(`[${sys.profile} ${round}] backlog: ${N} records wait; releasing\n`);
  const stop = meter([...sys.procs, { name: 'bench', pid: process.pid }]);
  const started = performance.now();
  await sys.release();
  const done = await waitIndexed(sys, user, N);
  const seconds = (performance.now() - started) / 1000;
  const usage = stop();
  return { records: N, seconds, indexedPerSecond: done.indexed / seconds, ratio: done.indexed / seconds / raw.sentencesPerSecond, failed: done.failed, ...usage };
}

interface EndToEnd extends Pipeline {
  write: Latency;
  writesPerSecond: number;
  /** From the last POST's answer to every record indexed. */
  tailSeconds: number;
  searchFound: boolean;
  searchMs: number;
}

/** Records posted one a request, `CONCURRENCY` in flight, timed from the first POST until every one is indexed. */
async function endToEnd(sys: System, round: number, raw: Raw): Promise<EndToEnd> {
  const user = `e2e-${round}-${STAMP}`;
  const texts = notes(N, round * 1_000_000 + 500_000);
  const abort = new AbortController();
  const stop = meter([...sys.procs, { name: 'bench', pid: process.pid }]);
  const started = performance.now();
  const [writes, done] = await Promise.all([
    postAll(sys.api, texts, user, abort).then((r) => ({ ...r, ms: performance.now() - started })),
    waitIndexed(sys, user, N, abort.signal).then((p) => ({ ...p, ms: performance.now() - started })),
  ]);
  const usage = stop();
  const seconds = done.ms / 1000;
  // the last record written, found by its own text: searchable, not only marked indexed
  const last = N - 1;
  let hits: Array<{ id: string }> = [];
  const searchMs = await timed(async () => {
    const found = await sys.api.call('POST', '/v3/memories/search', { query: texts[last], filters: { AND: [{ user_id: user }, { run_id: user }] }, top_k: 3 });
    hits = found.results as Array<{ id: string }>;
  });
  return {
    records: N,
    seconds,
    indexedPerSecond: done.indexed / seconds,
    ratio: done.indexed / seconds / raw.sentencesPerSecond,
    failed: done.failed,
    ...usage,
    write: latency(writes.latencies),
    writesPerSecond: N / (writes.ms / 1000),
    tailSeconds: (done.ms - writes.ms) / 1000,
    searchFound: hits[0]?.id === writes.ids[last],
    searchMs,
  };
}

interface Round {
  profile: ProfileName;
  round: number;
  raw: Raw;
  backlog: Pipeline;
  endToEnd: EndToEnd;
}

/** Medians over the rounds of one profile; each ratio is the median of the per-round ratios. */
interface Medians {
  raw: number;
  backlog: { indexedPerSecond: number; ratio: number };
  endToEnd: { indexedPerSecond: number; ratio: number; writesPerSecond: number; tailSeconds: number };
}

function mediansOf(rounds: Round[]): Medians {
  const m = (f: (r: Round) => number): number => median(rounds.map(f));
  return {
    raw: m((r) => r.raw.sentencesPerSecond),
    backlog: { indexedPerSecond: m((r) => r.backlog.indexedPerSecond), ratio: m((r) => r.backlog.ratio) },
    endToEnd: {
      indexedPerSecond: m((r) => r.endToEnd.indexedPerSecond),
      ratio: m((r) => r.endToEnd.ratio),
      writesPerSecond: m((r) => r.endToEnd.writesPerSecond),
      tailSeconds: m((r) => r.endToEnd.tailSeconds),
    },
  };
}

function figures(rounds: Round[]): string {
  const head = ['round', 'raw s/s', 'backlog indexed/s', 'backlog ratio', 'writes/s', 'write p50 / p99', 'e2e indexed/s', 'e2e ratio', 'after last POST', 'failed', 'search'];
  const rows = rounds.map((r) => [
    String(r.round),
    fixed(r.raw.sentencesPerSecond, 0),
    fixed(r.backlog.indexedPerSecond, 0),
    fixed(r.backlog.ratio, 2),
    fixed(r.endToEnd.writesPerSecond, 0),
    `${fixed(r.endToEnd.write.p50, 0)} / ${fixed(r.endToEnd.write.p99, 0)} ms`,
    fixed(r.endToEnd.indexedPerSecond, 0),
    fixed(r.endToEnd.ratio, 2),
    `${fixed(r.endToEnd.tailSeconds, 1)} s`,
    String(r.backlog.failed + r.endToEnd.failed),
    r.endToEnd.searchFound ? `found (${fixed(r.endToEnd.searchMs, 0)} ms)` : 'NOT FOUND',
  ]);
  const m = mediansOf(rounds);
  rows.push([
    'median',
    fixed(m.raw, 0),
    fixed(m.backlog.indexedPerSecond, 0),
    fixed(m.backlog.ratio, 2),
    fixed(m.endToEnd.writesPerSecond, 0),
    '',
    fixed(m.endToEnd.indexedPerSecond, 0),
    fixed(m.endToEnd.ratio, 2),
    `${fixed(m.endToEnd.tailSeconds, 1)} s`,
    '',
    '',
  ]);
  return render(head, rows);
}

function usageRow(round: number, phase: string, seconds: number, items: number, u: Usage): string[] {
  const measured = u.cpu.reduce((s, c) => s + c.seconds, 0);
  const model = u.cpu.reduce((s, c) => s + c.model, 0);
  return [
    String(round),
    phase,
    `${fixed(seconds, 1)} s`,
    `${fixed(u.machineBusy * 100, 0)} %`,
    u.cpu.map((c) => `${c.name} ${fixed(c.seconds, 1)}${c.model > 0 ? ` (model ${fixed(c.model, 1)})` : ''}`).join(', '),
    fixed(u.machineSeconds - measured, 1),
    fixed((measured * 1000) / items, 1),
    fixed((model * 1000) / items, 1),
  ];
}

function usage(rounds: Round[]): string {
  const head = ['round', 'phase', 'time', 'machine busy', 'CPU s by process (model threads)', 'other CPU s', 'CPU ms/record', 'model ms/record'];
  const rows = rounds.flatMap((r) => [
    usageRow(r.round, 'raw', r.raw.seconds, r.raw.sentences, r.raw),
    usageRow(r.round, 'backlog', r.backlog.seconds, r.backlog.records, r.backlog),
    usageRow(r.round, 'end to end', r.endToEnd.seconds, r.endToEnd.records, r.endToEnd),
  ]);
  return render(head, rows);
}

/** Every round of one profile: the raw embedder, the backlog, end to end. */
async function runProfile(profile: ProfileName, rounds: Round[]): Promise<void> {
  process.stderr.write(`\n[${profile}] starting Cairn\n`);
  const sys = profile === 'embedded' ? await embeddedSystem() : await productionSystem();
  try {
    await ensureSchema(sys.api);
    await warmUp(sys);
    for (let round = 1; round <= ROUNDS; round++) {
      const raw = await rawRound(round);
      process.stderr.write(`[${profile} ${round}] raw embedder: ${fixed(raw.sentencesPerSecond, 0)} sentences/s\n`);
      const held = await backlog(sys, round, raw);
      process.stderr.write(`[${profile} ${round}] backlog: ${fixed(held.indexedPerSecond, 0)} indexed/s (ratio ${fixed(held.ratio, 2)})\n`);
      const e2e = await endToEnd(sys, round, raw);
      process.stderr.write(`[${profile} ${round}] end to end: ${fixed(e2e.indexedPerSecond, 0)} indexed/s (ratio ${fixed(e2e.ratio, 2)})\n`);
      rounds.push({ profile, round, raw, backlog: held, endToEnd: e2e });
    }
  } finally {
    process.stderr.write(`[${profile}] stopping Cairn and removing its data\n`);
    await sys.close();
  }
}

async function main(): Promise<number> {
  process.stdout.write(
    `Cairn ingest — node ${process.version}, ${os.cpus().length} cores; profiles ${PROFILES.join(', ')}; ${ROUNDS} rounds of: raw embedder (${RAW_SENTENCES} sentences, batch ${B}), ` +
      `backlog of ${N} records (written ${WRITE_BATCH} a request while indexing is held), ${N} records end to end (${CONCURRENCY} requests in flight); ` +
      `production with ${WORKERS} worker process${WORKERS > 1 ? 'es' : ''} (WORKER_CONCURRENCY ${process.env.WORKER_CONCURRENCY ?? 'default'}, EMBED_CONCURRENCY ${process.env.EMBED_CONCURRENCY ?? 'default'})\n`,
  );
  const rounds: Round[] = [];
  const timedOut = await eachProfile(PROFILES, (profile) => runProfile(profile, rounds));
  const medians: Partial<Record<ProfileName, Medians>> = {};
  for (const profile of PROFILES) {
    const of = rounds.filter((r) => r.profile === profile);
    if (of.length === 0) continue;
    const m = mediansOf(of);
    medians[profile] = m;
    process.stdout.write(`\n${profile}\n\n${figures(of)}\n\n${usage(of)}\n`);
    process.stdout.write(
      `\n${profile}: median of the per-round ratios (indexed/s ÷ raw): backlog ${fixed(m.backlog.ratio, 2)}, end to end ${fixed(m.endToEnd.ratio, 2)} (target ≥ ${TARGET.ratio})\n`,
    );
  }
  if (timedOut) process.stdout.write(`\n${timedOut}\n`);
  const verdicts = Object.fromEntries(Object.entries(medians).map(([profile, m]) => [profile, { backlog: m.backlog.ratio >= TARGET.ratio, endToEnd: m.endToEnd.ratio >= TARGET.ratio }]));
  const summary = {
    bench: 'ingest',
    node: process.version,
    cores: os.cpus().length,
    profiles: PROFILES,
    records: N,
    rounds: ROUNDS,
    raw: { batch: B, sentences: RAW_SENTENCES },
    writeBatch: WRITE_BATCH,
    concurrency: CONCURRENCY,
    workers: WORKERS,
    results: rounds,
    medians,
    targets: TARGET,
    verdicts,
    timedOut,
  };
  process.stdout.write(`\n${JSON.stringify(summary)}\n`);
  return timedOut !== null || rounds.some((r) => r.backlog.failed + r.endToEnd.failed > 0 || !r.endToEnd.searchFound) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:ingest failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
