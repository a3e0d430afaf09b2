import { expect } from 'chai';
import { isolatedDatabaseEnv, newProject, p99, probeHealth, PROFILE, startRuntime, token, waitFor, type TestRuntime } from '../helpers.js';
import { fakeProvider, type FakeProvider } from '../provider-server.js';

// Every operation that takes a JSON body, fed bodies growing tenfold (1 KB … 1 MB, then the body
// limit, 2 MB here) built from its own schema in /openapi.json, while /healthz is probed every
// 25 ms: each answer is a 2xx or 4xx within its deadline (a 413 past the limit), and /healthz
// keeps answering (its 99th percentile under 200 ms over the operations whose work grows with
// their text), the background work they queue included. What
// grows with the body is the text of string fields (distinct words, as real text has) and the
// items of arrays. Memories, records and documents are embedded by an OpenAI-compatible stand-in
// that answers at once: what is measured is Cairn's own work on large inputs, not the model's.

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  maxLength?: number;
  minLength?: number;
  maxItems?: number;
  minimum?: number;
  format?: string;
  pattern?: string;
  $ref?: string;
};

const LIMIT_MB = 2;
const SIZES = [1_000, 10_000, 100_000, 1_000_000, LIMIT_MB * 1024 * 1024 - 4_096];
/** How long one answer may take, whatever the size: the slowest is a model call over the largest text. */
const ANSWER_DEADLINE_MS = 60_000;

/** `length` characters of distinct words. */
function words(length: number, seed: number): string {
  let text = '';
  for (let i = 0; text.length < length; i += 1) text += `w${(seed * 7_919 + i).toString(36)} `;
  return text.slice(0, Math.max(1, length)).trim() || 'w';
}

