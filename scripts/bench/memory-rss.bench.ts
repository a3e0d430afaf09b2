import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase } from '../../db/knex.js';
import { seededRandom } from '../../lib/seeded-random.js';
import { Api, childEnv, repoRoot, startChild, stopChild, treeRssKb } from './children.js';
import { notes } from './corpus.js';

// `npm run bench:memory-rss`: the resident memory of `npm start`'s process (embedded profile:
// API, keyword index, model threads) while it stores and indexes long memories against short ones.
//
//   npm run bench:memory-rss [-- --rounds 3]
//
// `long`: 200 messages of ~12 KB, each of ~1,500 distinct words (mem0 adds of 20, `infer: false`).
// `short`: 1,000 notes of 12–21 words (adds of 100). Each case runs in a fresh process on a fresh
// DATA_DIR, the two alternating in order between rounds; the process's RSS is sampled every
// 250 ms from the first add until every memory is indexed (peak), and read again 5 s after
// (settled). Figures are medians over the rounds, and long ÷ short.

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 3) || 3;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(repoRoot, '.cache', 'models');
const SAMPLE_MS = 250;
const SETTLE_MS = 5_000;
const INDEX_TIMEOUT_MS = 20 * 60_000;

/** ~12 KB of text: `distinct` different made-up words, then repeats of them up to the length. */
function longText(n: number, distinct = 1_500, chars = 12_000): string {
  const next = seededRandom(n + 1);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'vo', 'sha', 'pel', 'dri', 'no', 'qua', 'zi', 'bar', 'en', 'ost', 'ly'];
  const words = new Set<string>();
  while (words.size < distinct) {
    const length = 2 + Math.floor(next() * 3);
    words.add(Array.from({ length }, () => syllables[Math.floor(next() * syllables.length)]).join('') + String(Math.floor(next() * 1000)));
  }
  const list = [...words];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const word = list[i < list.length ? i : Math.floor(next() * list.length)] as string;
    parts.push(word);
    size += word.length + 1;
  }
  return parts.join(' ');
}

type Case = 'long' | 'short';
const CASES: Record<Case, { texts: () => string[]; perAdd: number }> = {
  long: { texts: () => Array.from({ length: 200 }, (_, i) => longText(i)), perAdd: 20 },
  short: { texts: () => notes(1_000, 1), perAdd: 100 },
};

interface Result {
  peakMb: number;
  settledMb: number;
  seconds: number;
}

async function runCase(name: Case): Promise<Result> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-rss-bench-'));
  const child = await startChild('cairn', 'cairn', childEnv('embedded', dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir }));
  const db = createDatabase({ databaseUrl: null, dataDir });
  const pid = child.proc.pid as number;
  let peakKb = treeRssKb(pid);
  const sampler = setInterval(() => {
    peakKb = Math.max(peakKb, treeRssKb(pid));
  }, SAMPLE_MS);
  try {
    const api = new Api(child);
    const { texts, perAdd } = CASES[name];
    const all = texts();
    const started = performance.now();
    for (let from = 0; from < all.length; from += perAdd) {
      const messages = all.slice(from, from + perAdd).map((content) => ({ role: 'user', content }));
      await api.call('POST', '/v3/memories/add/', { messages, user_id: `rss-${name}`, infer: false });
    }
    for (;;) {
      const [row] = (await db('memories').whereIn('embedding_status', ['indexed', 'failed']).count({ n: '*' })) as Array<{ n: number | string }>;
      if (Number(row?.n ?? 0) >= all.length) break;
      if (child.proc.exitCode !== null) throw new Error(`the ${name} server exited`);
      if (performance.now() - started > INDEX_TIMEOUT_MS) throw new Error(`${name}: not indexed within ${INDEX_TIMEOUT_MS / 60_000} minutes`);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
    const seconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return { peakMb: peakKb / 1024, settledMb: treeRssKb(pid) / 1024, seconds };
  } finally {
    clearInterval(sampler);
    await db.destroy();
    await stopChild(child.proc);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const results: Record<Case, Result[]> = { long: [], short: [] };
for (let round = 0; round < rounds; round++) {
  const order: Case[] = round % 2 === 0 ? ['long', 'short'] : ['short', 'long'];
  for (const name of order) {
    const r = await runCase(name);
    results[name].push(r);
    console.log(`round ${round + 1} ${name.padEnd(5)} peak ${r.peakMb.toFixed(0).padStart(5)} MB  settled ${r.settledMb.toFixed(0).padStart(5)} MB  indexed in ${r.seconds.toFixed(1)} s`);
  }
}

const summary = Object.fromEntries(
  (Object.keys(results) as Case[]).map((name) => [
    name,
    { peakMb: Math.round(median(results[name].map((r) => r.peakMb))), settledMb: Math.round(median(results[name].map((r) => r.settledMb))) },
  ]),
) as Record<Case, { peakMb: number; settledMb: number }>;
const ratio = { peak: summary.long.peakMb / summary.short.peakMb, settled: summary.long.settledMb / summary.short.settledMb };
console.log('\n| case | peak RSS (median MB) | settled RSS (median MB) |\n|---|---|---|');
console.log(`| 200 × 12 KB | ${summary.long.peakMb} | ${summary.long.settledMb} |`);
console.log(`| 1,000 short | ${summary.short.peakMb} | ${summary.short.settledMb} |`);
console.log(`| long ÷ short | ${ratio.peak.toFixed(2)}× | ${ratio.settled.toFixed(2)}× |`);
console.log(JSON.stringify({ bench: 'memory-rss', rounds, cpus: os.availableParallelism(), summary, ratio }));
