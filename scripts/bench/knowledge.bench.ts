import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Providers } from '../../providers/registry.js';
import { chunkText } from '../../core/knowledge/chunking.js';
import { CHUNKING } from '../../core/knowledge/knowledge.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { Api, childEnv, latency, migrateProduction, startChild, stopChild, timed, type Latency, type ProfileName } from './children.js';
import { handbook, notes } from './corpus.js';

// Knowledge (`npm run bench:knowledge`): documents ingested end to end (HTTP upload → outbox →
// queue → read, chunk, embed, index → ready) against the raw embedder's throughput on the same
// chunks, then search latency over the resulting base (≈10k chunks by default). See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'embedded' },
    documents: { type: 'string', default: '700' },
    queries: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '4' },
  },
});
const PROFILE = args.profile as ProfileName;
const DOCUMENTS = Number(args.documents);
const QUERIES = Number(args.queries);
const CONCURRENCY = Number(args.concurrency);
if (!['embedded', 'production'].includes(PROFILE) || ![DOCUMENTS, QUERIES, CONCURRENCY].every((x) => Number.isInteger(x) && x > 0)) {
  process.stderr.write('--profile embedded|production; --documents, --queries, --concurrency positive integers\n');
  process.exit(2);
}
const KB = 'bench-knowledge';
const TOP_K = 5;
const RAW_CHUNKS = 640;
const TARGET = { p50: 20, p99: 60 };
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

async function rawEmbedder(texts: string[]): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const embedder = new Providers(loadConfig({ DATA_DIR: dataDir, LOCAL_MODEL_DIR: localModelDir }), createLogger('warn')).embedders.get('local');
  await embedder.embed(texts.slice(0, 32), 'document');
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 32) await embedder.embed(texts.slice(i, i + 32), 'document');
  fs.rmSync(dataDir, { recursive: true, force: true });
  return texts.length / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  process.stdout.write(`Cairn knowledge — node ${process.version}, ${os.cpus().length} cores; ${PROFILE} profile, ${DOCUMENTS} documents, ${CONCURRENCY} uploads in flight, ${QUERIES} queries per mode\n`);
  const docs = Array.from({ length: DOCUMENTS }, (_, n) => handbook(n));
  const megabytes = docs.reduce((sum, d) => sum + Buffer.byteLength(d), 0) / 1e6;
  const sample = docs.flatMap((d) => chunkText(d, { size: CHUNKING.size, overlap: CHUNKING.overlap, markdown: true }).map((c) => (c.heading ? `${c.heading}\n${c.text}` : c.text))).slice(0, RAW_CHUNKS);
  const raw = await rawEmbedder(sample);
  process.stderr.write(`raw embedder: ${raw.toFixed(0)} chunks/s at batch 32\n`);

  if (PROFILE === 'production') await migrateProduction();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const child = await startChild('cairn', 'cairn', childEnv(PROFILE, dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir }));
  try {
    const api = new Api(child);
    await api.call('DELETE', `/v1/knowledge/${KB}`, undefined, [404]);
    await api.call('POST', '/v1/knowledge', { name: KB });

    process.stderr.write(`uploading ${DOCUMENTS} documents (${megabytes.toFixed(1)} MB)\n`);
    const started = performance.now();
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < docs.length) {
          const n = next++;
          const doc = await api.call('POST', `/v1/knowledge/${KB}/documents`, { filename: `handbook-${n}.md`, source_type: 'markdown', content: docs[n] });
          ids.push(doc.id as string);
        }
      }),
    );
    const uploadSeconds = (performance.now() - started) / 1000;
    let chunks = 0;
    for (;;) {
      const pending: string[] = [];
      chunks = 0;
      for (let offset = 0; offset < DOCUMENTS; offset += 100) {
        const page = (await api.call('GET', `/v1/knowledge/${KB}/documents?limit=100&offset=${offset}`)).documents as Array<{ status: string; chunk_count: number; error: string | null }>;
        for (const d of page) {
          if (d.status === 'failed') throw new Error(`a document failed: ${d.error}`);
          if (d.status !== 'ready') pending.push(d.status);
          chunks += d.chunk_count;
        }
      }
      if (pending.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const ingestSeconds = (performance.now() - started) / 1000;
    const chunksPerSecond = chunks / ingestSeconds;
    process.stderr.write(`${chunks} chunks ready in ${ingestSeconds.toFixed(1)} s\n`);

    const queries = notes(QUERIES, 9_000_000).map((note) => note.split(' ').slice(0, 7).join(' '));
    const search: Record<string, Latency> = {};
    for (const mode of ['hybrid', 'dense', 'keyword']) {
      for (let i = 0; i < 10; i++) await api.call('POST', `/v1/knowledge/${KB}/search`, { query: queries[i], mode, top_k: TOP_K });
      const samples: number[] = [];
      for (const query of queries) samples.push(await timed(() => api.call('POST', `/v1/knowledge/${KB}/search`, { query, mode, top_k: TOP_K })));
      search[mode] = latency(samples);
    }

    const f = (x: number): string => `${x.toFixed(2)} ms`;
    process.stdout.write(`\nraw embedder on the same chunks, batch 32: ${raw.toFixed(0)} chunks/s\n`);
    process.stdout.write('| documents | MB | chunks | upload s | first upload → all ready | MB/min | chunks/s | ratio (÷ raw) |\n');
    process.stdout.write(`| ${DOCUMENTS} | ${megabytes.toFixed(1)} | ${chunks} | ${uploadSeconds.toFixed(1)} s | ${ingestSeconds.toFixed(1)} s | ${((megabytes / ingestSeconds) * 60).toFixed(2)} | ${chunksPerSecond.toFixed(1)} | ${(chunksPerSecond / raw).toFixed(3)} |\n\n`);
    process.stdout.write(`| search over ${chunks} chunks | p50 | p99 |\n`);
    for (const [mode, l] of Object.entries(search)) process.stdout.write(`| ${mode} | ${f(l.p50)} | ${f(l.p99)} |\n`);
    process.stdout.write(
      `\n${JSON.stringify({ bench: 'knowledge', node: process.version, cores: os.cpus().length, profile: PROFILE, documents: DOCUMENTS, megabytes, chunks, raw, uploadSeconds, ingestSeconds, chunksPerSecond, ratio: chunksPerSecond / raw, search, targets: TARGET })}\n`,
    );
    await api.call('DELETE', `/v1/knowledge/${KB}`);
  } finally {
    await stopChild(child.proc);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
