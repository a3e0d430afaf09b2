import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Providers } from '../../providers/registry.js';
import { createDatabase, type Knex } from '../../db/knex.js';
import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { reachable } from '../../lib/reachable.js';
import { notes } from './corpus.js';
import { Api, childEnv, latency, migrateProduction, production, startChild, startWorker, stopChild, timed, type Latency } from './children.js';

// P3 — ingest: typed records indexed per second end to end (HTTP write → outbox → queue → embed →
// Milvus, until searchable), against the local embedder's own throughput at a batch size, with 1
// and 2 worker processes on the production profile. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '32' },
    workers: { type: 'string', default: '1,2' },
    concurrency: { type: 'string', default: '8' },
    'timeout-minutes': { type: 'string', default: '15' },
  },
});
const N = Number(args.records);
const B = Number(args.batch);
const WORKERS = args.workers.split(',').map(Number);
const CONCURRENCY = Number(args.concurrency);
const DEADLINE = Date.now() + Number(args['timeout-minutes']) * 60_000;
if (![N, B, CONCURRENCY, ...WORKERS].every((x) => Number.isInteger(x) && x > 0) || !(Number(args['timeout-minutes']) > 0)) {
  process.stderr.write('--records, --batch, --concurrency, --workers (comma-separated) and --timeout-minutes must be positive integers\n');
  process.exit(2);
}
const RAW_SENTENCES = Math.max(B * 10, 960);
const MILVUS_TIMEOUT_MS = 120_000;
const POLL_MS = 100;
// Cleaning up deletes every vector through the queue; bounded so a stuck queue cannot hang the run.
const DRAIN_TIMEOUT_MS = 180_000;
const SCHEMA = 'bench-ingest';
const USER = 'bench-ingest';
const TOPICS = ['work', 'family', 'health', 'travel', 'money', 'hobby'];
const TARGET = { ratio: 0.8 };
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');


/** Sentences per second of the local model embedding batches of `batch`, in this process. */
async function rawEmbedder(batch: number): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const embedder = new Providers(loadConfig({ DATA_DIR: dataDir, LOCAL_MODEL_DIR: localModelDir }), createLogger('warn')).embedders.get('local');
  const texts = notes(RAW_SENTENCES, 1_000_000);
  await embedder.embed(texts.slice(0, batch), 'document'); // loads the model
  const started = performance.now();
  for (let i = 0; i < texts.length; i += batch) await embedder.embed(texts.slice(i, i + batch), 'document');
  const perSecond = texts.length / ((performance.now() - started) / 1000);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return perSecond;
}

/** The bench's view of one run's queues (its own QUEUE_PREFIX), for readiness and draining. */
class Queues {
  private readonly connection = new Redis(production.redisUrl, { maxRetriesPerRequest: null });
  private readonly queues: Queue[];

  constructor(prefix: string) {
    this.queues = QUEUE_NAMES.map((name) => new Queue(name, { connection: this.connection, prefix }));
  }

  private get embedding(): Queue {
    return this.queues[QUEUE_NAMES.indexOf('embedding')] as Queue;
  }

  /** Worker processes consuming the embedding queue. */
  workerCount(): Promise<number> {
    return this.embedding.getWorkersCount();
  }

  async busy(): Promise<number> {
    const counts = await this.embedding.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(counts).reduce((s, x) => s + x, 0);
  }

  /** Removes the run's keys from Redis (its prefix is never used again). */
  async close(): Promise<void> {
    for (const queue of this.queues) await queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(this.queues.map((q) => q.close()));
    this.connection.disconnect();
  }
}

interface Progress {
  indexed: number;
  failed: number;
  pending: number;
}

async function progress(db: Knex, projectId: string, runId: string): Promise<Progress> {
  const rows = (await db('memories')
    .where({ project_id: projectId, user_id: USER, run_id: runId })
    .select('embedding_status')
    .count({ n: '*' })
    .groupBy('embedding_status')) as Array<{ embedding_status: string; n: number | string }>;
  const of = (status: string): number => Number(rows.find((r) => r.embedding_status === status)?.n ?? 0);
  return { indexed: of('indexed'), failed: of('failed'), pending: of('pending') };
}

class Timeout extends Error {}

function checkDeadline(what: string): void {
  if (Date.now() > DEADLINE) throw new Timeout(`timed out (--timeout-minutes ${args['timeout-minutes']}) while ${what}`);
}

/**
 * Polls the database until `count` records of the run are indexed or failed; returns when that
 * was seen, in ms from `origin`. Throws when a worker dies, on abort, or past the deadline.
 */
