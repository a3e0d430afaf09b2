import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chatHistory } from './chat-history.js';
import { Api, latency, timed, type Latency, type ProfileName } from './children.js';
import { generateDataset } from './memory-quality/dataset.js';
import { databaseUrlNamed, deadline, eachProfile, fixed, median, meter, rawEmbedder, render, serviceProcs, startEmbeddedCairn, startProductionCairn, waitIndexed, type BenchCairn, type Raw, type Usage } from './runs.js';

// How fast a chat history becomes searchable (`npm run bench:import`): chat turns imported through
// mem0's endpoints (infer false, each turn's event time as `timestamp`), timed from the first write
// until every memory is indexed, against the raw local embedder (batch 32, a process of its own) on
// exactly the same texts in the same order.
//
// Data sets, seeded and generated at run time: `chats`, the memory-quality bench's conversations
// (several conversations, each its own user_id, "Speaker: text" turns); `history`, one user_id's
// chats with an assistant over a year (short user turns, answers mostly 1–5 KB; chat-history.ts).
// Modes: `single`, `--writers` writers each taking one conversation's turns in order, one
// POST /v3/memories/add/ a turn; `batch`, the same through POST /v1/batch/, `--batch-size` turns a
// request. Each round: the raw embedder on each data set, then every data set × mode on a fresh
// Cairn (embedded: a new DATA_DIR; production: a new MariaDB database and Redis prefix, an API
// process and `--workers` worker processes, Milvus Lite). Medians of the rounds, ratios pipeline ÷
// raw beside their targets, a table on stdout and the JSON summary (also to `--out FILE`).
//
//   npm run bench:import -- [--profile embedded|production|both] [--rounds 3] [--turns N (both sets)]
//     [--chats-turns 2000] [--history-turns 200] [--writers 8] [--batch-size 100] [--workers 1]
//     [--seed 14] [--warm-up 0] [--out import.json]
//   smoke run: npm run bench:import -- --turns 300 --rounds 1
// Production uses BENCH_DATABASE_URL's server (databases cairn_bench_import_*, dropped at the end),
// BENCH_REDIS_URL and BENCH_MILVUS_ADDRESS (see children.ts); LOCAL_MODEL_DIR the local model.

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'both' },
    turns: { type: 'string' },
    'chats-turns': { type: 'string' },
    'history-turns': { type: 'string' },
    rounds: { type: 'string', default: '3' },
    writers: { type: 'string', default: '8' },
    'batch-size': { type: 'string', default: '100' },
    'raw-batch': { type: 'string', default: '32' },
    workers: { type: 'string', default: '1' },
    seed: { type: 'string', default: '14' },
    sets: { type: 'string', default: 'chats,history' },
    modes: { type: 'string', default: 'single,batch' },
    out: { type: 'string' },
    'timeout-minutes': { type: 'string', default: '40' },
    'warm-up': { type: 'string', default: '0' },
  },
});
const ALL_SETS = ['chats', 'history'] as const;
type SetName = (typeof ALL_SETS)[number];
const SETS = ALL_SETS.filter((s) => args.sets.split(',').includes(s));
const ALL_MODES = ['single', 'batch'] as const;
type Mode = (typeof ALL_MODES)[number];
const MODES = ALL_MODES.filter((m) => args.modes.split(',').includes(m));
const PROFILES: ProfileName[] = args.profile === 'both' ? ['embedded', 'production'] : [args.profile as ProfileName];
// An answer of the history set costs the embedder a full 256-word-piece input, some 40 chat lines'
// worth: 200 of them take as long as 2,000 chat lines, and keep a full run near 25 minutes.
const TURNS: Record<SetName, number> = {
  chats: Number(args['chats-turns'] ?? args.turns ?? 2000),
  history: Number(args['history-turns'] ?? args.turns ?? 200),
};
const ROUNDS = Number(args.rounds);
const WRITERS = Number(args.writers);
const BATCH_SIZE = Number(args['batch-size']);
const RAW_BATCH = Number(args['raw-batch']);
const WORKERS = Number(args.workers);
const SEED = Number(args.seed);
const WARM_UP = Number(args['warm-up']);
if (
  !PROFILES.every((p) => p === 'embedded' || p === 'production') ||
  ![TURNS.chats, TURNS.history, ROUNDS, WRITERS, BATCH_SIZE, RAW_BATCH, WORKERS].every((x) => Number.isInteger(x) && x > 0) ||
  !(Number.isInteger(WARM_UP) && WARM_UP >= 0) ||
  !Number.isInteger(SEED) ||
  BATCH_SIZE > 1000 ||
  SETS.length === 0 ||
  MODES.length === 0 ||
  !(Number(args['timeout-minutes']) > 0)
) {
  process.stderr.write(
    '--profile is embedded, production or both; --sets some of chats,history; --modes some of single,batch; --turns (both sets), --chats-turns, --history-turns, --rounds, --writers, --batch-size (at most 1000), --raw-batch and --workers positive integers, --warm-up a whole number, --seed an integer, --timeout-minutes a number\n',
  );
  process.exit(2);
}

