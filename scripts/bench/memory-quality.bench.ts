import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDatabase, ensureMysqlDatabase } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { reachable } from '../../lib/reachable.js';
import { Api, childEnv, production, startChild, startWorker, stopChild, type ProfileName } from './children.js';
import { generateDataset, QUESTION_KINDS, type Conversation, type Dataset, type Question, type QuestionKind } from './memory-quality/dataset.js';

// Memory quality (`npm run bench:memory-quality`, issue 14): seeded multi-session chats stored turn
// by turn as memories (infer: false, one user_id per conversation, each turn's time as its event
// time), then every question searched with top_k 10 in dense, keyword and the default (final)
// ranking. The naive baselines: plain dense (each turn embedded alone with the same model, in a
// managed vector index of the same Cairn) and plain reciprocal-rank fusion of it and the keyword
// list, computed here. `--load` evaluates a dataset of one's own instead. Recall@10 counts a question when any / all of its evidence turns are among the
// ten. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    profiles: { type: 'string', default: 'embedded,production' },
    conversations: { type: 'string', default: '10' },
    seed: { type: 'string', default: '14' },
    dataset: { type: 'string' },
    // conversations and questions of your own (the `Dataset` shape of memory-quality/dataset.ts),
    // e.g. converted from a public benchmark, evaluated instead of the generated ones
    load: { type: 'string' },
    'in-flight': { type: 'string', default: '4' },
    // every question's top 10 of each method, as JSON lines, to read where a method misses
    lists: { type: 'string' },
  },
});
const PROFILES = args.profiles.split(',') as ProfileName[];
const CONVERSATIONS = Number(args.conversations);
const SEED = Number(args.seed);
const IN_FLIGHT = Number(args['in-flight']);
if (!PROFILES.every((p) => p === 'embedded' || p === 'production') || !Number.isInteger(CONVERSATIONS) || CONVERSATIONS < 1 || !Number.isInteger(SEED) || !Number.isInteger(IN_FLIGHT) || IN_FLIGHT < 1) {
  process.stderr.write('--profiles embedded,production (either or both); --conversations a positive integer; --seed an integer; --dataset <file.json> to keep the data; --load <file.json> to evaluate a dataset of your own; --lists <file.jsonl> to keep the top 10 of each question; --in-flight requests at a time (4)\n');
  process.exit(2);
}
const TOP_K = 10;
/** How deep the dense and keyword lists fused client-side go. */
const FUSION_DEPTH = 100;
const RRF_K = 60;
const INDEX_TIMEOUT_MS = 20 * 60_000;
const POLL_MS = 500;
const TARGET = { finalOverDense: 10 };
const METHODS = ['plain', 'dense', 'keyword', 'hybrid', 'final'] as const;
/** The managed vector index that holds each turn embedded alone: the plain dense baseline. */
const PLAIN_INDEX = 'memory-quality-plain';
const UPSERT_BATCH = 500;
type Method = (typeof METHODS)[number];
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');
// Its own database, so the bench can delete what it wrote without touching other benches' data.
const databaseUrl = process.env.MEMORY_QUALITY_DATABASE_URL ?? Object.assign(new URL(production.databaseUrl), { pathname: '/cairn_bench_memory_quality' }).toString();

/** Runs `fn` over `items` with `IN_FLIGHT` calls at a time. */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * Adds every turn of a conversation as its own memory, the speaker's name before the text as a
 * chat export reads; returns memory id → turn id.
 */
async function store(api: Api, conversation: Conversation): Promise<Map<string, string>> {
  const turns = conversation.sessions.flatMap((s) => s.turns);
  const turnOf = new Map<string, string>();
  await pool(turns, async (turn) => {
    const added = await api.call('POST', '/v3/memories/add/', {
      messages: [{ role: 'user', content: `${turn.speaker}: ${turn.text}` }],
      user_id: conversation.id,
      infer: false,
      timestamp: turn.time,
    });
    const results = added.results as Array<{ id: string }>;
    if (results.length !== 1) throw new Error(`adding turn ${turn.id} stored ${results.length} memories, expected 1`);
    turnOf.set((results[0] as { id: string }).id, turn.id);
  });
  return turnOf;
}

/**
 * The plain dense baseline: every turn embedded alone with the same model (`local`), in a managed
 * vector index of the same Cairn, the same text as its memory; what memory search was before
 * issue 14 and what a user gets from a vector database.
 */
