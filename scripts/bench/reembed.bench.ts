import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import supertest from 'supertest';
import { createApp } from '../../api/app.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { Runtime } from '../../runtime/runtime.js';
import { startEmbeddingServer } from '../../test/embedding-server.js';
import { notes } from './corpus.js';
import { latency, migrateProduction, production, type Latency } from './children.js';

// Re-embedding a project's memories into another model (`PATCH /v1/project/settings`), against
// the raw rate of the same embedder; and memory search while it runs. The embedder is an
// OpenAI-compatible stub with a fixed delay per call (so its rate is known and the same in every
// round), at OPENAI_EMBED_BATCH texts a call and OPENAI_EMBED_CONCURRENCY calls at once. Each round
// measures, one after the other: the raw rate (the embedder handed all the project's texts at once,
// in provider batches: the best it can do), a re-embedding of the project into a fresh model (its
// rate), search latency with nothing else running, and a second re-embedding with a search every
// `--search-ms` meanwhile (availability and latency; the queries share the embedder). Rounds interleave baseline and re-embedding; medians over the rounds.
// Usage: npm run bench:reembed -- [--profile embedded|production] [--memories 3000] [--rounds 3]
//        [--delay 50] [--batch 64] [--concurrency 4] [--search-ms 50]

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'embedded' },
    memories: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    delay: { type: 'string', default: '50' },
    batch: { type: 'string', default: '64' },
    concurrency: { type: 'string', default: '4' },
    'search-ms': { type: 'string', default: '50' },
  },
});
const PROFILE = args.profile === 'production' ? 'production' : 'embedded';
const MEMORIES = Number(args.memories);
const ROUNDS = Number(args.rounds);
const SEARCH_MS = Number(args['search-ms']);

/** Searches sent at an even pace while something ran: how many, how many answered 200 and held the record searched for, how fast. */
interface SearchLoad {
  searches: number;
  /** Ticks with `MAX_OUTSTANDING` searches still unanswered, when none was sent. */
  skipped: number;
  answered: number;
  found: number;
  latency: Latency;
}

interface Round extends SearchLoad {
  rawPerSecond: number;
  reembedPerSecond: number;
  ratio: number;
  /** The rate of the re-embedding searched during (the searches' queries share the embedder). */
  loadedPerSecond: number;
  /** Search latency with nothing else running, just before. */
  idle: Latency;
}

/** Most searches unanswered at once; past it a tick sends none. */
const MAX_OUTSTANDING = 16;
/** How long idle search is measured before each re-embedding. */
const IDLE_MS = 3_000;
const sleepMs = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const stub = await startEmbeddingServer({ delayMs: Number(args.delay), dimension: 384 });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-reembed-'));
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  OPENAI_BASE_URL: stub.url,
  OPENAI_EMBED_BATCH: String(args.batch),
  OPENAI_EMBED_CONCURRENCY: String(args.concurrency),
  // the project starts in a stub model too, so that writing it does not wait on the local model
  MEMORY_EMBED_MODEL: 'openai/bench-start',
  ...(process.env.LOCAL_MODEL_DIR ? { LOCAL_MODEL_DIR: process.env.LOCAL_MODEL_DIR } : {}),
};
if (PROFILE === 'production') {
  await migrateProduction();
  Object.assign(env, { DATABASE_URL: production.databaseUrl, REDIS_URL: production.redisUrl, MILVUS_ADDRESS: production.milvusAddress, QUEUE_PREFIX: 'bench-reembed' });
}
const runtime = await Runtime.create(loadConfig(env), { role: 'all', logger: createLogger('warn'), migrate: true });
await runtime.start();
const http = supertest(createApp(runtime).callback());

