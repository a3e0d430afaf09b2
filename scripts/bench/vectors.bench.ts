import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Providers } from '../../providers/registry.js';
import { collectionOf } from '../../core/indexes.js';
import { createRequire } from 'node:module';
import type * as USearch from 'usearch';
import { parseFilter, toPredicate, type FilterNode, type FilterRow } from '../../contracts/filter/filter.js';
import { createDatabase, type Knex } from '../../db/knex.js';
import { MilvusConnection } from '../../db/milvus.js';
import type { IndexRow } from '../../db/repositories/indexes.repository.js';
import { EmbeddedVectorStore } from '../../db/vectors/embedded.store.js';
import { MilvusVectorStore } from '../../db/vectors/milvus.store.js';
import type { VectorStore } from '../../contracts/vector-store.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { reachable } from '../../lib/reachable.js';
import { Api, childEnv, latency, migrateProduction, production, startChild, stopChild, timed, type Latency, type ProfileName } from './children.js';
import { seededRandom as random } from '../../lib/seeded-random.js';

// P2 — vectors: upsert throughput, query latency through the HTTP API and directly on the store
// (same process code, same data), and the local embedder's throughput. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'both' },
    vectors: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '300' },
    // Milvus Lite answers a query at 100k vectors in ~0.1–1 s, so fewer queries there
    'production-queries': { type: 'string', default: '60' },
    // filtered searches on the embedded store: queries per round, three rounds
    'filter-queries': { type: 'string', default: '100' },
  },
});
const profiles: ProfileName[] = args.profile === 'both' ? ['embedded', 'production'] : [args.profile as ProfileName];
if (!profiles.every((p) => p === 'embedded' || p === 'production')) {
  process.stderr.write(`--profile must be embedded, production or both\n`);
  process.exit(2);
}
const N = Number(args.vectors);
const queriesOf = (profile: ProfileName): number => Number(profile === 'production' ? args['production-queries'] : args.queries);
// Milvus Lite's count over 100k rows takes seconds; the default 10 s deadline is for a real Milvus.
const MILVUS_TIMEOUT_MS = 120_000;
const DIM = 384;
const BATCH = 1000;
const TOP_K = 10;
const INDEX = 'bench-p2';
const TARGET = { p50: 20, p99: 60, overhead: 0.25 };
const ROUNDS = 3;
const { exactSearch, MetricKind } = createRequire(import.meta.url)('usearch') as typeof USearch;

/**
 * Filtered searches measured on the embedded store, as an index query would send them (metadata
 * keys at the root). `group` takes ten values, `shard` a hundred, `n` is the vector's number.
 */
const FILTER_CASES: Array<{ label: string; filter: Record<string, unknown> }> = [
  { label: '10 % eq', filter: { group: 'g3' } },
  { label: '1 % eq', filter: { shard: 's42' } },
  { label: '1 % eq + range', filter: { group: 'g3', n: { lt: N / 10 } } },
  { label: '20 % in', filter: { group: { in: ['g1', 'g2'] } } },
  { label: '90 % ne', filter: { group: { ne: 'g3' } } },
];
const metadataOf = (i: number): Record<string, unknown> => ({ n: i, group: `g${i % 10}`, shard: `s${i % 100}` });
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');


/** A unit vector with a Gaussian-ish direction (sum of uniforms), like a sentence embedding's spread. */
function unitVector(next: () => number): number[] {
  const v = Array.from({ length: DIM }, () => next() + next() + next() - 1.5);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => Number((x / norm).toFixed(6)));
}

const SUBJECTS = ['The cat', 'A customer', 'Our team', 'The river', 'A student', 'The market', 'My neighbour', 'The server'];
const VERBS = ['watched', 'asked about', 'cleaned', 'crossed', 'studied', 'reported', 'painted', 'restarted'];
const OBJECTS = ['the birds by the window', 'a late refund', 'the quarterly numbers', 'an old bridge', 'French grammar', 'rising prices', 'the garden fence', 'the database cluster'];
const sentence = (i: number): string =>
  `${SUBJECTS[i % 8]} ${VERBS[Math.floor(i / 8) % 8]} ${OBJECTS[Math.floor(i / 64) % 8]} on day ${i}.`;

interface ProfileResult {
  profile: ProfileName;
  vectors: number;
  queries: number;
  upsertPerSecond: number;
  upsertBatchMs: Latency;
  describeIndex: Latency;
  vectorQuery: { api: Latency; direct: Latency; overhead: number };
  textQuery: { api: Latency; direct: Latency; overhead: number };
  filtered: FilteredFigures | null;
}