/** memories searchable/s ÷ the raw embedder's texts/s, at least. */
const TARGETS: Record<Mode, number> = { single: 0.6, batch: 0.8 };
/** Conversations of the memory-quality generator hold about 600 turns; the chats set takes at most this many of each. */
const TURNS_PER_CONVERSATION = 500;
const checkDeadline = deadline(Number(args['timeout-minutes']));
const MILVUS_TIMEOUT_MS = 120_000;
const WARM_MEMORIES = 16;
const WARM_USER = 'warm-up';
const SEARCH_CHARS = 200;
const STAMP = Date.now().toString(36);
const here = path.dirname(new URL(import.meta.url).pathname);
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(here, '../../.cache/models');

// ---------------------------------------------------------------------------------------------
// Data sets

/** A turn as it is imported: one memory. `time` in unix seconds. */
interface ImportTurn {
  role: 'user' | 'assistant';
  content: string;
  time: number;
}

/** One conversation, written in order by one writer. */
interface Thread {
  userId: string;
  turns: ImportTurn[];
}

interface DataSet {
  name: SetName;
  threads: Thread[];
  /** Every turn's text, thread after thread: the raw embedder's input. */
  texts: string[];
  /** Where the raw embedder reads `texts`. */
  file: string;
}

function dataSet(name: SetName, threads: Thread[], dir: string): DataSet {
  const texts = threads.flatMap((t) => t.turns.map((turn) => turn.content));
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(texts));
  return { name, threads, texts, file };
}

/** The memory-quality conversations, each its own user, `--chats-turns` turns in all spread evenly over at least `--writers` conversations. */
function chats(dir: string): DataSet {
  const count = Math.max(WRITERS, Math.ceil(TURNS.chats / TURNS_PER_CONVERSATION));
  const data = generateDataset(SEED, count);
  const each = Math.ceil(TURNS.chats / count);
  let left = TURNS.chats;
  const threads = data.conversations.map((c) => {
    const turns = c.sessions
      .flatMap((s) => s.turns)
      .slice(0, Math.min(each, left))
      .map((t): ImportTurn => ({ role: 'user', content: `${t.speaker}: ${t.text}`, time: t.time }));
    left -= turns.length;
    return { userId: c.id, turns };
  });
  return dataSet('chats', threads.filter((t) => t.turns.length > 0), dir);
}

/** One user's chats with the assistant over a year. */
function history(dir: string): DataSet {
  return dataSet('history', chatHistory(TURNS.history, SEED).map((chat) => ({ userId: 'history-user', turns: chat.turns })), dir);
}

const bytes = (set: DataSet): number => set.texts.reduce((s, t) => s + Buffer.byteLength(t), 0);

// ---------------------------------------------------------------------------------------------
// The raw embedder

/** The raw embedder on a data set's texts, in their order. */
function rawOf(set: DataSet): Promise<Raw> {
  checkDeadline(`measuring the raw embedder on ${set.name}`);
  return rawEmbedder([String(RAW_BATCH), '--texts', set.file], localModelDir);
}

// ---------------------------------------------------------------------------------------------
// Cairn, fresh for each case

/** Cairn as this bench drives it: its API, on either profile. */
interface System extends BenchCairn {
  api: Api;
}

let systems = 0;

