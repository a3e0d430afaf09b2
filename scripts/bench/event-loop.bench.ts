import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { Api, childEnv, latency, startChild, stopChild, type Latency } from './children.js';
import { notes } from './corpus.js';

// Event loop under a large document (`npm run bench:event-loop`): GET /v1/ping latency on the
// embedded profile (one process: API, in-process queue, local model) while a 5M-character document
// is read, chunked, embedded and indexed, against the same server idle. Baseline and load phases
// alternate in each round, so both see the same machine. See BENCHMARKS.md.

const { values: args } = parseArgs({
  options: {
    chars: { type: 'string', default: '5000000' },
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '20' },
    baseline: { type: 'string', default: '20' },
  },
});
const CHARS = Number(args.chars);
const ROUNDS = Number(args.rounds);
const RATE = Number(args.rate);
const BASELINE_S = Number(args.baseline);
if (![CHARS, ROUNDS, RATE, BASELINE_S].every((x) => Number.isInteger(x) && x > 0)) {
  process.stderr.write('--chars, --rounds, --rate (pings/s), --baseline (seconds) positive integers\n');
  process.exit(2);
}
const TARGET_P99_MS = 50;
const DOCUMENT_TIMEOUT_MS = 60 * 60_000;
const SETTLE_MS = 10_000;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

interface Phase extends Latency {
  pings: number;
  max: number;
}

interface Round {
  idle: Phase;
  load: Phase;
  /** Upload answered → document ready, by the server's own timestamps. */
  processingS: number;
  chunks: number;
}

/** A document of exactly `chars` characters of seeded prose: paragraphs of eight notes (~900 characters). */
function document(chars: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let n = 0; length < chars; n += 8) {
    const paragraph = `${notes(8, n).join('. ')}.`;
    parts.push(paragraph);
    length += paragraph.length + 2;
  }
  return parts.join('\n\n').slice(0, chars);
}

/**
 * Pings at an even `RATE` per second until `done()` (open loop: each latency counts from the
 * moment its ping was due, so a stalled server shows its whole stall, not one slow answer).
 */
async function ping(pool: Pool, key: string, done: () => boolean): Promise<Phase> {
  const samples: number[] = [];
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  while (!done()) {
    const due = Math.floor(((performance.now() - start) / 1000) * RATE) + 1;
    while (sent < due) {
      const dueAt = start + (sent / RATE) * 1000;
      const request = pool
        .request({ path: '/v1/ping', method: 'GET', headers: { authorization: `Token ${key}` } })
        .then(async (res) => {
          await res.body.dump();
          if (res.statusCode !== 200) throw new Error(`ping answered ${res.statusCode}`);
          samples.push(performance.now() - dueAt);
        });
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request)).catch(() => undefined);
      sent += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  return { ...latency(samples), pings: samples.length, max: Math.max(...samples) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (x: number): string => x.toFixed(1);

async function main(): Promise<void> {
  const text = document(CHARS);
  process.stdout.write(
    `Cairn event loop — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)}; embedded profile; ` +
      `${ROUNDS} rounds of ${BASELINE_S} s idle then one ${text.length.toLocaleString('en-US')}-character document; GET /v1/ping at ${RATE}/s\n`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const child = await startChild('cairn', 'cairn', childEnv('embedded', dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir }));
  const pool = new Pool(`http://127.0.0.1:${child.port}`, { connections: 4 });
  const api = new Api(child);
  const key = child.key as string;
  const rounds: Round[] = [];
  try {
    const settled = async (kb: string, id: string): Promise<Record<string, unknown>> => {
      const deadline = Date.now() + DOCUMENT_TIMEOUT_MS;
      for (;;) {
        const doc = await api.call('GET', `/v1/knowledge/${kb}/documents/${id}`);
        if (doc.status === 'ready') return doc;
        if (doc.status === 'failed') throw new Error(`the document failed: ${String(doc.error)}`);
        if (Date.now() > deadline) throw new Error('the document took over an hour');
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    // warm: the model loaded and its thread running, as on a server that has embedded before
    await api.call('POST', '/v1/knowledge', { name: 'warm' });
    const warm = await api.call('POST', '/v1/knowledge/warm/documents', { filename: 'warm.txt', content: text.slice(0, 5_000) });
    await settled('warm', String(warm.id));

    for (let round = 1; round <= ROUNDS; round += 1) {
      const until = performance.now() + BASELINE_S * 1000;
      const idle = await ping(pool, key, () => performance.now() > until);
      const kb = `event-loop-${round}`;
      await api.call('POST', '/v1/knowledge', { name: kb });
      const uploaded = await api.call('POST', `/v1/knowledge/${kb}/documents`, { filename: 'ledger.txt', content: text });
      let ready: Record<string, unknown> | null = null;
      const watch = settled(kb, String(uploaded.id)).then((doc) => (ready = doc));
      watch.catch(() => undefined);
      const load = await ping(pool, key, () => ready !== null);
      const doc = await watch;
      const processingS = (Date.parse(String(doc.updated_at)) - Date.parse(String(uploaded.created_at))) / 1000;
      rounds.push({ idle, load, processingS, chunks: Number(doc.chunk_count) });
      process.stderr.write(
        `round ${round}: idle p50 ${ms(idle.p50)} p99 ${ms(idle.p99)} ms; under load p50 ${ms(load.p50)} p99 ${ms(load.p99)} max ${ms(load.max)} ms (${load.pings} pings); ` +
          `document ${processingS.toFixed(1)} s, ${doc.chunk_count} chunks\n`,
      );
      // the next round starts from the same state: one base, no large document (its vectors go
      // in a background job, given time to finish before the next idle phase)
      await api.call('DELETE', `/v1/knowledge/${kb}`);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
  } finally {
    await pool.close();
    await stopChild(child.proc);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const idleP50 = median(rounds.map((r) => r.idle.p50));
  const idleP99 = median(rounds.map((r) => r.idle.p99));
  const loadP50 = median(rounds.map((r) => r.load.p50));
  const loadP99 = median(rounds.map((r) => r.load.p99));
  const lines = [
    '',
    '| round | idle p50 / p99 (ms) | under load p50 / p99 / max (ms) | pings under load | p50 ratio | p99 ratio | document (s) | chunks |',
    '|---|---|---|---|---|---|---|---|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${ms(r.idle.p50)} / ${ms(r.idle.p99)} | ${ms(r.load.p50)} / ${ms(r.load.p99)} / ${ms(r.load.max)} | ${r.load.pings} | ${(r.load.p50 / r.idle.p50).toFixed(2)} | ${(r.load.p99 / r.idle.p99).toFixed(2)} | ${r.processingS.toFixed(1)} | ${r.chunks} |`,
    ),
    `| **median** | ${ms(idleP50)} / ${ms(idleP99)} | ${ms(loadP50)} / ${ms(loadP99)} / – | – | **${(loadP50 / idleP50).toFixed(2)}** | **${(loadP99 / idleP99).toFixed(2)}** | ${median(rounds.map((r) => r.processingS)).toFixed(1)} | – |`,
    '',
    `Target: ping p99 under load < ${TARGET_P99_MS} ms — ${loadP99 < TARGET_P99_MS ? 'met' : 'missed'} (median of rounds ${ms(loadP99)} ms). Machine load at the end ${os.loadavg()[0]?.toFixed(2)}.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
