import { expect } from 'chai';
import { pino } from 'pino';
import type { ProvidersOptions } from '../../providers/provider.js';
import { Providers, type Embedders } from '../../providers/registry.js';
import type { Embedder } from '../../providers/embedder.js';
import { LocalEmbedder } from '../../providers/local/local.embedder.js';
import { LocalModelPool, type EmbedTask } from '../../providers/local/local-model.pool.js';
import { loadConfig } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { LOCAL_MODEL_DIR, tempDir } from '../helpers.js';
import { fakeProvider, rejection, type Answer, type FakeProvider, type Received } from '../provider-server.js';

const log = createLogger('silent');

function embeddersFor(env: Record<string, string>, options?: ProvidersOptions): Embedders {
  return new Providers(loadConfig({ DATA_DIR: tempDir(), LOCAL_MODEL_DIR, ...env }), log, options).embedders;
}

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);


/** A recognisable vector per text `t<n>`: its first component is n. */
const vectorOf = (text: string): number[] => [Number(text.slice(1)) || 0, text.length, 0.5];
const numbered = (count: number): string[] => Array.from({ length: count }, (_, i) => `t${i}`);

/** Cohere's v2 embed response (https://docs.cohere.com/reference/embed). */
function cohereAnswer(request: Received): Answer {
  const texts = request.body.texts as string[];
  return {
    status: 200,
    body: {
      id: 'embed-1',
      embeddings: { float: texts.map(vectorOf) },
      texts,
      meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.length } },
      response_type: 'embeddings_by_type',
    },
  };
}

/** OpenAI's embeddings response, listed in reverse so only `index` gives the order. */
function openaiAnswer(request: Received): Answer {
  const input = request.body.input as string[];
  const data = input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })).reverse();
  return { status: 200, body: { object: 'list', data, model: request.body.model, usage: { prompt_tokens: input.length, total_tokens: input.length } } };
}

const unavailableAnswer: Answer = { status: 503, body: { message: 'overloaded', error: { message: 'overloaded' } } };

describe('local embedder (all-MiniLM-L6-v2 from LOCAL_MODEL_DIR)', function () {
  this.timeout(60_000);
  let local: Embedder;

  before(() => {
    local = embeddersFor({}).get('local');
  });

  it('gives 384 unit-length floats per text', async () => {
    expect(await local.dimension()).to.equal(384);
    const vectors = await local.embed(['The cat sat on the windowsill', 'hello'], 'document');
    expect(vectors).to.have.length(2);
    for (const vector of vectors) {
      expect(vector).to.be.instanceOf(Float32Array).with.length(384);
      expect(Math.sqrt(dot(vector, vector))).to.be.closeTo(1, 1e-4);
    }
  });

  it('puts a kitten nearer a cat than quarterly revenue', async () => {
    const [query, cat, revenue] = (await local.embed(
      ['a kitten by the window', 'The cat sat on the windowsill', 'Quarterly revenue grew 12 percent'],
      'query',
    )) as [Float32Array, Float32Array, Float32Array];
    expect(dot(query, cat)).to.be.greaterThan(0.5);
    expect(dot(query, cat)).to.be.greaterThan(dot(query, revenue) + 0.3);
  });

  it('gives the same vectors in a batch as one by one, whatever the input type', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `note ${i}: ${'the quick brown fox jumps '.repeat(i % 7)}over the lazy dog`);
    const batch = await local.embed(texts, 'document');
    expect(batch).to.have.length(40);
    for (const [i, text] of texts.entries()) {
      const [alone] = (await local.embed([text], 'query')) as [Float32Array];
      const diff = Math.max(...alone.map((x, j) => Math.abs(x - ((batch[i] as Float32Array)[j] as number))));
      expect(diff, text).to.be.below(1e-5);
    }
  });

  it('embeds a text far longer than the model reads (truncated, not an error)', async () => {
    const [vector] = (await local.embed(['memory '.repeat(20_000)], 'document')) as [Float32Array];
    expect(vector).to.have.length(384);
    expect(vector.every(Number.isFinite)).to.equal(true);
  });

  it('reads the first 256 word pieces of a text, as sentence-transformers does: what follows does not change its vector', async () => {
    const opening = 'the harbour master logged every ship that came in '.repeat(30);
    const [a, b, short] = (await local.embed([`${opening} quarterly revenue grew`, `${opening} a kitten by the window`, 'quarterly revenue grew'], 'document')) as [Float32Array, Float32Array, Float32Array];
    expect(Math.max(...a.map((x, j) => Math.abs(x - (b[j] as number))))).to.be.below(1e-5);
    expect(dot(a, short)).to.be.below(0.9);
  });

  it('names LOCAL_MODEL_DIR and scripts/model-files.sh when the model files are missing', async () => {
    const empty = tempDir('cairn-models-');
    const refused = (() => {
      try {
        embeddersFor({ LOCAL_MODEL_DIR: empty }).get('local');
      } catch (err) {
        return err as AppError;
      }
      return expect.fail('get should refuse a model it cannot load');
    })();
    expect([refused.status, refused.code]).to.deep.equal([400, 'embed_model_unavailable']);
    expect(refused.detail).to.include('LOCAL_MODEL_DIR').and.include('scripts/model-files.sh').and.include(empty);

    const direct = new LocalEmbedder('all-MiniLM-L6-v2', { localModelDir: empty }, log);
    const failed = await rejection(direct.embed(['hello'], 'document'));
    expect(failed.code).to.equal('embed_model_unavailable');
    expect(failed.detail).to.include('scripts/model-files.sh');
  });
});

