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
import { Bm25 } from './memory-quality/bm25.js';
import { CHANGE_KINDS, CORE_KINDS, generateDataset, QUESTION_KINDS, type Conversation, type Dataset, type Fact, type Question, type QuestionKind } from './memory-quality/dataset.js';

// Memory quality (`npm run bench:memory-quality`, issue 14): seeded multi-session chats stored turn
// by turn as memories (infer: false, one user_id per conversation, each turn's time as its event
// time), then every question searched with top_k 10 in dense, keyword and the default (final)
// ranking. The baselines, computed here: plain dense (each turn embedded alone with the same
// model, in a managed vector index of the same Cairn), plain reciprocal-rank fusion of it and the
// keyword list, and bm25+ (BM25 over each conversation's turn texts without the speaker's name,
// stemmed, stop words out; `memory-quality/bm25.ts`). `--load` evaluates a dataset of one's own
// instead. Recall@10 counts a question when any / all of its evidence turns are among the ten;
// "overall" is over the four kinds of issue 14 (single-hop, multi-hop, temporal, open-domain),
// and the kinds about facts that changed are columns of their own: knowledge-update (the value
// now, with how often a current-value turn ranks above every superseded one, and the value
// before) and as-of (the value at a past time, searched with `as_of`; plain dense and bm25+ keep
// the turns at or before it themselves). `as_of` is sent only when the server's /openapi.json
// lists it for memory search; otherwise the server's rows say "not supported by server" there.
// Summary lines: final − bm25+ per set, and issue 14's targets. See BENCHMARKS.md.
//
//   MEMORY_QUALITY_DATABASE_URL=mysql://… npm run bench:memory-quality -- --profiles embedded \
//     [--seed 14] [--conversations 10] [--dataset out.json] [--lists top10.jsonl] > run.txt

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
const METHODS = ['plain', 'dense', 'keyword', 'hybrid', 'bm25+', 'final'] as const;
const SEARCH_ROUTE = '/v3/memories/search/';
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
    const records = turns.slice(at, at + UPSERT_BATCH).map((t) => ({ _id: t.id, text: `${t.speaker}: ${t.text}`, conversation: conversation.id, time: t.time }));
    await api.call('POST', `/v1/indexes/${PLAIN_INDEX}/records/upsert`, { records });
  }
}

/**
 * The facts track: each person whose home or job changes gets a user of their own, holding their
 * own chat lines (stored as given) and the facts they tell the assistant (mem0 add with infer, the
 * local rules deciding, at the time each became true). An UPDATE supersedes the old fact, whose
 * text stays as a version: its id is read from the memory's chain. Returns memory id → turn or
 * fact id, and each owner's memory count (every version).
 */
async function storeFacts(api: Api, data: Dataset): Promise<{ ids: Map<string, string>; owners: Map<string, number> }> {
  const ids = new Map<string, string>();
  const owners = new Map<string, number>();
  const facts = data.facts ?? [];
  for (const owner of new Set(facts.map((f) => f.owner))) {
    const own = facts.filter((f) => f.owner === owner).sort((a, b) => a.time - b.time);
    const { conversation, speaker } = own[0] as Fact;
    const turns = (data.conversations.find((c) => c.id === conversation) as Conversation).sessions.flatMap((s) => s.turns).filter((t) => t.speaker === speaker);
    await pool(turns, async (turn) => {
      const added = await api.call('POST', '/v3/memories/add/', { messages: [{ role: 'user', content: `${turn.speaker}: ${turn.text}` }], user_id: owner, infer: false, timestamp: turn.time });
      ids.set(((added.results as Array<{ id: string }>)[0] as { id: string }).id, turn.id);
    });
    let count = turns.length;
    for (const fact of own) {
      const added = await api.call('POST', '/v3/memories/add/', { messages: [{ role: 'user', content: fact.text }], user_id: owner, timestamp: fact.time });
      for (const m of added.results as Array<{ id: string; event: string }>) {
        const before = ids.get(m.id);
        if (m.event === 'ADD') count++;
        if (m.event === 'ADD' || m.event === 'UPDATE') ids.set(m.id, fact.id);
        if (m.event === 'UPDATE') {
          count++;
          const chain = (await api.call('GET', `/v1/memories/${m.id}/versions/`)) as unknown as Array<{ id: string }>;
          // the newest superseded version holds the text this update replaced
          if (chain[1] && before !== undefined) ids.set(chain[1].id, before);
        }
      }
    }
    owners.set(owner, count);
  }
  return { ids, owners };
}