async function storePlain(api: Api, conversation: Conversation): Promise<void> {
  const turns = conversation.sessions.flatMap((s) => s.turns);
  for (let at = 0; at < turns.length; at += UPSERT_BATCH) {
    const records = turns.slice(at, at + UPSERT_BATCH).map((t) => ({ _id: t.id, text: `${t.speaker}: ${t.text}`, conversation: conversation.id }));
    await api.call('POST', `/v1/indexes/${PLAIN_INDEX}/records/upsert`, { records });
  }
}

/** Polls the list of each user's memories until all `expected` are indexed. */
async function waitIndexed(api: Api, users: Map<string, number>): Promise<void> {
  const deadline = Date.now() + INDEX_TIMEOUT_MS;
  for (const [user, expected] of users) {
    for (;;) {
      let indexed = 0;
      for (let page = 1; ; page++) {
        const listed = await api.call('POST', `/v3/memories/?page=${page}&page_size=100`, { filters: { user_id: user } });
        const results = listed.results as Array<{ embedding_status: string; embedding_error: string | null }>;
        for (const m of results) {
          if (m.embedding_status === 'failed') throw new Error(`a memory of ${user} failed to index: ${m.embedding_error}`);
          if (m.embedding_status === 'indexed') indexed++;
        }
        if (!listed.next) break;
      }
      if (indexed === expected) break;
      if (Date.now() > deadline) throw new Error(`${user}: ${indexed} of ${expected} memories indexed after ${INDEX_TIMEOUT_MS / 60_000} minutes`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

/** Reciprocal-rank fusion of ranked id lists, best first. */
function rrf(lists: string[][], k = RRF_K): string[] {
  const score = new Map<string, number>();
  for (const list of lists) list.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...score.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

type Ranked = Record<Method, string[]>;

async function searchAll(api: Api, questions: Question[], turnOf: Map<string, string>): Promise<Map<string, Ranked>> {
  const search = async (q: Question, extra: Record<string, unknown>): Promise<string[]> => {
    const found = await api.call('POST', '/v3/memories/search/', { query: q.question, filters: { user_id: q.conversation }, ...extra });
    return (found.results as Array<{ id: string }>).map((r) => turnOf.get(r.id) ?? `unknown:${r.id}`);
  };
  const plainSearch = async (q: Question): Promise<string[]> => {
    const found = await api.call('POST', `/v1/indexes/${PLAIN_INDEX}/query`, { text: q.question, top_k: FUSION_DEPTH, filter: { conversation: q.conversation } });
    return (found.matches as Array<{ id: string }>).map((m) => m.id);
  };
  const ranked = new Map<string, Ranked>();
  let done = 0;
  await pool(questions, async (q) => {
    // top 10 of the 100-deep lists is what top_k 10 answers: every list ranks exhaustively
    const [plain, dense, keyword, final] = await Promise.all([
      plainSearch(q),
      search(q, { mode: 'dense', top_k: FUSION_DEPTH }),
      search(q, { mode: 'keyword', top_k: FUSION_DEPTH }),
      search(q, { top_k: TOP_K }),
    ]);
    // the naive hybrid: plain dense and BM25 fused by reciprocal rank
    ranked.set(q.id, { plain: plain.slice(0, TOP_K), dense: dense.slice(0, TOP_K), keyword: keyword.slice(0, TOP_K), hybrid: rrf([plain, keyword]).slice(0, TOP_K), final });
    if (++done % 200 === 0) process.stderr.write(`  ${done}/${questions.length} questions searched\n`);
  });
  return ranked;
}

interface Recall {
  questions: number;
  /** Percent of questions with at least one evidence turn in the top 10. */
  any: number;
  /** Percent of questions with every evidence turn in the top 10. */
  all: number;
}
type Scores = Record<Method, Record<QuestionKind | 'overall', Recall>>;

function score(questions: Question[], ranked: Map<string, Ranked>): Scores {
  const recall = (method: Method, subset: Question[]): Recall => {
    let any = 0;
    let all = 0;
    for (const q of subset) {
      const top = new Set((ranked.get(q.id) as Ranked)[method]);
      if (q.evidence.some((e) => top.has(e))) any++;
      if (q.evidence.every((e) => top.has(e))) all++;
    }
    return { questions: subset.length, any: (100 * any) / subset.length, all: (100 * all) / subset.length };
  };
  return Object.fromEntries(
    METHODS.map((m) => [m, Object.fromEntries([...QUESTION_KINDS.map((k) => [k, recall(m, questions.filter((q) => q.kind === k))]), ['overall', recall(m, questions)]])]),
  ) as Scores;
}

/** The queues of one production run (its own prefix): is a worker consuming, and removal afterwards. */
class Queues {
  private readonly connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
  private readonly queues: Queue[];

  constructor(prefix: string) {
    this.queues = QUEUE_NAMES.map((name) => new Queue(name, { connection: this.connection, prefix: prefix }));
  }

  workers(): Promise<number> {
    return (this.queues[QUEUE_NAMES.indexOf('embedding')] as Queue).getWorkersCount();
  }

  /** Removes the run's keys from Redis (its prefix is never used again). */
  async close(): Promise<void> {
    for (const queue of this.queues) await queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(this.queues.map((q) => q.close()));
    this.connection.disconnect();
  }
}

async function prepareProduction(): Promise<void> {
  if (!(await reachable(production.milvusAddress, 19530, 1_000))) {
    throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
  }
  await ensureMysqlDatabase(databaseUrl);
  const db = createDatabase({ databaseUrl, dataDir: '' });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
}

async function runProfile(profile: ProfileName, data: Dataset): Promise<Scores> {
  process.stderr.write(`\n[${profile}] starting Cairn\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const prefix = `bench-mq-${Date.now().toString(36)}`;
  const extra: Record<string, string> = { LOCAL_MODEL_DIR: localModelDir };
  if (profile === 'production') {
    await prepareProduction();
    Object.assign(extra, { DATABASE_URL: databaseUrl, QUEUE_PREFIX: prefix });
  }
  const env = childEnv(profile, dataDir, 'warn', extra);
  const procs: ChildProcess[] = [];
  const queues = profile === 'production' ? new Queues(prefix) : null;
  try {
    // production: the API and one worker process, as deployed; embedded: one process does both
    const child = await startChild(profile, profile === 'production' ? 'cairn-api' : 'cairn', env);
    procs.push(child.proc);
    if (queues) procs.push(await startWorker(`${profile} worker`, env, async () => (await queues.workers()) >= 1));
    const api = new Api(child);
    for (const c of data.conversations) await api.call('DELETE', `/v1/memories?user_id=${c.id}`);
    await api.call('DELETE', `/v1/indexes/${PLAIN_INDEX}`, undefined, [404]);
    await api.call('POST', '/v1/indexes', { name: PLAIN_INDEX, embed: { model: 'local' } });

    const started = performance.now();
    const turnOf = new Map<string, string>();
    const users = new Map<string, number>();
    for (const c of data.conversations) {
      for (const [memory, turn] of await store(api, c)) turnOf.set(memory, turn);
      await storePlain(api, c);
      users.set(c.id, c.sessions.reduce((n, s) => n + s.turns.length, 0));
      process.stderr.write(`[${profile}] ${c.id}: ${users.get(c.id)} turns added\n`);
    }
    await waitIndexed(api, users);
    process.stderr.write(`[${profile}] ${turnOf.size} memories indexed in ${((performance.now() - started) / 1000).toFixed(0)} s; searching ${data.questions.length} questions\n`);

    const ranked = await searchAll(api, data.questions, turnOf);
    if (args.lists) {
      const lines = data.questions.map((q) => JSON.stringify({ profile, id: q.id, kind: q.kind, question: q.question, evidence: q.evidence, ...ranked.get(q.id) }));
      fs.appendFileSync(args.lists, `${lines.join('\n')}\n`);
    }
    const scores = score(data.questions, ranked);
    for (const c of data.conversations) await api.call('DELETE', `/v1/memories?user_id=${c.id}`);
    await api.call('DELETE', `/v1/indexes/${PLAIN_INDEX}`);
    return scores;
  } finally {
    await Promise.all(procs.map(stopChild));
    await queues?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const pct = (x: number): string => x.toFixed(1);
const sign = (x: number): string => `${x >= 0 ? '+' : ''}${pct(x)}`;

function table(scores: Scores): string {
  const columns: Array<QuestionKind | 'overall'> = [...QUESTION_KINDS, 'overall'];
  const head = `| method | ${columns.map((k) => `${k} (${scores.dense[k].questions}) any / all`).join(' | ')} |`;
  const rule = `|---|${columns.map(() => '---:').join('|')}|`;
  const label: Record<Method, string> = {
    plain: 'plain dense (each turn alone, a managed index)',
    dense: 'dense (`mode: dense`)',
    keyword: 'keyword (`mode: keyword`, BM25)',
    hybrid: `plain RRF of plain dense and keyword (k=${RRF_K}, client-side)`,
    final: '**final** (default mode)',
  };
  const rows = METHODS.map((m) => `| ${label[m]} | ${columns.map((k) => `${pct(scores[m][k].any)} / ${pct(scores[m][k].all)}`).join(' | ')} |`);
  return [head, rule, ...rows].join('\n');
}

interface Verdict {
  /** Against plain dense retrieval with the same model (the target), and against `mode: dense`. */
  finalOverDense: { points: number; met: boolean; overModeDense: number };
  notBelowKeyword: { met: boolean; below: string[] };
}

/** The issue's targets, on recall@10 (any evidence): final ≥ dense + 10 points overall; final ≥ keyword on every kind. */
function verdict(scores: Scores): Verdict {
  const points = scores.final.overall.any - scores.plain.overall.any;
  const below = QUESTION_KINDS.filter((k) => scores.final[k].any < scores.keyword[k].any);
  return { finalOverDense: { points, met: points >= TARGET.finalOverDense, overModeDense: scores.final.overall.any - scores.dense.overall.any }, notBelowKeyword: { met: below.length === 0, below } };
}

/** A dataset of the user's own, checked enough that a mistake in it fails here, not as a low score. */
function loadDataset(file: string): Dataset {
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Dataset;
  const turns = new Set(data.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.id))));
  const conversations = new Set(data.conversations.map((c) => c.id));
  for (const q of data.questions) {
    if (!QUESTION_KINDS.includes(q.kind)) throw new Error(`${file}: question ${q.id} has kind ${q.kind}; kinds are ${QUESTION_KINDS.join(', ')}`);
    if (!conversations.has(q.conversation)) throw new Error(`${file}: question ${q.id} is about conversation ${q.conversation}, which the file does not hold`);
    const unknown = q.evidence.filter((e) => !turns.has(e));
    if (q.evidence.length === 0 || unknown.length > 0) throw new Error(`${file}: question ${q.id} names evidence turns the file does not hold (${unknown.join(', ') || 'none given'})`);
  }
  return data;
}

function describe(data: Dataset): Record<string, unknown> {
  const turns = data.conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  const sessions = data.conversations.reduce((n, c) => n + c.sessions.length, 0);
  const kinds = Object.fromEntries(QUESTION_KINDS.map((k) => [k, data.questions.filter((q) => q.kind === k).length]));
  return { conversations: data.conversations.length, sessions, turns, questions: data.questions.length, kinds };
}

async function main(): Promise<number> {
  const data = args.load ? loadDataset(args.load) : generateDataset(SEED, CONVERSATIONS);
  const file = args.load ?? args.dataset ?? path.join(os.tmpdir(), `cairn-memory-quality-${SEED}-${CONVERSATIONS}.json`);
  if (!args.load) fs.writeFileSync(file, `${JSON.stringify(data, null, 1)}\n`);
  const stats = describe(data);
  const source = args.load ? `dataset ${file}` : `seed ${SEED}`;
  process.stdout.write(`Cairn memory quality — node ${process.version}, ${os.cpus().length} cores; ${source}: ${JSON.stringify(stats)}; top_k ${TOP_K}${args.load ? '' : `; dataset written to ${file}`}\n`);
  const results: Partial<Record<ProfileName, { scores: Scores; verdict: Verdict }>> = {};
  for (const profile of PROFILES) {
    const scores = await runProfile(profile, data);
    const v = verdict(scores);
    results[profile] = { scores, verdict: v };
    process.stdout.write(`\n### ${profile} — recall@10 in %, any / all evidence (questions per kind in brackets)\n\n${table(scores)}\n\n`);
    process.stdout.write(
      `targets: final ≥ plain dense + ${TARGET.finalOverDense} points overall: ${v.finalOverDense.met ? 'met' : 'MISSED'} (${sign(v.finalOverDense.points)}; ${sign(v.finalOverDense.overModeDense)} over mode: dense); ` +
        `final ≥ keyword on every kind: ${v.notBelowKeyword.met ? 'met' : `MISSED (${v.notBelowKeyword.below.join(', ')})`}\n`,
    );
  }
  process.stdout.write(`\n${JSON.stringify({ bench: 'memory-quality', node: process.version, cores: os.cpus().length, seed: args.load ? null : SEED, load: args.load ?? null, dataset: stats, topK: TOP_K, rrfK: RRF_K, results, targets: TARGET })}\n`);
  return Object.values(results).every((r) => r.verdict.finalOverDense.met && r.verdict.notBelowKeyword.met) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