describe('local model threads (LOCAL_EMBED_THREADS)', function () {
  this.timeout(120_000);
  const MODEL = 'all-MiniLM-L6-v2';
  const texts = Array.from({ length: 128 }, (_, i) => `entry ${i}: ${'the ledger lists boxes of tea and tins of biscuits '.repeat(1 + (i % 5))}on shelf ${i % 9}`);
  const task = (batch: string[]): EmbedTask => ({ name: MODEL, root: LOCAL_MODEL_DIR, id: MODEL, texts: batch, maxTokens: 256 });
  const batches = (count: number, from = 0): string[][] => Array.from({ length: count }, (_, i) => texts.slice((from + i) * 32, (from + i + 1) * 32));
  const settle = <T>(p: Promise<T>): Promise<T | Error> => p.catch((err: Error) => err);

  it('gives the same vectors on two threads, embedding several callers at once, as on one; the model loads on both', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const one = new Providers(loadConfig({ DATA_DIR: tempDir(), LOCAL_MODEL_DIR, LOCAL_EMBED_THREADS: '1' }), log);
    const two = new Providers(loadConfig({ DATA_DIR: tempDir(), LOCAL_MODEL_DIR, LOCAL_EMBED_THREADS: '2' }), logger);
    try {
      const alone = await one.embedders.get('local').embed(texts, 'document');
      // four callers of a batch each, and one caller of all the texts: both threads get work
      const local = two.embedders.get('local');
      const [parts, whole] = await Promise.all([Promise.all(batches(4).map((batch) => local.embed(batch, 'document'))), local.embed(texts, 'document')]);
      for (const together of [parts.flat(), whole]) {
        expect(together).to.have.length(texts.length);
        for (const [i, vector] of together.entries()) {
          const diff = Math.max(...vector.map((x, j) => Math.abs(x - ((alone[i] as Float32Array)[j] as number))));
          expect(diff, texts[i]).to.be.below(1e-5);
        }
      }
      const loaded = lines.map((line) => JSON.parse(line) as { msg: string; thread?: number }).filter((entry) => entry.msg === 'local embedding model loaded');
      expect(loaded.map((entry) => entry.thread).sort()).to.deep.equal([1, 2]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('on close while both threads load the model, finishes their batches, refuses the queued ones and ends the threads', async () => {
    const pool = new LocalModelPool(2);
    const runs = batches(4).map((batch) => settle(pool.run(task(batch))));
    await pool.close();
    const results = await Promise.all(runs);
    for (const result of results.slice(0, 2)) {
      expect(result).not.to.be.instanceOf(Error);
      expect((result as { data: Float32Array }).data).to.have.length(32 * 384);
    }
    expect(results.slice(0, 2).map((r) => (r as { thread: number }).thread).sort()).to.deep.equal([1, 2]);
    for (const result of results.slice(2)) expect((result as Error).message).to.equal('The local model thread was closed.');
    expect((await settle(pool.run(task(['late'])))) as Error).to.have.property('message', 'The local model thread was closed.');
  });

  it('on close while both threads run a batch, lets them finish it, releases the models and ends the threads', async () => {
    const pool = new LocalModelPool(2);
    // both threads loaded and warm
    expect((await Promise.all(batches(2).map((batch) => pool.run(task(batch))))).map((r) => r.loadMs === null)).to.deep.equal([false, false]);
    const runs = batches(4).map((batch) => settle(pool.run(task(batch))));
    await pool.close();
    const results = await Promise.all(runs);
    for (const result of results.slice(0, 2)) expect((result as { loadMs: number | null }).loadMs).to.equal(null);
    for (const result of results.slice(2)) expect((result as Error).message).to.equal('The local model thread was closed.');
  });
});

describe('cohere embedder (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('calls /v2/embed with the key, model and input type, 96 texts at most per call, in order', async () => {
    server = await fakeProvider(cohereAnswer);
    const cohere = embeddersFor({ COHERE_API_KEY: 'test-cohere-key', COHERE_BASE_URL: server.url }).get('cohere/embed-v4.0');
    const texts = numbered(200);
    const vectors = await cohere.embed(texts, 'document');

    expect(vectors.map((v) => v[0])).to.deep.equal(texts.map((_, i) => i));
    expect(server.received.map((r) => (r.body.texts as string[]).length)).to.deep.equal([96, 96, 8]);
    for (const request of server.received) {
      expect([request.method, request.path]).to.deep.equal(['POST', '/v2/embed']);
      expect(request.headers.authorization).to.equal('Bearer test-cohere-key');
      expect(request.body).to.include({ model: 'embed-v4.0', input_type: 'search_document' });
      expect(request.body.embedding_types).to.deep.equal(['float']);
    }
    expect((server.received[2]?.body.texts as string[])[0]).to.equal('t192');

    await cohere.embed(['t7'], 'query');
    expect(server.received.at(-1)?.body.input_type).to.equal('search_query');
  });

  it('learns the vector length of an unlisted model from one call', async () => {
    server = await fakeProvider(cohereAnswer);
    const cohere = embeddersFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/embed-custom-2');
    expect(await cohere.dimension()).to.equal(3);
    expect(await cohere.dimension()).to.equal(3);
    expect(server.received).to.have.length(1);
  });

  it('is unavailable (503) while Cohere answers 503, and rides out a single 503', async () => {
    server = await fakeProvider(() => unavailableAnswer);
    const env = { COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url };
    const error = await rejection(embeddersFor(env, { maxRetries: 0 }).get('cohere/embed-v4.0').embed(['t1'], 'document'));
    expect([error.status, error.code]).to.deep.equal([503, 'service_unavailable']);
    await server.close();

    server = await fakeProvider((request, count) => (count === 1 ? unavailableAnswer : cohereAnswer(request)));
    const vectors = await embeddersFor({ ...env, COHERE_BASE_URL: server.url }).get('cohere/embed-v4.0').embed(['t1'], 'document');
    expect(vectors[0]?.[0]).to.equal(1);
  });

  it("holds every call back until a 429's Retry-After has passed, and sends COHERE_EMBED_BATCH texts a call at most", async () => {
    server = await fakeProvider((request, count) => (count === 1 ? { status: 429, body: { message: 'too many requests' }, headers: { 'retry-after': '1' } } : cohereAnswer(request)));
    const cohere = embeddersFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url, COHERE_EMBED_BATCH: '40' }, { maxRetries: 0 }).get('cohere/embed-v4.0');
    const refused = await rejection(cohere.embed(['t1'], 'document'));
    expect([refused.status, refused.headers?.['Retry-After']]).to.deep.equal([503, '1']);

    const started = Date.now();
    const texts = numbered(100);
    const vectors = await cohere.embed(texts, 'document');
    expect(Date.now() - started, 'waited for Retry-After').to.be.at.least(900);
    expect(vectors.map((v) => v[0])).to.deep.equal(texts.map((_, i) => i));
    expect(server.received.map((r) => (r.body.texts as string[]).length)).to.deep.equal([1, 40, 40, 20]);
  });

  it('passes on why Cohere refused an input as a 400', async () => {
    server = await fakeProvider(() => ({ status: 400, body: { message: 'invalid request: texts must not be empty strings' } }));
    const cohere = embeddersFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/embed-v4.0');
    const error = await rejection(cohere.embed([''], 'document'));
    expect([error.status, error.code]).to.deep.equal([400, 'embed_input_rejected']);
    expect(error.detail).to.include('texts must not be empty strings');
  });

  it('is unavailable (503) when nothing answers at COHERE_BASE_URL', async () => {
    server = await fakeProvider(cohereAnswer);
    await server.close();
    const cohere = embeddersFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }, { maxRetries: 0 }).get('cohere/embed-v4.0');
    expect((await rejection(cohere.embed(['t1'], 'query'))).status).to.equal(503);
  });
});

