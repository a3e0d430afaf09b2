import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Embedder } from '../../providers/embedder.js';
import { newMemoryRow } from '../../core/memory/rows.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { Runtime } from '../../runtime/runtime.js';
import { Api, childEnv, latency, repoRoot, startChild, stopChild, timed, type Latency } from './children.js';
import { notes } from './corpus.js';

// P3, second part — memory search at 100k memories (`npm run bench:memory-search`), on the embedded
// profile: the memories are stored and indexed once (rows, their keyword index and the real
// embeddings of each note written, as `add` and the indexing job would), then text searches run in
// each mode through the API of a Cairn child and, for scale, through the same code in this
// process. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    memories: { type: 'string', default: '100000' },
    users: { type: 'string', default: '100' },
    queries: { type: 'string', default: '300' },
    // search modes measured, each sent as the request's `mode`: hybrid is the default search
    modes: { type: 'string', default: 'hybrid,dense' },
  },
});
const N = Number(args.memories);
const USERS = Number(args.users);
const QUERIES = Number(args.queries);
if (![N, USERS, QUERIES].every((x) => Number.isInteger(x) && x > 0)) {
  process.stderr.write('--memories, --users and --queries must be positive integers\n');
  process.exit(2);
}
const SEARCH_MODES = ['hybrid', 'dense', 'keyword'] as const;
type Mode = (typeof SEARCH_MODES)[number];
const MODES = args.modes.split(',').map((m) => m.trim()) as Mode[];
if (!MODES.every((m) => SEARCH_MODES.includes(m))) {
  process.stderr.write(`--modes is a comma-separated list of ${SEARCH_MODES.join(', ')}\n`);
  process.exit(2);
}
const SEED_BATCH = 1000;
const TOP_K = 10;
const APP = 'bench-app';
// P2's targets for a query by text through the API
const TARGET = { p50: 20, p99: 60 };
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

interface Case {
  name: string;
  /** What the filter keeps, in memories. */
  scope: number;
  filters: (i: number) => Record<string, unknown>;
}

const CASES: Case[] = [
  { name: `one user (${N / USERS} memories)`, scope: N / USERS, filters: (i) => ({ user_id: `u${i % USERS}` }) },
  { name: 'one user, created_at in the newer half', scope: N / USERS / 2, filters: (i) => ({ AND: [{ user_id: `u${i % USERS}` }, { created_at: { gte: 1_000_000 + N / 2 } }] }) },
  { name: `whole app (${N} memories)`, scope: N, filters: () => ({ app_id: APP }) },
];

/**
 * The embeddings of the seeded notes, kept under .cache/ after the first run: the notes are the
 * same for the same count, and embedding 100 000 of them takes minutes. The file holds the
 * vectors of every note, packed in order; one of the wrong size is embedded again.
 */
class SeedVectors {
  private readonly file: string;
  private cached: Float32Array | null = null;
  private readonly made: Float32Array[] = [];

  constructor(private readonly embedder: Embedder, private readonly dimension: number) {
    const model = embedder.model.replace(/[^a-zA-Z0-9]+/g, '_');
    this.file = path.join(repoRoot, '.cache', 'bench', `memory-search-${model}-${N}-${SEED_BATCH}.f32`);
    if (fs.existsSync(this.file) && fs.statSync(this.file).size === N * dimension * 4) {
      const bytes = fs.readFileSync(this.file);
      this.cached = new Float32Array(bytes.buffer, bytes.byteOffset, N * dimension);
    }
  }

  /** The vectors of notes `first … first + texts.length`, from the cache or the model. */
  async get(texts: string[], first: number): Promise<Float32Array[]> {
    if (this.cached) {
      return texts.map((_, j) => (this.cached as Float32Array).subarray((first + j) * this.dimension, (first + j + 1) * this.dimension));
    }
    const vectors = await this.embedder.embed(texts, 'document');
    this.made.push(...vectors);
    return vectors;
  }

  /** Writes the file when the vectors came from the model. */
  save(): void {
    if (this.cached) return;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    fs.writeFileSync(`${this.file}.tmp`, Buffer.concat(this.made.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))));
    fs.renameSync(`${this.file}.tmp`, this.file);
  }
}

