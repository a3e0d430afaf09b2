import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Api, childEnv, latency, migrateProduction, startChild, stopChild, timed, type Latency, type ProfileName } from './children.js';
import { handbook, notes } from './corpus.js';

// P4 (`npm run bench:chat`): server time of a chat turn with the local model and a knowledge base
// of about 10k chunks attached, p50/p99, and how it splits into rules, guardrails, retrieval,
// model and persistence (the trace's timings). See BENCHMARKS.md. The guardrails stage is where
// the checks' speed is measured: the unit tests bound only how their cost grows with the message.

const { values: args } = parseArgs({
  options: {
    profile: { type: 'string', default: 'embedded' },
    documents: { type: 'string', default: '450' },
    turns: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '4' },
    // keeps the embedded profile's files: a second run with the same dir skips the ingestion
    'data-dir': { type: 'string' },
  },
});
const PROFILE = args.profile as ProfileName;
const DOCUMENTS = Number(args.documents);
const TURNS = Number(args.turns);
const CONCURRENCY = Number(args.concurrency);
if (!['embedded', 'production'].includes(PROFILE) || ![DOCUMENTS, TURNS, CONCURRENCY].every((x) => Number.isInteger(x) && x > 0)) {
  process.stderr.write('--profile embedded|production; --documents, --turns, --concurrency positive integers\n');
  process.exit(2);
}
const KB = 'bench-chat';
const AGENT = 'bench-chat-agent';
const TARGET = { p50: 25 };
const STAGES = ['rules', 'guardrails', 'retrieval', 'model', 'tools', 'persistence', 'total'] as const;
const localModelDir = process.env.LOCAL_MODEL_DIR ?? path.join(path.dirname(new URL(import.meta.url).pathname), '../../.cache/models');

interface Turn {
  message: { content: string };
  citations: unknown[];
  trace: { timings_ms: Record<(typeof STAGES)[number], number>; plan: string[] };
}

/** Ingests the handbooks into a fresh base (unless a kept one holds them all) and waits until all are ready; the chunk count. */
async function seed(api: Api): Promise<number> {
  const existing = await api.call('GET', `/v1/knowledge/${KB}`, undefined, [404]);
  const started = performance.now();
  let next = 0;
  if (existing.document_count === DOCUMENTS) {
    next = DOCUMENTS;
  } else {
    await api.call('DELETE', `/v1/knowledge/${KB}`, undefined, [404]);
    await api.call('POST', '/v1/knowledge', { name: KB });
  }
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < DOCUMENTS) {
        const n = next++;
        await api.call('POST', `/v1/knowledge/${KB}/documents`, { filename: `handbook-${n}.md`, source_type: 'markdown', content: handbook(n) });
      }
    }),
  );
  for (;;) {
    let chunks = 0;
    let pending = 0;
    for (let offset = 0; offset < DOCUMENTS; offset += 100) {
      const page = (await api.call('GET', `/v1/knowledge/${KB}/documents?limit=100&offset=${offset}`)).documents as Array<{ status: string; chunk_count: number; error: string | null }>;
      for (const d of page) {
        if (d.status === 'failed') throw new Error(`a document failed: ${d.error}`);
        if (d.status !== 'ready') pending += 1;
        chunks += d.chunk_count;
      }
    }
    if (pending === 0) {
      process.stderr.write(`${chunks} chunks ready in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
      return chunks;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function main(): Promise<void> {
  process.stdout.write(`Cairn chat (P4) — node ${process.version}, ${os.cpus().length} cores; ${PROFILE} profile, ${DOCUMENTS} documents, ${TURNS} turns\n`);
  if (PROFILE === 'production') await migrateProduction();
  const kept = args['data-dir'];
  const dataDir = kept ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  fs.mkdirSync(dataDir, { recursive: true });
  const child = await startChild('cairn', 'cairn', childEnv(PROFILE, dataDir, 'warn', { LOCAL_MODEL_DIR: localModelDir }));
  try {
    const api = new Api(child);
    const chunks = await seed(api);
    await api.call('DELETE', `/v1/agents/${AGENT}`, undefined, [404]);
    // an agent as a team would run it: knowledge, a rule, a tool, guardrails on both sides
    await api.call('POST', '/v1/agents', {
      name: AGENT,
      instructions: 'Answer from the handbooks.',
      knowledge: [KB],
      guardrails: { input: { checks: ['pii', 'secrets', 'prompt_injection', 'jailbreak', 'toxicity'] }, output: { checks: ['pii', 'secrets', 'toxicity'] } },
    });
    await api.call('POST', `/v1/agents/${AGENT}/rules`, { rule_type: 'escalation', condition: 'message.lowerAscii().contains("speak to a human")', action: 'A person will take over.', priority: 10 });
    await api.call('POST', `/v1/agents/${AGENT}/tools`, {
      name: 'lookup_order',
      description: 'Look up an order by its order id',
      http: { url: 'https://orders.example.com/orders/{order_id}', method: 'GET' },
      parameters: { type: 'object', properties: { order_id: { type: 'integer' } }, required: ['order_id'] },
    });

    // questions drawn from the handbooks' own notes, so most have an answer
    const questions = notes(TURNS + 20, 7 * 1000 + 3).map((note) => `What happened when ${note.split(' ').slice(0, 6).join(' ').toLowerCase()}?`);
    for (const q of questions.slice(0, 20)) await api.call('POST', `/v1/agents/${AGENT}/chat`, { messages: [{ role: 'user', content: q }] });
    const client: number[] = [];
    const stages: Record<string, number[]> = Object.fromEntries(STAGES.map((s) => [s, []]));
    let cited = 0;
    for (const q of questions.slice(20)) {
      let turn: Turn | undefined;
      client.push(await timed(async () => (turn = (await api.call('POST', `/v1/agents/${AGENT}/chat`, { messages: [{ role: 'user', content: q }] })) as unknown as Turn)));
      for (const s of STAGES) stages[s]!.push(turn!.trace.timings_ms[s]);
      if (turn!.citations.length > 0) cited += 1;
    }
    const server: Record<string, Latency> = Object.fromEntries(STAGES.map((s) => [s, latency(stages[s]!)]));
    const http = latency(client);
    const f = (x: number): string => `${x.toFixed(2)} ms`;
    process.stdout.write(`\nknowledge base: ${chunks} chunks; ${TURNS} turns, ${cited} answered with citations\n`);
    process.stdout.write('| stage | p50 | p99 | mean |\n|---|---:|---:|---:|\n');
    for (const s of STAGES) process.stdout.write(`| ${s === 'total' ? '**server total**' : s} | ${f(server[s]!.p50)} | ${f(server[s]!.p99)} | ${f(server[s]!.mean)} |\n`);
    process.stdout.write(`| client (HTTP round trip) | ${f(http.p50)} | ${f(http.p99)} | ${f(http.mean)} |\n`);
    process.stdout.write(`\ntarget: server p50 ≤ ${TARGET.p50} ms → ${server.total!.p50 <= TARGET.p50 ? 'met' : 'missed'}\n`);
    process.stdout.write(`\n${JSON.stringify({ bench: 'chat', node: process.version, cores: os.cpus().length, profile: PROFILE, documents: DOCUMENTS, chunks, turns: TURNS, cited, server, http, targets: TARGET })}\n`);
    await api.call('DELETE', `/v1/agents/${AGENT}`);
    if (!kept) await api.call('DELETE', `/v1/knowledge/${KB}`);
  } finally {
    await stopChild(child.proc);
    if (!kept) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