describe('openai-compatible embedder (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('posts float requests to /embeddings, 256 texts at most per call, ordered by index', async () => {
    server = await fakeProvider(openaiAnswer);
    const openai = embeddersFor({ OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'test-openai-key' }).get('openai/text-embedding-3-small');
    const texts = numbered(600);
    const vectors = await openai.embed(texts, 'query');

    expect(vectors.map((v) => v[0])).to.deep.equal(texts.map((_, i) => i));
    expect(server.received.map((r) => (r.body.input as string[]).length)).to.deep.equal([256, 256, 88]);
    for (const request of server.received) {
      expect([request.method, request.path]).to.deep.equal(['POST', '/v1/embeddings']);
      expect(request.headers.authorization).to.equal('Bearer test-openai-key');
      expect(request.body).to.include({ model: 'text-embedding-3-small', encoding_format: 'float' });
    }
  });

  it('learns the vector length of an unlisted model from one call', async () => {
    server = await fakeProvider(openaiAnswer);
    const openai = embeddersFor({ OPENAI_BASE_URL: server.url }).get('openai/nomic-ai/nomic-embed-text-v1.5');
    expect(await openai.dimension()).to.equal(3);
    expect(await openai.dimension()).to.equal(3);
    expect(server.received).to.have.length(1);
    expect(server.received[0]?.body.model).to.equal('nomic-ai/nomic-embed-text-v1.5');
  });

  it('is unavailable (503) while the server answers 503, and rides out a single 503', async () => {
    server = await fakeProvider(() => unavailableAnswer);
    const error = await rejection(embeddersFor({ OPENAI_BASE_URL: server.url }, { maxRetries: 0 }).get('openai/m').embed(['t1'], 'document'));
    expect([error.status, error.code]).to.deep.equal([503, 'service_unavailable']);
    await server.close();

    server = await fakeProvider((request, count) => (count === 1 ? unavailableAnswer : openaiAnswer(request)));
    const vectors = await embeddersFor({ OPENAI_BASE_URL: server.url }).get('openai/m').embed(['t4'], 'document');
    expect(vectors[0]?.[0]).to.equal(4);
  });

  it("holds every call back until a 429's Retry-After has passed, and sends OPENAI_EMBED_BATCH texts a call at most", async () => {
    const rateLimited: Answer = { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests' } }, headers: { 'retry-after': '1' } };
    server = await fakeProvider((request, count) => (count === 1 ? rateLimited : openaiAnswer(request)));
    const openai = embeddersFor({ OPENAI_BASE_URL: server.url, OPENAI_EMBED_BATCH: '100' }, { maxRetries: 0 }).get('openai/m');
    const refused = await rejection(openai.embed(['t1'], 'document'));
    expect([refused.status, refused.headers?.['Retry-After']]).to.deep.equal([503, '1']);

    const started = Date.now();
    const texts = numbered(250);
    const vectors = await openai.embed(texts, 'document');
    expect(Date.now() - started, 'waited for Retry-After').to.be.at.least(900);
    expect(vectors.map((v) => v[0])).to.deep.equal(texts.map((_, i) => i));
    expect(server.received.map((r) => (r.body.input as string[]).length)).to.deep.equal([1, 100, 100, 50]);
  });

  it('passes on why the server refused an input as a 400', async () => {
    server = await fakeProvider(() => ({
      status: 400,
      body: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error' } },
    }));
    const openai = embeddersFor({ OPENAI_BASE_URL: server.url }).get('openai/text-embedding-3-small');
    const error = await rejection(openai.embed(['very long'], 'document'));
    expect([error.status, error.code]).to.deep.equal([400, 'embed_input_rejected']);
    expect(error.detail).to.include('maximum context length');
  });
});