/** Each case's p50 per round, beside the unfiltered search's and the floor's of the same round. */
interface FilteredFigures {
  queriesPerRound: number;
  unfiltered: number[];
  /** `disagreements`: queries whose top ids differ from the floor's. */
  cases: Array<{ label: string; passing: number; cairn: number[]; floor: number[]; disagreements: number }>;
}

async function runProfile(profile: ProfileName): Promise<ProfileResult> {
  process.stderr.write(`\n[${profile}] starting Cairn\n`);
  if (profile === 'production') {
    if (!(await reachable(production.milvusAddress, 19530, 1_000))) {
      throw new Error(`Milvus does not answer at ${production.milvusAddress}; start it with scripts/milvus-lite.sh start`);
    }
    await migrateProduction();
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const QUERIES = queriesOf(profile);
  const env = childEnv(profile, dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir, MILVUS_TIMEOUT_MS: String(MILVUS_TIMEOUT_MS) });
  const child = await startChild('cairn', 'cairn', env);
  const config = loadConfig(env as Record<string, string>);
  const db: Knex = createDatabase(config);
  const milvus = profile === 'production' ? new MilvusConnection(production.milvusAddress, null, createLogger('warn'), MILVUS_TIMEOUT_MS) : null;
  try {
    const api = new Api(child);
    await api.call('DELETE', `/v1/indexes/${INDEX}`, undefined, [404]);
    await api.call('POST', '/v1/indexes', { name: INDEX, embed: { model: 'local' } });

    process.stderr.write(`[${profile}] upserting ${N} vectors of ${DIM} dimensions in batches of ${BATCH}\n`);
    const next = random(42);
    // every vector as stored (float32), for the filtered searches' floor
    const all = profile === 'embedded' ? new Float32Array(N * DIM) : null;
    const batchMs: number[] = [];
    const started = performance.now();
    for (let i = 0; i < N; i += BATCH) {
      const vectors = Array.from({ length: Math.min(BATCH, N - i) }, (_, j) => ({
        id: `v${i + j}`,
        values: unitVector(next),
        metadata: metadataOf(i + j),
      }));
      vectors.forEach((v, j) => all?.set(v.values, (i + j) * DIM));
      batchMs.push(await timed(() => api.call('POST', `/v1/indexes/${INDEX}/vectors/upsert`, { vectors })));
    }
    const upsertSeconds = (performance.now() - started) / 1000;
    const stats = await api.call('GET', `/v1/indexes/${INDEX}/stats`);
    if (stats.vector_count !== N) throw new Error(`stats say ${String(stats.vector_count)} vectors, expected ${N}`);

    // The same store code, in this process, on the same data.
    const row = (await db('vector_indexes as i').join('projects as p', 'p.id', 'i.project_id').where({ 'p.name': 'bench', 'i.name': INDEX }).first('i.*')) as IndexRow;
    const spec = collectionOf(row);
    const store: VectorStore = milvus ? new MilvusVectorStore(milvus, createLogger('warn')) : new EmbeddedVectorStore(db);
    const embedder = new Providers(config, createLogger('warn')).embedders.get('local');
    await store.search(spec, row.project_id, unitVector(random(1)), { topK: TOP_K }); // loads the slab / collection
    await embedder.embed(['warm up'], 'query');

    const queries = Array.from({ length: QUERIES }, () => unitVector(next));
    const texts = Array.from({ length: QUERIES }, (_, i) => sentence(i * 7 + 3));
    // warm both paths
    for (let i = 0; i < Math.min(20, QUERIES); i++) {
      await api.call('POST', `/v1/indexes/${INDEX}/query`, { vector: queries[i], top_k: TOP_K });
      await api.call('POST', `/v1/indexes/${INDEX}/query`, { text: sentence(i), top_k: TOP_K });
      await store.search(spec, row.project_id, queries[i] as number[], { topK: TOP_K });
    }
    process.stderr.write(`[${profile}] ${QUERIES} queries each: by vector and by text, through the API and directly\n`);
    // The fixed cost of an authenticated request that reads the index row, for scale.
    const describe: number[] = [];
    for (let i = 0; i < QUERIES; i++) describe.push(await timed(() => api.call('GET', `/v1/indexes/${INDEX}`)));
    const apiVector: number[] = [];
    const directVector: number[] = [];
    const apiText: number[] = [];
    const directText: number[] = [];
    // Interleaved, so drift on the shared machine hits both paths alike.
    for (let i = 0; i < QUERIES; i++) {
      const vector = queries[i] as number[];
      const text = texts[i] as string;
      apiVector.push(await timed(() => api.call('POST', `/v1/indexes/${INDEX}/query`, { vector, top_k: TOP_K })));
      directVector.push(await timed(() => store.search(spec, row.project_id, vector, { topK: TOP_K })));
      apiText.push(await timed(() => api.call('POST', `/v1/indexes/${INDEX}/query`, { text, top_k: TOP_K })));
      directText.push(
        await timed(async () => {
          const [q] = await embedder.embed([text], 'query');
          await store.search(spec, row.project_id, q as Float32Array, { topK: TOP_K });
        }),
      );
    }
    const filtered = all ? await filteredFigures(store, spec, row.project_id, all, queries) : null;
    const pair = (a: number[], d: number[]) => {
      const api = latency(a);
      const direct = latency(d);
      return { api, direct, overhead: api.p50 / direct.p50 - 1 };
    };
    return {
      profile,
      vectors: N,
      queries: QUERIES,
      upsertPerSecond: N / upsertSeconds,
      upsertBatchMs: latency(batchMs),
      describeIndex: latency(describe),
      vectorQuery: pair(apiVector, directVector),
      textQuery: pair(apiText, directText),
      filtered,
    };
  } finally {
    await stopChild(child.proc);
    await db.destroy();
    await milvus?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Filtered searches on the store against the unfiltered search and a floor: USearch's exact search
 * over the passing vectors alone, gathered into one array before timing, which is what scoring
 * only the vectors that pass costs when finding them costs nothing. Interleaved query by query,
 * in three rounds; the floor's top ids must be the store's.
 */
async function filteredFigures(store: VectorStore, spec: ReturnType<typeof collectionOf>, projectId: string, all: Float32Array, queries: number[][]): Promise<FilteredFigures> {
  const perRound = Math.min(Number(args['filter-queries']), queries.length);
  const cases = FILTER_CASES.map(({ label, filter }) => {
    const node = parseFilter(filter, { columns: {}, metadata: 'root' }) as FilterNode;
    const accepts = toPredicate(node);
    const passing: number[] = [];
    for (let i = 0; i < N; i++) if (accepts({ columns: {}, metadata: metadataOf(i) } satisfies FilterRow)) passing.push(i);
    const slice = new Float32Array(passing.length * DIM);
    passing.forEach((i, j) => slice.set(all.subarray(i * DIM, (i + 1) * DIM), j * DIM));
    return { label, node, passing, slice, cairn: [] as number[][], floor: [] as number[][], disagreements: 0 };
  });
  const unfiltered: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`[embedded] filtered searches, round ${round + 1} of ${ROUNDS}: ${perRound} queries per case\n`);
    const plain: number[] = [];
    for (const c of cases) {
      c.cairn.push([]);
      c.floor.push([]);
    }
    for (let i = 0; i < perRound; i++) {
      const vector = queries[i] as number[];
      const query = Float32Array.from(vector);
      plain.push(await timed(() => store.search(spec, projectId, vector, { topK: TOP_K })));
      for (const c of cases) {
        let found: string[] = [];
        let floor: string[] = [];
        c.cairn[round]?.push(await timed(async () => (found = (await store.search(spec, projectId, vector, { topK: TOP_K, filter: c.node })).map((m) => m.id))));
        c.floor[round]?.push(
          await timed(async () => {
            const matches = exactSearch(c.slice, query, DIM, TOP_K, MetricKind.Cos, 1) as USearch.Matches;
            floor = Array.from(matches.keys, (key) => `v${c.passing[Number(key)] as number}`);
          }),
        );
        // a float64 scoring pass may order two near-equal scores otherwise than USearch's float32 one
        if (found.join() !== floor.join()) c.disagreements += 1;
      }
    }
    unfiltered.push(plain);
  }
  const p50s = (rounds: number[][]): number[] => rounds.map((r) => latency(r).p50);
  return {
    queriesPerRound: perRound,
    unfiltered: p50s(unfiltered),
    cases: cases.map((c) => ({ label: c.label, passing: c.passing.length, cairn: p50s(c.cairn), floor: p50s(c.floor), disagreements: c.disagreements })),
  };
}