/** A fresh Cairn: a new DATA_DIR, or (production) a new MariaDB database and Redis prefix. */
async function startSystem(profile: ProfileName): Promise<System> {
  const n = ++systems;
  const cairn =
    profile === 'embedded'
      ? await startEmbeddedCairn(localModelDir)
      : await startProductionCairn({
          databaseUrl: databaseUrlNamed(`cairn_bench_import_${STAMP}_${n}`),
          prefix: `bench-import-${STAMP}-${n}`,
          workers: WORKERS,
          localModelDir,
          milvusTimeoutMs: MILVUS_TIMEOUT_MS,
        });
  return { ...cairn, api: new Api(cairn.http) };
}

/** The largest event-loop delay (ms) of the HTTP process since its /metrics were last read (prom-client resets it on each read). */
async function eventLoopMaxMs(sys: System): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${sys.http.port}/metrics`);
  const match = /^cairn_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(await response.text());
  return match ? Number(match[1]) * 1000 : NaN;
}

const addBody = (thread: Thread, turn: ImportTurn) => ({ messages: [{ role: turn.role, content: turn.content }], user_id: thread.userId, infer: false, timestamp: turn.time });

// every server child logs its long event-loop turns here (loop-probe.mjs); a BENCH_LOOP_PROBE
// directory given by the caller is kept, to be read beside a CPU profile (BENCH_API_PROFILE)
const KEEP_LOOP_DIR = process.env.BENCH_LOOP_PROBE !== undefined;
const LOOP_DIR = process.env.BENCH_LOOP_PROBE ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-loop-'));
process.env.BENCH_LOOP_PROBE = LOOP_DIR;

/** A turn of the HTTP process's event loop of 10 ms or more (loop-probe.mjs). */
interface Turn {
  at: number;
  turnMs: number;
  runMs: number;
  waitMs: number;
}

/**
 * The HTTP process's longest event-loop turn between `from` and `to` (epoch ms), and the most CPU
 * any turn took: a turn is as long as its work (CPU) plus the time the thread waited for a core.
 */
function loopTurns(sys: System, from: number, to: number): { longest: Turn | null; mostCpuMs: number } {
  const file = path.join(LOOP_DIR, `${sys.http.proc.pid}.jsonl`);
  const turns = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Turn)
        .filter((t) => t.at >= from && t.at <= to)
    : [];
  const longest = turns.reduce<Turn | null>((a, t) => (a === null || t.turnMs > a.turnMs ? t : a), null);
  return { longest, mostCpuMs: turns.reduce((m, t) => Math.max(m, t.runMs), 0) };
}

/**
 * Not timed: loads the model in every process, creates the vector collection, opens the connections.
 * `--warm-up N` adds N more short chat lines first, from `--writers` writers at once, each to a
 * user of its own: a server that has taken traffic before the import (its code optimised).
 */
async function warmUp(sys: System): Promise<void> {
  const thread: Thread = { userId: WARM_USER, turns: [] };
  const count = WARM_MEMORIES * sys.procs.length;
  for (let i = 0; i < count; i++) await sys.api.call('POST', '/v3/memories/add/', addBody(thread, { role: 'user', content: `Warming up, note ${i} of ${count}`, time: 1_700_000_000 + i }));
  const users = Array.from({ length: WRITERS }, (_, w) => `${WARM_USER}-${w}`);
  let next = 0;
  await Promise.all(
    users.map(async (userId) => {
      for (let i = next++; i < WARM_UP; i = next++) {
        await sys.api.call('POST', '/v3/memories/add/', addBody({ userId, turns: [] }, { role: 'user', content: i % 7 === 0 ? `Line ${i}: we went over the plans for the week and the weather ahead` : `Line ${i}: sounds good`, time: 1_700_000_000 + i }));
      }
    }),
  );
  await waitIndexed(sys, [WARM_USER], count, checkDeadline);
  if (WARM_UP > 0) await waitIndexed(sys, users, WARM_UP, checkDeadline);
  await eventLoopMaxMs(sys);
}

/** What `--writers` writers did: every request's latency and the memories acknowledged; the id of the last turn of the first thread. */
interface Writes {
  latencies: number[];
  acknowledged: number;
  lastId: string;
}

/** Each writer takes the next thread and writes its turns in order: one add a turn, or `BATCH_SIZE` turns a batch. */
async function write(sys: System, set: DataSet, mode: Mode, abort: AbortController): Promise<Writes> {
  const writes: Writes = { latencies: [], acknowledged: 0, lastId: '' };
  let next = 0;
  const send = async (thread: Thread, turns: ImportTurn[]): Promise<string[]> => {
    let ids: string[] = [];
    writes.latencies.push(
      await timed(async () => {
        const answer =
          mode === 'single'
            ? await sys.api.call('POST', '/v3/memories/add/', addBody(thread, turns[0] as ImportTurn))
            : await sys.api.call('POST', '/v1/batch/', { memories: turns.map((turn) => addBody(thread, turn)) });
        ids = (answer.results as Array<{ id: string }>).map((m) => m.id);
      }),
    );
    if (ids.length !== turns.length) throw new Error(`${turns.length} turns stored ${ids.length} memories`);
    writes.acknowledged += ids.length;
    return ids;
  };
  const writer = async (): Promise<void> => {
    for (let t = next++; t < set.threads.length; t = next++) {
      const thread = set.threads[t] as Thread;
      const step = mode === 'single' ? 1 : BATCH_SIZE;
      for (let at = 0; at < thread.turns.length; at += step) {
        const ids = await send(thread, thread.turns.slice(at, at + step));
        if (t === 0) writes.lastId = ids[ids.length - 1] as string;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: WRITERS }, writer));
  } catch (err) {
    abort.abort();
    throw err;
  }
  return writes;
}

interface Case extends Usage {
  set: SetName;
  mode: Mode;
  memories: number;
  /** First write to every memory indexed. */
  seconds: number;
  searchablePerSecond: number;
  /** searchablePerSecond ÷ the same round's raw texts/s on the same data set. */
  ratio: number;
  failed: number;
  requests: number;
  /** Of each request (an add, or a batch). */
  latency: Latency;
  /** From the last write's answer to every memory indexed. */
  tailSeconds: number;
  /** CPU of the Cairn processes (not the bench) per memory acknowledged. */
  cpuMsPerMemory: number;
  /** Production: CPU of MariaDB, Redis and Milvus Lite per memory acknowledged, by service. */
  services: Array<{ name: string; msPerMemory: number }>;
  eventLoopMaxMs: number;
  /** The HTTP process's longest event-loop turn in the case (loop-probe.mjs): its length, CPU and wait for a core. */
  longestTurn: Turn | null;
  /** The most CPU one turn of the HTTP process's event loop took in the case: the longest the loop was held by work. */
  mostTurnCpuMs: number;
  /** The last turn of the first thread, searched by its text, is among the first 10. */
  searchFound: boolean;
}

async function runCase(profile: ProfileName, set: DataSet, mode: Mode, raw: Raw): Promise<Case> {
  checkDeadline(`starting ${set.name} ${mode}`);
  const sys = await startSystem(profile);
  try {
    await warmUp(sys);
    const users = [...new Set(set.threads.map((t) => t.userId))];
    const abort = new AbortController();
    const stop = meter(sys.procs);
    const stopServices = meter(profile === 'production' ? serviceProcs() : []);
    const started = performance.now();
    const startedAt = Date.now();
    const [writes, done] = await Promise.all([
      write(sys, set, mode, abort).then((w) => ({ ...w, ms: performance.now() - started })),
      // a per-owner status endpoint (GET /v3/memories/status/) could tell this instead of the database
      waitIndexed(sys, users, set.texts.length, checkDeadline, abort.signal).then((p) => ({ ...p, ms: performance.now() - started })),
    ]);
    const usage = stop();
    const services = stopServices().cpu.map((c) => ({ name: c.name, msPerMemory: (c.seconds * 1000) / writes.acknowledged }));
    const loopMs = await eventLoopMaxMs(sys);
    // the probe writes every 250 ms
    await new Promise((resolve) => setTimeout(resolve, 300));
    const turns = loopTurns(sys, startedAt, Date.now());
    const seconds = done.ms / 1000;
    const first = set.threads[0] as Thread;
    const found = await sys.api.call('POST', '/v3/memories/search', {
      query: (first.turns[first.turns.length - 1] as ImportTurn).content.slice(0, SEARCH_CHARS),
      filters: { user_id: first.userId },
      top_k: 10,
    });
    const cairnCpu = usage.cpu.reduce((s, c) => s + c.seconds, 0);
    return {
      set: set.name,
      mode,
      memories: set.texts.length,
      seconds,
      searchablePerSecond: done.indexed / seconds,
      ratio: done.indexed / seconds / raw.sentencesPerSecond,
      failed: done.failed,
      requests: writes.latencies.length,
      latency: latency(writes.latencies),
      tailSeconds: (done.ms - writes.ms) / 1000,
      cpuMsPerMemory: (cairnCpu * 1000) / writes.acknowledged,
      services,
      eventLoopMaxMs: loopMs,
      longestTurn: turns.longest,
      mostTurnCpuMs: turns.mostCpuMs,
      searchFound: (found.results as Array<{ id: string }>).some((m) => m.id === writes.lastId),
      ...usage,
    };
  } finally {
    await sys.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

interface Round {
  profile: ProfileName;
  round: number;
  raw: Record<SetName, Raw>;
  cases: Case[];
}

interface CaseMedians {
  set: SetName;
  mode: Mode;
  raw: number;
  searchablePerSecond: number;
  ratio: number;
  target: number;
  p50: number;
  p99: number;
  cpuMsPerMemory: number;
  eventLoopMaxMs: number;
  mostTurnCpuMs: number;
}

function mediansOf(rounds: Round[]): CaseMedians[] {
  return SETS.flatMap((set) =>
    MODES.map((mode) => {
      const cases = rounds.flatMap((r) => r.cases.filter((c) => c.set === set && c.mode === mode));
      const m = (f: (c: Case) => number): number => median(cases.map(f));
      return {
        set,
        mode,
        raw: median(rounds.map((r) => r.raw[set].sentencesPerSecond)),
        searchablePerSecond: m((c) => c.searchablePerSecond),
        ratio: m((c) => c.ratio),
        target: TARGETS[mode],
        p50: m((c) => c.latency.p50),
        p99: m((c) => c.latency.p99),
        cpuMsPerMemory: m((c) => c.cpuMsPerMemory),
        eventLoopMaxMs: m((c) => c.eventLoopMaxMs),
        mostTurnCpuMs: m((c) => c.mostTurnCpuMs),
      };
    }),
  );
}

function roundsTable(rounds: Round[]): string {
  const head = ['round', 'set', 'mode', 'memories', 'raw texts/s', 'searchable/s', 'ratio', 'requests', 'request p50 / p99', 'after last write', 'CPU ms/memory (by process)', 'services ms/memory', 'loop max', 'longest turn: CPU + wait', 'most CPU a turn', 'machine busy', 'failed', 'search'];
  const rows = rounds.flatMap((r) =>
    r.cases.map((c) => [
      String(r.round),
      c.set,
      c.mode,
      String(c.memories),
      fixed(r.raw[c.set].sentencesPerSecond, 1),
      fixed(c.searchablePerSecond, 1),
      fixed(c.ratio, 2),
      String(c.requests),
      `${fixed(c.latency.p50, 0)} / ${fixed(c.latency.p99, 0)} ms`,
      `${fixed(c.tailSeconds, 1)} s`,
      `${fixed(c.cpuMsPerMemory, 1)} (${c.cpu.map((p) => `${p.name} ${fixed((p.seconds * 1000) / c.memories, 1)}${p.model > 0 ? ` [model ${fixed((p.model * 1000) / c.memories, 1)}]` : ''}`).join(', ')})`,
      c.services.length === 0 ? '–' : c.services.map((p) => `${p.name} ${fixed(p.msPerMemory, 1)}`).join(', '),
      `${fixed(c.eventLoopMaxMs, 0)} ms`,
      c.longestTurn === null ? '–' : `${fixed(c.longestTurn.turnMs, 0)} ms: ${fixed(c.longestTurn.runMs, 0)} + ${fixed(c.longestTurn.waitMs, 0)}`,
      `${fixed(c.mostTurnCpuMs, 0)} ms`,
      `${fixed(c.machineBusy * 100, 0)} %`,
      String(c.failed),
      c.searchFound ? 'found' : 'NOT FOUND',
    ]),
  );
  return render(head, rows);
}

function mediansTable(medians: CaseMedians[]): string {
  const head = ['set', 'mode', 'raw texts/s', 'searchable/s', 'ratio', 'target', 'add p50 / p99', 'CPU ms/memory', 'loop max', 'most CPU a turn'];
  const rows = medians.map((m) => [
    m.set,
    m.mode,
    fixed(m.raw, 1),
    fixed(m.searchablePerSecond, 1),
    fixed(m.ratio, 2),
    `≥ ${m.target} ${m.ratio >= m.target ? 'met' : 'MISSED'}`,
    m.mode === 'single' ? `${fixed(m.p50, 0)} / ${fixed(m.p99, 0)} ms` : `(batch ${fixed(m.p50, 0)} / ${fixed(m.p99, 0)} ms)`,
    fixed(m.cpuMsPerMemory, 1),
    `${fixed(m.eventLoopMaxMs, 0)} ms`,
    `${fixed(m.mostTurnCpuMs, 0)} ms`,
  ]);
  return render(head, rows);
}

/** Every round of one profile: the raw embedder on each data set, then each data set × mode on a fresh Cairn. */
async function runProfile(profile: ProfileName, sets: DataSet[], rounds: Round[]): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    const raw = {} as Record<SetName, Raw>;
    for (const set of sets) {
      raw[set.name] = await rawOf(set);
      process.stderr.write(`[${profile} ${round}] raw embedder, ${set.name}: ${fixed(raw[set.name].sentencesPerSecond, 1)} texts/s\n`);
    }
    const result: Round = { profile, round, raw, cases: [] };
    for (const set of sets) {
      for (const mode of MODES) {
        const c = await runCase(profile, set, mode, raw[set.name]);
        process.stderr.write(`[${profile} ${round}] ${set.name} ${mode}: ${fixed(c.searchablePerSecond, 1)} searchable/s (ratio ${fixed(c.ratio, 2)})\n`);
        result.cases.push(c);
      }
    }
    rounds.push(result);
  }
}

async function main(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-import-texts-'));
  try {
    const sets = SETS.map((name) => (name === 'chats' ? chats(dir) : history(dir)));
    process.stdout.write(
      `Cairn import — node ${process.version}, ${os.cpus().length} cores; profiles ${PROFILES.join(', ')}; ${ROUNDS} round${ROUNDS > 1 ? 's' : ''} of: raw embedder (batch ${RAW_BATCH}) on each set, ` +
        `then each set single (${WRITERS} writers, one add a turn) and batch (${WRITERS} writers, ${BATCH_SIZE} turns a request), each on a fresh Cairn; ` +
        `production with ${WORKERS} worker process${WORKERS > 1 ? 'es' : ''}; seed ${SEED}\n` +
        sets.map((s) => `  ${s.name}: ${s.texts.length} turns in ${s.threads.length} conversations, ${fixed(bytes(s) / 1024, 0)} KB (mean ${fixed(bytes(s) / s.texts.length, 0)} B)\n`).join(''),
    );
    const rounds: Round[] = [];
    const timedOut = await eachProfile(PROFILES, (profile) => runProfile(profile, sets, rounds));
    const medians: Partial<Record<ProfileName, CaseMedians[]>> = {};
    for (const profile of PROFILES) {
      const of = rounds.filter((r) => r.profile === profile);
      if (of.length === 0) continue;
      medians[profile] = mediansOf(of);
      process.stdout.write(`\n${profile}, every round\n\n${roundsTable(of)}\n\n${profile}, medians of ${of.length} round${of.length > 1 ? 's' : ''} (ratio: searchable/s ÷ raw texts/s)\n\n${mediansTable(medians[profile])}\n`);
    }
    if (timedOut) process.stdout.write(`\n${timedOut}\n`);
    const summary = {
      bench: 'import',
      node: process.version,
      cores: os.cpus().length,
      profiles: PROFILES,
      seed: SEED,
      turns: TURNS,
      rounds: ROUNDS,
      writers: WRITERS,
      batchSize: BATCH_SIZE,
      rawBatch: RAW_BATCH,
      workers: WORKERS,
      sets: sets.map((s) => ({ name: s.name, turns: s.texts.length, conversations: s.threads.length, bytes: bytes(s) })),
      results: rounds,
      medians,
      targets: TARGETS,
      timedOut,
    };
    const json = JSON.stringify(summary);
    process.stdout.write(`\n${json}\n`);
    if (args.out) fs.writeFileSync(args.out, `${json}\n`);
    return timedOut !== null || rounds.some((r) => r.cases.some((c) => c.failed > 0 || !c.searchFound)) ? 1 : 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    if (!KEEP_LOOP_DIR) fs.rmSync(LOOP_DIR, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:import failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