async function waitIndexed(db: Knex, projectId: string, runId: string, count: number, origin: number, workers: ChildProcess[], signal?: AbortSignal): Promise<{ ms: number; last: Progress }> {
  for (;;) {
    const last = await progress(db, projectId, runId);
    if (last.indexed + last.failed >= count) return { ms: performance.now() - origin, last };
    if (signal?.aborted) throw new Error('aborted');
    const dead = workers.find((w) => w.exitCode !== null || w.signalCode !== null);
    if (dead) throw new Error(`worker ${dead.pid ?? '?'} exited during the run`);
    checkDeadline(`waiting for ${count - last.indexed - last.failed} records of ${runId} to be indexed`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Waits until no embedding job is queued or running and no outbox entry is waiting for a relay,
 * twice in a row. Entries a relay holds under lease are left out: a relay whose delete of a
 * delivered entry fails (MariaDB reports deadlocks between relays) keeps it leased for minutes.
 */
async function waitDrained(db: Knex, queues: Queues): Promise<boolean> {
  const until = Date.now() + DRAIN_TIMEOUT_MS;
  let idle = 0;
  while (Date.now() < until && idle < 2) {
    const [waiting] = (await db('outbox')
      .where((q) => q.whereNull('locked_until').orWhere('locked_until', '<', Date.now()))
      .count({ n: '*' })) as Array<{ n: number | string }>;
    idle = Number(waiting?.n) === 0 && (await queues.busy()) === 0 ? idle + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return idle >= 2;
}

/** Records with ids, `CONCURRENCY` requests in flight, each request timed. */
async function postAll(api: Api, texts: string[], runId: string, signal: AbortController): Promise<{ ids: string[]; latencies: number[] }> {
  const ids: string[] = [];
  const latencies: number[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < texts.length; i = next++) {
      latencies[i] = await timed(async () => {
        const body = { record: { note: texts[i], topic: TOPICS[i % TOPICS.length] }, user_id: USER, run_id: runId };
        ids[i] = (await api.call('POST', `/v1/records/${SCHEMA}`, body)).id as string;
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  } catch (err) {
    signal.abort();
    throw err;
  }
  return { ids, latencies };
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

interface RunResult {
  workers: number;
  records: number;
  write: Latency;
  writeSeconds: number;
  writesPerSecond: number;
  /** From the first POST to the poll that saw every record indexed. */
  indexSeconds: number;
  indexedPerSecond: number;
  /** From the last POST's answer to every record indexed. */
  tailSeconds: number;
  ratio: number;
  failed: number;
  searchFound: boolean;
  searchMs: number;
}

async function runWorkers(w: number, raw: number, texts: string[]): Promise<RunResult> {
  process.stderr.write(`\n[workers ${w}] starting the API and ${w} worker process${w > 1 ? 'es' : ''}\n`);
  const prefix = `bench-ingest-${Date.now().toString(36)}-w${w}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const env = childEnv('production', dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir, MILVUS_TIMEOUT_MS: String(MILVUS_TIMEOUT_MS), QUEUE_PREFIX: prefix });
  const queues = new Queues(prefix);
  const db: Knex = createDatabase(loadConfig(env as Record<string, string>));
  const procs: ChildProcess[] = [];
  try {
    const child = await startChild('api', 'cairn-api', env);
    procs.push(child.proc);
    const workers = await Promise.all(Array.from({ length: w }, (_, i) => startWorker(`worker ${i + 1}`, env, async () => (await queues.workerCount()) >= w)));
    procs.push(...workers);
    const api = new Api(child);
    await ensureSchema(api);
    const { id: projectId } = (await db('projects').where({ name: 'bench' }).first('id')) as { id: string };

    // Records left by an interrupted run, then a warm-up that loads the model in every process
    // and creates the Milvus collection; none of it timed.
    await api.call('DELETE', `/v1/memories?user_id=${USER}`);
    if (!(await waitDrained(db, queues))) throw new Error('the queue did not drain after deleting earlier records');
    const warmTexts = notes(16 * w, 2_000_000);
    const warmId = `warm-${prefix}`;
    const warm = performance.now();
    await postAll(api, warmTexts, warmId, new AbortController());
    await waitIndexed(db, projectId, warmId, warmTexts.length, warm, workers);
    await api.call('POST', '/v3/memories/search', { query: warmTexts[0], filters: { user_id: USER }, top_k: 1 });

    const runId = `run-${prefix}`;
    process.stderr.write(`[workers ${w}] posting ${texts.length} records, ${CONCURRENCY} in flight\n`);
    const abort = new AbortController();
    const origin = performance.now();
    const [writes, done] = await Promise.all([
      postAll(api, texts, runId, abort).then((r) => ({ ...r, ms: performance.now() - origin })),
      waitIndexed(db, projectId, runId, texts.length, origin, workers, abort.signal),
    ]);
    // The last record written, found by its own text: it is searchable, not only marked indexed.
    const known = texts.length - 1;
    let hits: Array<{ id: string }> = [];
    const searchMs = await timed(async () => {
      const found = await api.call('POST', '/v3/memories/search', { query: texts[known], filters: { AND: [{ user_id: USER }, { run_id: runId }] }, top_k: 3 });
      hits = found.results as Array<{ id: string }>;
    });

    process.stderr.write(`[workers ${w}] cleaning up: deleting the run's records and their vectors\n`);
    await api.call('DELETE', `/v1/memories?user_id=${USER}`);
    if (!(await waitDrained(db, queues))) process.stderr.write(`[workers ${w}] warning: the queue did not drain within ${DRAIN_TIMEOUT_MS / 1000} s\n`);

    const indexSeconds = done.ms / 1000;
    return {
      workers: w,
      records: texts.length,
      write: latency(writes.latencies),
      writeSeconds: writes.ms / 1000,
      writesPerSecond: texts.length / (writes.ms / 1000),
      indexSeconds,
      indexedPerSecond: done.last.indexed / indexSeconds,
      tailSeconds: (done.ms - writes.ms) / 1000,
      ratio: done.last.indexed / indexSeconds / raw,
      failed: done.last.failed,
      searchFound: hits[0]?.id === writes.ids[known],
      searchMs,
    };
  } finally {
    await Promise.all(procs.map(stopChild));
    await queues.close();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fixed = (x: number, digits = 1): string => x.toFixed(digits);

function table(raw: number, results: RunResult[]): string {
  const head = ['workers', 'write p50', 'write p99', 'writes/s', 'indexed/s', 'first POST → all indexed', 'after last POST', 'ratio', 'failed', 'search'];
  const rows = results.map((r) => [
    String(r.workers),
    `${fixed(r.write.p50, 2)} ms`,
    `${fixed(r.write.p99, 2)} ms`,
    fixed(r.writesPerSecond, 0),
    fixed(r.indexedPerSecond, 0),
    `${fixed(r.indexSeconds, 2)} s`,
    `${fixed(r.tailSeconds, 2)} s`,
    fixed(r.ratio, 3),
    String(r.failed),
    r.searchFound ? `found (${fixed(r.searchMs, 0)} ms)` : 'NOT FOUND',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  return [`raw embedder, batch ${B}: ${fixed(raw, 0)} sentences/s`, line(head), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  process.stdout.write(
    `Cairn ingest — node ${process.version}, ${os.cpus().length} cores; ${N} records, ${CONCURRENCY} writes in flight, batch ${B}, workers ${WORKERS.join(', ')}` +
      ` (WORKER_CONCURRENCY ${process.env.WORKER_CONCURRENCY ?? 'default'}, EMBED_CONCURRENCY ${process.env.EMBED_CONCURRENCY ?? 'default'})\n`,
  );
  if (!(await reachable(production.milvusAddress, 19530, 1_000))) {
    throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
  }
  await migrateProduction();
  // Before any Cairn process exists, so nothing else competes for the cores.
  const raw = await rawEmbedder(B);
  process.stderr.write(`raw embedder: ${fixed(raw, 0)} sentences/s at batch ${B}\n`);
  const texts = notes(N, 0);
  const results: RunResult[] = [];
  let timedOut: string | null = null;
  for (const w of WORKERS) {
    try {
      results.push(await runWorkers(w, raw, texts));
    } catch (err) {
      if (!(err instanceof Timeout)) throw err;
      timedOut = err.message;
      break;
    }
  }
  process.stdout.write(`\n${table(raw, results)}\n`);
  if (timedOut) process.stdout.write(`\n${timedOut}\n`);
  const verdicts = results.map((r) => ({ workers: r.workers, ratioMet: r.ratio >= TARGET.ratio }));
  const summary = { bench: 'ingest', node: process.version, cores: os.cpus().length, records: N, batch: B, concurrency: CONCURRENCY, raw: { batch: B, sentencesPerSecond: raw }, results, targets: TARGET, verdicts, timedOut };
  process.stdout.write(`\n${JSON.stringify(summary)}\n`);
  return timedOut !== null || results.some((r) => r.failed > 0 || !r.searchFound) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:ingest failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