const median = (xs: number[]): number => latency(xs).p50;

/** Sentences per second of the local model at a batch size, and single-text latency. */
async function embedderFigures(): Promise<{ batch1PerSecond: number; batch32PerSecond: number; single: Latency }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const embedder = new Providers(loadConfig({ DATA_DIR: dataDir, LOCAL_MODEL_DIR: localModelDir }), createLogger('warn')).embedders.get('local');
  await embedder.embed(['warm up'], 'document');
  const single: number[] = [];
  const one = Array.from({ length: 300 }, (_, i) => sentence(i));
  const start1 = performance.now();
  for (const s of one) single.push(await timed(() => embedder.embed([s], 'query')));
  const batch1PerSecond = one.length / ((performance.now() - start1) / 1000);
  const many = Array.from({ length: 32 * 30 }, (_, i) => sentence(i + 1000));
  const start32 = performance.now();
  for (let i = 0; i < many.length; i += 32) await embedder.embed(many.slice(i, i + 32), 'document');
  const batch32PerSecond = many.length / ((performance.now() - start32) / 1000);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { batch1PerSecond, batch32PerSecond, single: latency(single) };
}

const ms = (x: number) => `${x.toFixed(2)} ms`;

async function main(): Promise<number> {
  process.stdout.write(
    `Cairn vectors — node ${process.version}, ${os.cpus().length} cores; ${N} vectors × ${DIM} dims, top_k ${TOP_K}, ${args.queries} (embedded) / ${args['production-queries']} (production) sequential queries per path\n`,
  );
  const embedding = await embedderFigures();
  process.stdout.write(
    `\nlocal embedder (all-MiniLM-L6-v2 q8): batch 1 ${embedding.batch1PerSecond.toFixed(0)} sentences/s, ` +
      `batch 32 ${embedding.batch32PerSecond.toFixed(0)} sentences/s; one query p50 ${ms(embedding.single.p50)}, p99 ${ms(embedding.single.p99)}\n`,
  );
  const results: ProfileResult[] = [];
  for (const profile of profiles) {
    const r = await runProfile(profile);
    results.push(r);
    const line = (label: string, f: { api: Latency; direct: Latency; overhead: number }) =>
      `  ${label.padEnd(16)} API p50 ${ms(f.api.p50)} p99 ${ms(f.api.p99)} | direct p50 ${ms(f.direct.p50)} p99 ${ms(f.direct.p99)} | API/direct p50 ${(1 + f.overhead).toFixed(3)}\n`;
    process.stdout.write(
      `\n[${profile}] upsert ${r.upsertPerSecond.toFixed(0)} vectors/s (batch of ${BATCH}: p50 ${ms(r.upsertBatchMs.p50)}, p99 ${ms(r.upsertBatchMs.p99)})\n` +
        `  GET /v1/indexes/{name} (request floor) p50 ${ms(r.describeIndex.p50)} p99 ${ms(r.describeIndex.p99)}\n` +
        line('query by vector', r.vectorQuery) +
        line('query by text', r.textQuery),
    );
    if (r.filtered) {
      const f = r.filtered;
      const rounds = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' / ');
      process.stdout.write(
        `  filtered store.search, top_k ${TOP_K}, ${ROUNDS} rounds × ${f.queriesPerRound} queries, p50 per round (median):\n` +
          `    ${'unfiltered'.padEnd(16)} ${rounds(f.unfiltered)} ms (${ms(median(f.unfiltered))})\n`,
      );
      for (const c of f.cases) {
        process.stdout.write(
          `    ${c.label.padEnd(16)} ${rounds(c.cairn)} ms (${ms(median(c.cairn))}) | floor ${rounds(c.floor)} ms (${ms(median(c.floor))}) | ` +
            `${c.passing} passing; /unfiltered ${(median(c.cairn) / median(f.unfiltered)).toFixed(3)}, /floor ${(median(c.cairn) / median(c.floor)).toFixed(1)}; ${c.disagreements} answers differ from the floor's\n`,
        );
      }
    }
  }
  const verdicts = results.map((r) => ({
    profile: r.profile,
    textP50Met: r.textQuery.api.p50 <= TARGET.p50,
    textP99Met: r.textQuery.api.p99 <= TARGET.p99,
    overheadMet: r.vectorQuery.overhead <= TARGET.overhead && r.textQuery.overhead <= TARGET.overhead,
  }));
  process.stdout.write(`\n${JSON.stringify({ bench: 'vectors', node: process.version, cores: os.cpus().length, embedding, results, targets: TARGET, verdicts })}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:vectors failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