async function seed(runtime: Runtime, projectId: string): Promise<number> {
  const spec = await runtime.memoryIndexer.collection(projectId);
  const seedVectors = new SeedVectors(runtime.embedders.get('local'), spec.dimension);
  const started = performance.now();
  for (let first = 0; first < N; first += SEED_BATCH) {
    const texts = notes(Math.min(SEED_BATCH, N - first), first);
    const vectors = await seedVectors.get(texts, first);
    // distinct, increasing event times so a created_at filter cuts the set in two
    const rows = texts.map((memory, j) => ({
      ...newMemoryRow(projectId, { user_id: `u${(first + j) % USERS}`, app_id: APP }, memory, undefined, 1_000_000 + first + j),
      embedding_status: 'indexed' as const,
    }));
    await runtime.memories.importRows(rows);
    await runtime.vectors.upsert(
      spec,
      projectId,
      rows.map((row, j) => ({
        id: row.id,
        values: vectors[j] as Float32Array,
        columns: { user_id: row.user_id, agent_id: null, run_id: null, app_id: APP, schema: null, created_at: row.created_at },
        metadata: {},
      })),
    );
    if ((first / SEED_BATCH) % 10 === 9) process.stderr.write(`  ${first + SEED_BATCH} memories stored\n`);
  }
  seedVectors.save();
  return (performance.now() - started) / 1000;
}

interface CaseResult {
  name: string;
  mode: Mode;
  scope: number;
  api: Latency;
  direct: Latency;
  hitsPerQuery: number;
}

/** One case in one mode: the same searches through the API and directly, interleaved. */
async function measure(api: Api, runtime: Runtime, projectId: string, queries: string[], c: Case, mode: Mode): Promise<CaseResult> {
  const body = (i: number) => ({ query: queries[i % queries.length] as string, filters: c.filters(i), top_k: TOP_K, mode });
  // warm both paths: the first search of a collection loads it (with fewer than 10 queries, some twice)
  for (let i = 0; i < 10; i++) {
    await api.call('POST', '/v3/memories/search/', body(i));
    await runtime.memorySearch.search(projectId, body(i));
  }
  const apiMs: number[] = [];
  const directMs: number[] = [];
  let hits = 0;
  // interleaved, so drift on the shared machine hits both paths alike
  for (let i = 0; i < QUERIES; i++) {
    apiMs.push(
      await timed(async () => {
        hits += ((await api.call('POST', '/v3/memories/search/', body(i))).results as unknown[]).length;
      }),
    );
    directMs.push(await timed(() => runtime.memorySearch.search(projectId, body(i))));
  }
  return { name: c.name, mode, scope: c.scope, api: latency(apiMs), direct: latency(directMs), hitsPerQuery: hits / QUERIES };
}

async function main(): Promise<void> {
  process.stdout.write(`Cairn memory search — node ${process.version}, ${os.cpus().length} cores; ${N} memories over ${USERS} users, ${QUERIES} queries per case, top_k ${TOP_K}, embedded profile\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const env = childEnv('embedded', dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir });
  const runtime = await Runtime.create(loadConfig(env as Record<string, string>), { role: 'all', logger: createLogger('warn') });
  let child = null;
  try {
    const { key } = await runtime.apiKeys.createForProject('bench-memories');
    const project = (await runtime.repositories.projects.findByName('bench-memories')) as { id: string };
    process.stderr.write(`storing ${N} memories with their embeddings\n`);
    const seedSeconds = await seed(runtime, project.id);
    process.stderr.write(`stored in ${seedSeconds.toFixed(0)} s; starting Cairn\n`);

    child = await startChild('cairn', 'cairn', env);
    const api = new Api(child, key);
    const queries = notes(QUERIES, 5_000_000).map((note) => note.split(' ').slice(0, 8).join(' '));
    const results: CaseResult[] = [];
    for (const c of CASES) {
      for (const mode of MODES) results.push(await measure(api, runtime, project.id, queries, c, mode));
    }

    const f = (x: number): string => `${x.toFixed(2)} ms`;
    process.stdout.write('\n| filter | mode | memories in scope | API p50 | API p99 | direct p50 | direct p99 | API ÷ direct (p50) | hits/query |\n');
    for (const r of results) {
      process.stdout.write(`| ${r.name} | ${r.mode} | ${r.scope} | ${f(r.api.p50)} | ${f(r.api.p99)} | ${f(r.direct.p50)} | ${f(r.direct.p99)} | ${(r.api.p50 / r.direct.p50).toFixed(3)} | ${r.hitsPerQuery.toFixed(1)} |\n`);
    }
    const verdicts = results.map((r) => ({ name: r.name, mode: r.mode, p50Met: r.api.p50 <= TARGET.p50, p99Met: r.api.p99 <= TARGET.p99 }));
    process.stdout.write(`\n${JSON.stringify({ bench: 'memory-search', node: process.version, cores: os.cpus().length, memories: N, users: USERS, queries: QUERIES, modes: MODES, seedSeconds, results, targets: TARGET, verdicts })}\n`);
  } finally {
    if (child) await stopChild(child.proc);
    await runtime.shutdown.run();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