/** Polls the list of each user's memories until all `expected` are indexed. */
async function waitIndexed(api: Api, users: Map<string, number>, versions = false): Promise<void> {
  const deadline = Date.now() + INDEX_TIMEOUT_MS;
  for (const [user, expected] of users) {
    for (;;) {
      let indexed = 0;
      for (let page = 1; ; page++) {
        const listed = await api.call('POST', `/v3/memories/?page=${page}&page_size=100`, { filters: { user_id: user }, ...(versions ? { include_superseded: true } : {}) });
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

/**
 * A call retried while it answers 503 (a dependency the server could not reach, e.g. Milvus Lite
 * busy on a loaded machine), as a client does, at most 5 times a second apart: recall, not
 * availability, is what this bench measures.
 */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 5 || !/answered 503/.test(String(err))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** Reciprocal-rank fusion of ranked id lists, best first. */
function rrf(lists: string[][], k = RRF_K): string[] {
  const score = new Map<string, number>();
  for (const list of lists) list.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...score.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

/** Each method's top 10 turn ids; null where the server could not be asked (`as_of` not in its schema). */
type Ranked = Record<Method, string[] | null>;

/** What the server's memory search takes, read once from its `/openapi.json`. */
interface ServerSupport {
  asOf: boolean;
}

/** Whether a JSON schema (or one of its alternatives) names a property. */
function namesProperty(schema: unknown, name: string): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { properties?: Record<string, unknown>; allOf?: unknown[]; anyOf?: unknown[]; oneOf?: unknown[] };
  if (s.properties && name in s.properties) return true;
  return [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((sub) => namesProperty(sub, name));
}

async function serverSupport(api: Api): Promise<ServerSupport> {
  const doc = (await api.call('GET', '/openapi.json')) as { paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: unknown }> } } }> };
  // the document names routes without the trailing slash mem0's clients send
  const route = doc.paths?.[SEARCH_ROUTE] ?? doc.paths?.[SEARCH_ROUTE.replace(/\/$/, '')];
  const body = route?.post?.requestBody?.content?.['application/json']?.schema;
  return { asOf: namesProperty(body, 'as_of') };
}

async function searchAll(api: Api, data: Dataset, turnOf: Map<string, string>, support: ServerSupport): Promise<Map<string, Ranked>> {
  const search = async (q: Question, extra: Record<string, unknown>): Promise<string[]> => {
    const asOf = q.as_of === undefined ? {} : { as_of: q.as_of };
    const history = q.include_superseded ? { include_superseded: true } : {};
    const found = await retried(() => api.call('POST', SEARCH_ROUTE, { query: q.question, filters: { user_id: q.owner ?? q.conversation }, ...asOf, ...history, ...extra }));
    return (found.results as Array<{ id: string }>).map((r) => turnOf.get(r.id) ?? `unknown:${r.id}`);
  };
  const plainSearch = async (q: Question): Promise<string[]> => {
    // a vector database's metadata filter on the turn's time, as a user of one would write it
    const filter = q.as_of === undefined ? { conversation: q.conversation } : { conversation: q.conversation, time: { $lte: q.as_of } };
    const found = await api.call('POST', `/v1/indexes/${PLAIN_INDEX}/query`, { text: q.question, top_k: FUSION_DEPTH, filter });
    return (found.matches as Array<{ id: string }>).map((m) => m.id);
  };
  const bm25 = new Map(data.conversations.map((c) => [c.id, new Bm25(c.sessions.flatMap((s) => s.turns.map((t) => ({ id: t.id, text: t.text, time: t.time }))))]));
  const ranked = new Map<string, Ranked>();
  let done = 0;
  await pool(data.questions, async (q) => {
    const lexical = (bm25.get(q.conversation) as Bm25).rank(q.question, q.as_of).slice(0, TOP_K);
    if (q.owner !== undefined) {
      // the facts track is Cairn's own (facts added with infer): no baseline holds the facts
      const [dense, keyword, final] = await Promise.all([search(q, { mode: 'dense', top_k: FUSION_DEPTH }), search(q, { mode: 'keyword', top_k: FUSION_DEPTH }), search(q, { top_k: TOP_K })]);
      ranked.set(q.id, { plain: null, dense: dense.slice(0, TOP_K), keyword: keyword.slice(0, TOP_K), hybrid: null, 'bm25+': null, final });
    } else if (q.as_of !== undefined && !support.asOf) {
      const plain = await plainSearch(q);
      ranked.set(q.id, { plain: plain.slice(0, TOP_K), dense: null, keyword: null, hybrid: null, 'bm25+': lexical, final: null });
    } else {
      // top 10 of the 100-deep lists is what top_k 10 answers: every list ranks exhaustively
      const [plain, dense, keyword, final] = await Promise.all([
        plainSearch(q),
        search(q, { mode: 'dense', top_k: FUSION_DEPTH }),
        search(q, { mode: 'keyword', top_k: FUSION_DEPTH }),
        search(q, { top_k: TOP_K }),
      ]);
      // the naive hybrid: plain dense and BM25 fused by reciprocal rank
      ranked.set(q.id, { plain: plain.slice(0, TOP_K), dense: dense.slice(0, TOP_K), keyword: keyword.slice(0, TOP_K), hybrid: rrf([plain, keyword]).slice(0, TOP_K), 'bm25+': lexical, final });
    }
    if (++done % 200 === 0) process.stderr.write(`  ${done}/${data.questions.length} questions searched\n`);
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
/** A set of questions: a kind, or `overall` (the four kinds of issue 14 only, comparable with earlier runs). */
type QuestionSet = QuestionKind | 'overall';
/** Recall per method and set; null where the set has no questions or the server could not be asked. */
type Scores = Record<Method, Record<QuestionSet, Recall | null>>;

/** The questions of each set. */
function questionSets(questions: Question[]): Record<QuestionSet, Question[]> {
  const core = questions.filter((q) => CORE_KINDS.includes(q.kind));
  return Object.fromEntries([...QUESTION_KINDS.map((k) => [k, questions.filter((q) => q.kind === k)]), ['overall', core]]) as Record<QuestionSet, Question[]>;
}

function score(questions: Question[], ranked: Map<string, Ranked>): Scores {
  const recall = (method: Method, subset: Question[]): Recall | null => {
    let any = 0;
    let all = 0;
    for (const q of subset) {
      const list = (ranked.get(q.id) as Ranked)[method];
      if (list === null) return null;
      const top = new Set(list);
      if (q.evidence.some((e) => top.has(e))) any++;
      if (q.evidence.every((e) => top.has(e))) all++;
    }
    return subset.length === 0 ? null : { questions: subset.length, any: (100 * any) / subset.length, all: (100 * all) / subset.length };
  };
  const sets = questionSets(questions);
  return Object.fromEntries(METHODS.map((m) => [m, Object.fromEntries(Object.entries(sets).map(([set, subset]) => [set, recall(m, subset)]))])) as Scores;
}

/** Of the knowledge-update questions about the value now: how often a current-value turn ranks above every superseded turn in the top 10 (one absent from it counts as below). */
interface CurrentFirst {
  questions: number;
  above: number;
  percent: number;
}

function currentFirst(questions: Question[], ranked: Map<string, Ranked>): Record<Method, CurrentFirst | null> {
  const now = questions.filter((q) => q.superseded && q.superseded.length > 0);
  const rankOf = (list: string[], ids: string[]): number => Math.min(...ids.map((id) => (list.includes(id) ? list.indexOf(id) : Infinity)));
  return Object.fromEntries(
    METHODS.map((m) => {
      let above = 0;
      for (const q of now) {
        const list = (ranked.get(q.id) as Ranked)[m] ?? [];
        const current = rankOf(list, q.evidence);
        if (current < Infinity && current < rankOf(list, q.superseded as string[])) above++;
      }
      return [m, now.length === 0 ? null : { questions: now.length, above, percent: (100 * above) / now.length }];
    }),
  ) as Record<Method, CurrentFirst | null>;
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

interface ProfileResult {
  scores: Scores;
  currentFirst: Record<Method, CurrentFirst | null>;
  /** The facts track (generated data, a server with as_of): its knowledge-update and as-of questions. */
  facts: { scores: Scores; currentFirst: Record<Method, CurrentFirst | null> } | null;
  server: ServerSupport;
}

async function runProfile(profile: ProfileName, data: Dataset): Promise<ProfileResult> {
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
    const support = await serverSupport(api);
    if (!support.asOf) process.stderr.write(`[${profile}] ${SEARCH_ROUTE} does not take as_of: as-of questions are asked of plain dense and bm25+ only\n`);
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
    // the facts track needs what the server's validity gives: as_of and versions
    const tracked = support.asOf ? await storeFacts(api, data) : { ids: new Map<string, string>(), owners: new Map<string, number>() };
    for (const [memory, id] of tracked.ids) turnOf.set(memory, id);
    await waitIndexed(api, tracked.owners, true);
    const asked = support.asOf ? data : { ...data, questions: data.questions.filter((q) => q.owner === undefined) };

    const ranked = await searchAll(api, asked, turnOf, support);
    if (args.lists) {
      const lines = data.questions.map((q) => JSON.stringify({ profile, id: q.id, kind: q.kind, question: q.question, evidence: q.evidence, superseded: q.superseded, as_of: q.as_of, ...ranked.get(q.id) }));
      fs.appendFileSync(args.lists, `${lines.join('\n')}\n`);
    }
    const chat = asked.questions.filter((q) => q.owner === undefined);
    const facts = asked.questions.filter((q) => q.owner !== undefined);
    const result = {
      scores: score(chat, ranked),
      currentFirst: currentFirst(chat, ranked),
      facts: facts.length === 0 ? null : { scores: score(facts, ranked), currentFirst: currentFirst(facts, ranked) },
      server: support,
    };
    for (const c of data.conversations) await api.call('DELETE', `/v1/memories?user_id=${c.id}`);
    for (const owner of tracked.owners.keys()) await api.call('DELETE', `/v1/memories?user_id=${encodeURIComponent(owner)}`);
    await api.call('DELETE', `/v1/indexes/${PLAIN_INDEX}`);
    return result;
  } finally {
    await Promise.all(procs.map(stopChild));
    await queues?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const pct = (x: number): string => x.toFixed(1);
const sign = (x: number): string => `${x >= 0 ? '+' : ''}${pct(x)}`;

/** The table's columns: the four kinds and their overall, then the kinds about changed facts, each where the data has questions of it. */
function columns(data: Dataset): QuestionSet[] {
  const sets = questionSets(data.questions);
  return [...CORE_KINDS, 'overall' as const, ...CHANGE_KINDS].filter((k) => sets[k].length > 0);
}

function table(data: Dataset, result: ProfileResult): string {
  const { scores } = result;
  const sets = questionSets(data.questions);
  const cols = columns(data);
  const nowQuestions = Object.values(result.currentFirst).find((c) => c !== null)?.questions ?? 0;
  const title = (k: QuestionSet): string => (k === 'overall' ? `overall (${sets.overall.length}; the four kinds)` : `${k} (${sets[k].length})`);
  const head = `| method | ${cols.map(title).join(' | ')} |${nowQuestions ? ` now: current above superseded (${nowQuestions}) |` : ''}`;
  const rule = `|---|${cols.map(() => '---:').join('|')}|${nowQuestions ? '---:|' : ''}`;
  const label: Record<Method, string> = {
    plain: 'plain dense (each turn alone, a managed index)',
    dense: 'dense (`mode: dense`)',
    keyword: 'keyword (`mode: keyword`, BM25)',
    hybrid: `plain RRF of plain dense and keyword (k=${RRF_K}, client-side)`,
    'bm25+': 'bm25+ (turn text alone, stemmed, stop words out; client-side)',
    final: '**final** (default mode)',
  };
  const cell = (r: Recall | null, k: QuestionSet): string => (r ? `${pct(r.any)} / ${pct(r.all)}` : k === 'as-of' ? 'not supported by server' : '–');
  const rows = METHODS.map((m) => {
    const first = result.currentFirst[m];
    const now = nowQuestions ? ` ${first ? pct(first.percent) : 'not supported by server'} |` : '';
    return `| ${label[m]} | ${cols.map((k) => cell(scores[m][k], k)).join(' | ')} |${now}`;
  });
  return [head, rule, ...rows].join('\n');
}

/** Final less bm25+ in points per set, any / all evidence. */
function overBm25(data: Dataset, scores: Scores): Record<string, { any: number; all: number } | null> {
  return Object.fromEntries(
    columns(data).map((k) => {
      const f = scores.final[k];
      const b = scores['bm25+'][k];
      return [k, f && b ? { any: f.any - b.any, all: f.all - b.all } : null];
    }),
  );
}

interface Verdict {
  /** Against plain dense retrieval with the same model (the target), and against `mode: dense`. */
  finalOverDense: { points: number; met: boolean; overModeDense: number };
  notBelowKeyword: { met: boolean; below: string[] };
}

/** The issue's targets, on recall@10 (any evidence): final ≥ dense + 10 points overall; final ≥ keyword on every kind of issue 14. */
function verdict(scores: Scores): Verdict {
  const any = (m: Method, k: QuestionSet): number => scores[m][k]?.any ?? NaN;
  const points = any('final', 'overall') - any('plain', 'overall');
  const below = CORE_KINDS.filter((k) => any('final', k) < any('keyword', k));
  return { finalOverDense: { points, met: points >= TARGET.finalOverDense, overModeDense: any('final', 'overall') - any('dense', 'overall') }, notBelowKeyword: { met: below.length === 0, below } };
}

/** A dataset of the user's own, checked enough that a mistake in it fails here, not as a low score. */
function loadDataset(file: string): Dataset {
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Dataset;
  // a fact of the facts track stands for evidence as a turn does
  const turns = new Set([...data.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.id))), ...(data.facts ?? []).map((f) => f.id)]);
  const conversations = new Set(data.conversations.map((c) => c.id));
  for (const q of data.questions) {
    if (!QUESTION_KINDS.includes(q.kind)) throw new Error(`${file}: question ${q.id} has kind ${q.kind}; kinds are ${QUESTION_KINDS.join(', ')}`);
    if (!conversations.has(q.conversation)) throw new Error(`${file}: question ${q.id} is about conversation ${q.conversation}, which the file does not hold`);
    const unknown = q.evidence.filter((e) => !turns.has(e));
    if (q.evidence.length === 0 || unknown.length > 0) throw new Error(`${file}: question ${q.id} names evidence turns the file does not hold (${unknown.join(', ') || 'none given'})`);
    const gone = (q.superseded ?? []).filter((e) => !turns.has(e));
    if (gone.length > 0) throw new Error(`${file}: question ${q.id} names superseded turns the file does not hold (${gone.join(', ')})`);
    if (q.as_of !== undefined && !Number.isInteger(q.as_of)) throw new Error(`${file}: question ${q.id} has as_of ${String(q.as_of)}; it must be unix seconds (an integer)`);
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
  const results: Partial<Record<ProfileName, ProfileResult & { verdict: Verdict; finalMinusBm25: ReturnType<typeof overBm25> }>> = {};
  for (const profile of PROFILES) {
    const result = await runProfile(profile, data);
    const v = verdict(result.scores);
    const gap = overBm25({ ...data, questions: data.questions.filter((q) => q.owner === undefined) }, result.scores);
    results[profile] = { ...result, verdict: v, finalMinusBm25: gap };
    const chatData = { ...data, questions: data.questions.filter((q) => q.owner === undefined) };
    process.stdout.write(`\n### ${profile} — recall@10 in %, any / all evidence (questions per kind in brackets)\n\n${table(chatData, result)}\n\n`);
    if (result.facts) {
      const factData = { ...data, questions: data.questions.filter((q) => q.owner !== undefined) };
      process.stdout.write(`\n### ${profile} — facts track (each person's lines and the facts they told, added with infer): recall@10 in %\n\n${table(factData, { ...result, ...result.facts })}\n\n`);
    }
    process.stdout.write(`final − bm25+ in points, any / all: ${Object.entries(gap).map(([k, d]) => `${k} ${d ? `${sign(d.any)} / ${sign(d.all)}` : 'not supported by server'}`).join('; ')}\n`);
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