/** A value of `schema` about `budget` characters long in JSON (smaller where the schema bounds it). */
function fill(schema: Schema, budget: number, root: { components?: { schemas?: Record<string, Schema> } }, seed = 1): unknown {
  if (schema.$ref !== undefined) {
    const name = schema.$ref.split('/').at(-1) as string;
    return fill(root.components?.schemas?.[name] ?? {}, budget, root, seed);
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  const choice = schema.oneOf?.[0] ?? schema.anyOf?.find((s) => s.type !== 'null') ?? schema.allOf?.[0];
  if (choice !== undefined) return fill({ ...choice, ...(schema.properties ? { properties: schema.properties } : {}) }, budget, root, seed);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type ?? (schema.properties ? 'object' : 'string')) {
    case 'object': {
      const properties = Object.entries(schema.properties ?? {});
      const required = new Set(schema.required ?? []);
      const out: Record<string, unknown> = {};
      // required fields, then the optional ones that carry text or lists, sharing the budget
      const chosen = properties.filter(([name, p]) => required.has(name) || ['string', 'array'].includes(String(p.type)));
      chosen.forEach(([name, property], i) => {
        out[name] = fill(property, Math.floor(budget / chosen.length), root, seed * 31 + i);
      });
      return out;
    }
    case 'array': {
      const item = schema.items ?? { type: 'string' };
      const one = JSON.stringify(fill(item, 64, root, seed)).length + 1;
      const count = Math.max(1, Math.min(schema.maxItems ?? Number.MAX_SAFE_INTEGER, Math.floor(budget / Math.max(one, 64))));
      const share = Math.floor(budget / count);
      return Array.from({ length: count }, (_, i) => fill(item, share, root, seed * 17 + i));
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default: {
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/';
      if (schema.pattern !== undefined) return `a${seed % 1000}`;
      const length = Math.max(schema.minLength ?? 1, Math.min(schema.maxLength ?? Number.MAX_SAFE_INTEGER, budget));
      return words(length, seed);
    }
  }
}

/** Valid bodies of `size` characters for the operations whose work grows with their text. */
const GROWING: Array<{ method: 'post'; path: string; body: (size: number, seed: number) => Record<string, unknown> }> = [
  {
    method: 'post',
    path: '/v3/memories/add/',
    body: (size, seed) => {
      const count = Math.min(100, Math.ceil(size / 8_000));
      return { user_id: 'scaled', infer: false, messages: Array.from({ length: count }, (_, i) => ({ role: 'user', content: words(Math.floor(size / count), seed * 101 + i) })) };
    },
  },
  {
    method: 'post',
    path: '/v1/batch/',
    body: (size, seed) => {
      const count = Math.min(1_000, Math.ceil(size / 2_000));
      return { memories: [{ user_id: 'scaled-batch', messages: Array.from({ length: count }, (_, i) => ({ role: 'user', content: words(Math.floor(size / count), seed * 103 + i) })) }] };
    },
  },
  { method: 'post', path: '/v3/memories/search/', body: (size, seed) => ({ query: words(Math.min(size, 32_768), seed), filters: { user_id: 'scaled' } }) },
  { method: 'post', path: '/v1/records/scaled/extract', body: (size, seed) => ({ text: words(size, seed), user_id: 'scaled' }) },
  { method: 'post', path: '/v1/knowledge/scaled/documents', body: (size, seed) => ({ filename: `doc-${seed}.txt`, content: words(size, seed) }) },
  { method: 'post', path: '/v1/agents/scaled/chat', body: (size, seed) => ({ messages: [{ role: 'user', content: words(Math.min(size, 32_768), seed) }] }) },
  {
    method: 'post',
    path: '/v1/exports/',
    body: (size, seed) => ({ user_id: 'scaled', schema: { type: 'object', properties: { note: { type: 'string', description: words(Math.min(size, 2_000), seed) }, tier: { type: 'string', enum: ['gold', 'silver'] } } } }),
  },
];

/**
 * Waits until the background work the bodies queued is done: no outbox entry left, no job waiting,
 * running or delayed (the maintenance queue's delayed jobs are its schedules), twice a second apart.
 */
async function drained(t: TestRuntime): Promise<void> {
  const busy = async (): Promise<number> => {
    const depths = await t.runtime.queue.depths();
    const jobs = depths.reduce((sum, d) => sum + d.waiting + d.active + (d.queue === 'maintenance' ? 0 : d.delayed), 0);
    return (await t.runtime.repositories.outbox.countPending()) + jobs;
  };
  const idle = async (): Promise<boolean> => {
    if ((await busy()) > 0) return false;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return (await busy()) === 0;
  };
  await waitFor(idle, {
    timeoutMs: 15 * 60_000,
    intervalMs: 1_000,
    message: 'the background work drained',
  });
}

describe(`size scaling (${PROFILE})`, function () {
  this.timeout(20 * 60_000);
  let t: TestRuntime;
  let auth: string;
  let projectId: string;

  let embedder: FakeProvider;

  before(async () => {
    embedder = await fakeProvider((request) => {
      const input = request.body.input;
      const texts = Array.isArray(input) ? input : [input];
      const data = texts.map((text, index) => ({ object: 'embedding', index, embedding: Array.from({ length: 8 }, (_, d) => ((String(text).length + d * 7) % 11) / 11 + 0.1) }));
      embedder.received.length = 0;
      return { status: 200, body: { object: 'list', data, model: 'scaled', usage: { prompt_tokens: 1, total_tokens: 1 } } };
    });
    // a database of its own: it waits until all background work is done, and the runtime's sweeps would
    // re-queue what earlier tests left unfinished in a shared one (a document of a knowledge base whose
    // model needs a key this runtime lacks is retried for good)
    t = await startRuntime({ env: { ...(await isolatedDatabaseEnv()), BODY_LIMIT_MB: String(LIMIT_MB), MEMORY_EMBED_MODEL: 'openai/scaled', OPENAI_BASE_URL: embedder.url } });
    const project = await newProject(t);
    auth = token(project.key);
    projectId = project.projectId;
    const post = (path: string, body: Record<string, unknown>) => t.http.post(path).set('Authorization', auth).send(body);
    // the resources the paths name, so that bodies reach the work behind them
    await post('/v1/schemas', { name: 'scaled', json_schema: { type: 'object', properties: { note: { type: 'string' }, tier: { type: 'string', enum: ['gold', 'silver'] } } } });
    await post('/v1/indexes', { name: 'scaled', dimension: 8, metric: 'cosine' });
    await post('/v1/knowledge', { name: 'scaled', embed_model: 'openai/scaled' });
    await post('/v1/agents', { name: 'scaled', instructions: 'Answer briefly.' });
  });
  after(async () => {
    await t.close();
    await embedder.close();
  });

  it('answers every body-taking operation with a 2xx or 4xx at every size while /healthz keeps answering (its slowest probe under 1 s)', async () => {
    const spec = (await t.http.get('/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> } }>> };
    const params: Record<string, string> = { name: 'scaled', schema: 'scaled', id: '00000000-0000-7000-8000-000000000000', tool: 'none', server: 'none', projectId, owner: 'o', project: 'p', version: '1.0.0' };
    const health = probeHealth(t);
    const answers: string[] = [];
    try {
      for (const [template, item] of Object.entries(spec.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const schema = operation.requestBody?.content?.['application/json']?.schema;
          if (schema === undefined) continue;
          const path = template.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(params[p] ?? 'x'));
          for (const size of SIZES) {
            const body = fill(schema, size, spec as never);
            const started = performance.now();
            const res = await t.http[method as 'post'](path).set('Authorization', auth).set('Content-Type', 'application/json').send(JSON.stringify(body)).timeout(ANSWER_DEADLINE_MS);
            const ms = Math.round(performance.now() - started);
            answers.push(`${method.toUpperCase()} ${template} ${size}: ${res.status} in ${ms} ms`);
            expect(res.status, `${method.toUpperCase()} ${template} with ${size} characters: ${JSON.stringify(res.body).slice(0, 300)}`).to.be.within(200, 499);
          }
        }
      }
      await drained(t);
    } finally {
      const sorted = await health.stop();
      if (process.env.SIZE_SCALING_REPORT) process.stdout.write(`${answers.join('\n')}\n/healthz: ${sorted.length} probes, p99 ${Math.round(p99(sorted))} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms\n`);
      expect(answers.length).to.be.greaterThan(100);
      // most of these bodies are answered in milliseconds, so this run has too few probes for a
      // 99th percentile: its slowest probe is bounded instead (the embedded profile's SQLite COMMIT of
      // a 2 MB batch of records, ~250 ms, is what is left; RELIABILITY.md has the figures). Work
      // that grows with the input would hold the loop for seconds at the largest sizes; a slower
      // 2-core machine running three suites at once delayed one probe to 502 ms with none, so the
      // bound is 1 s.
      expect(sorted.at(-1) ?? 0, `/healthz's slowest of ${sorted.length} probes`).to.be.below(1_000);
    }
  });

  it('answers the operations whose work grows with their text, with valid bodies, and does that work in the background without holding /healthz', async () => {
    const health = probeHealth(t);
    const answers: string[] = [];
    try {
      for (const { method, path, body } of GROWING) {
        for (const [i, size] of SIZES.entries()) {
          const started = performance.now();
          const res = await t.http[method](path).set('Authorization', auth).send(body(size, i + 1)).timeout(ANSWER_DEADLINE_MS);
          answers.push(`${method.toUpperCase()} ${path} ${size}: ${res.status} in ${Math.round(performance.now() - started)} ms`);
          expect(res.status, `${path} with ${size} characters: ${JSON.stringify(res.body).slice(0, 300)}`).to.be.within(200, 499);
        }
      }
      // the background work those bodies queued (documents read, chunked and embedded, memories
      // and records indexed, exports filled), with /healthz still probed
      await drained(t);
    } finally {
      const sorted = await health.stop();
      if (process.env.SIZE_SCALING_REPORT) process.stdout.write(`${answers.join('\n')}\n/healthz: ${sorted.length} probes, p99 ${Math.round(p99(sorted))} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms\n`);
      // 400 ms: a slower 2-core CI machine running three suites at once put the p99 at 201 ms with
      // no work held on the loop; work growing with the text would hold it for seconds
      expect(p99(sorted), `/healthz p99 over ${sorted.length} probes`).to.be.below(400);
    }
  });
});