try {
  const project = `bench-reembed-${Date.now()}`;
  const { key } = await runtime.apiKeys.createForProject(project);
  const projectId = ((await runtime.repositories.projects.findByName(project)) as { id: string }).id;
  const auth = `Token ${key}`;
  const texts = notes(MEMORIES, 1);
  const user = 'bench-user';
  const schema = await http
    .post('/v1/schemas')
    .set('Authorization', auth)
    .send({ name: 'bench-note', json_schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, embed_template: '{{note}}' });
  if (schema.status !== 201) throw new Error(`schema: ${schema.status} ${JSON.stringify(schema.body)}`);
  const ids: string[] = [];
  for (let at = 0; at < texts.length; at += 1000) {
    const res = await http
      .post('/v1/records/bench-note/batch')
      .set('Authorization', auth)
      .send({ records: texts.slice(at, at + 1000).map((note) => ({ record: { note }, user_id: user })) });
    if (res.status !== 201) throw new Error(`records: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    ids.push(...(res.body.records as Array<{ id: string }>).map((r) => r.id));
  }
  const indexed = async (): Promise<number> =>
    Number(((await runtime.db('memories').where({ project_id: projectId, embedding_status: 'indexed' }).count({ n: '*' })) as [{ n: number | string }])[0].n);
  while ((await indexed()) < MEMORIES) await new Promise((r) => setTimeout(r, 200));
  process.stderr.write(`${MEMORIES} records written and indexed; ${ROUNDS} rounds\n`);

  /**
   * Dense searches for known records, one every SEARCH_MS (not waiting for the one before), until
   * `until` resolves; then waits for those still out.
   */
  const searchLoad = async (until: () => Promise<void>): Promise<SearchLoad> => {
    const samples: number[] = [];
    const load = { searches: 0, answered: 0, found: 0, skipped: 0 };
    let outstanding = 0;
    let running = true;
    void until().then(() => {
      running = false;
    });
    const pending: Array<Promise<void>> = [];
    while (running) {
      if (outstanding >= MAX_OUTSTANDING) {
        // the server is this far behind: the tick is skipped (and counted), not queued without bound
        load.skipped += 1;
        await new Promise((r) => setTimeout(r, SEARCH_MS));
        continue;
      }
      const i = (load.searches++ * 7919) % MEMORIES;
      outstanding += 1;
      pending.push(
        (async () => {
          const started = performance.now();
          const res = await http.post('/v3/memories/search/').set('Authorization', auth).send({ query: texts[i], filters: { user_id: user }, mode: 'dense', top_k: 5 });
          samples.push(performance.now() - started);
          outstanding -= 1;
          if (res.status !== 200) return;
          load.answered += 1;
          if ((res.body.results as Array<{ id: string }>).some((r) => r.id === ids[i])) load.found += 1;
        })(),
      );
      await new Promise((r) => setTimeout(r, SEARCH_MS));
    }
    await Promise.all(pending);
    return { ...load, latency: latency(samples) };
  };

  /** Seconds from the PATCH that changes the model until the project has switched to it. */
  const reembed = async (model: string): Promise<number> => {
    await runtime.embedders.get(model).dimension();
    const started = performance.now();
    const patched = await http.patch('/v1/project/settings').set('Authorization', auth).send({ memory_embed_model: model });
    if (patched.status !== 200) throw new Error(`settings: ${patched.status} ${JSON.stringify(patched.body)}`);
    for (;;) {
      const row = await runtime.repositories.projectSettings.get(projectId);
      if (row?.memory_embed_status === 'ready') return (performance.now() - started) / 1000;
      if (row?.memory_embed_status === 'failed') throw new Error(`re-embedding failed: ${row.memory_embed_error ?? ''}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // the raw rate: every text handed to a fresh model of the same stub at once, in provider
    // batches, so that its parallel calls are all busy: the best this embedder does
    const raw = runtime.embedders.get(`openai/bench-raw-${round}`);
    await raw.dimension();
    const rawStarted = performance.now();
    const batches: Array<Promise<Float32Array[]>> = [];
    for (let at = 0; at < texts.length; at += raw.maxBatch) batches.push(raw.embed(texts.slice(at, at + raw.maxBatch), 'document'));
    await Promise.all(batches);
    const rawPerSecond = MEMORIES / ((performance.now() - rawStarted) / 1000);

    // the re-embedding alone: its rate
    const reembedPerSecond = MEMORIES / (await reembed(`openai/bench-round-${round}`));
    process.stderr.write(`round ${round}: raw ${rawPerSecond.toFixed(0)}/s, re-embedding ${reembedPerSecond.toFixed(0)}/s\n`);
    // search with nothing else running, then during a second re-embedding
    const idle = await searchLoad(sleepMs(IDLE_MS));
    let loadedSeconds = 0;
    const load = await searchLoad(async () => {
      loadedSeconds = await reembed(`openai/bench-round-${round}-searched`);
    });
    const loadedPerSecond = MEMORIES / loadedSeconds;
    const result: Round = { rawPerSecond, reembedPerSecond, ratio: reembedPerSecond / rawPerSecond, loadedPerSecond, idle: idle.latency, ...load };
    rounds.push(result);
    process.stdout.write(`${JSON.stringify({ round, ...result })}\n`);
  }
  const summary = {
    profile: PROFILE,
    memories: MEMORIES,
    delayMs: Number(args.delay),
    batch: Number(args.batch),
    concurrency: Number(args.concurrency),
    rawPerSecond: median(rounds.map((r) => r.rawPerSecond)),
    reembedPerSecond: median(rounds.map((r) => r.reembedPerSecond)),
    ratio: median(rounds.map((r) => r.ratio)),
    loadedPerSecond: median(rounds.map((r) => r.loadedPerSecond)),
    searches: rounds.reduce((s, r) => s + r.searches, 0),
    answeredShare: rounds.reduce((s, r) => s + r.answered, 0) / rounds.reduce((s, r) => s + r.searches, 0),
    foundShare: rounds.reduce((s, r) => s + r.found, 0) / rounds.reduce((s, r) => s + r.searches, 0),
    searchP50: median(rounds.map((r) => r.latency.p50)),
    searchP99: median(rounds.map((r) => r.latency.p99)),
    idleSearchP50: median(rounds.map((r) => r.idle.p50)),
    idleSearchP99: median(rounds.map((r) => r.idle.p99)),
  };
  process.stdout.write(`${JSON.stringify({ summary })}\n`);
} finally {
  await runtime.shutdown.run();
  await stub.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
