import { expect } from 'chai';
import { startEmbeddingServer, type EmbeddingServer } from '../embedding-server.js';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Memories indexed with an OpenAI-compatible embedding model whose server is over its rate limit
// for a while: every memory ends indexed, none failed, the server was never asked for more than
// the settings allow, and while it refused it was asked again about once per Retry-After.

interface Memory {
  id: string;
  memory: string;
  embedding_status: 'pending' | 'indexed' | 'failed';
  embedding_error: string | null;
}

/** What a run saw: the memories once none was pending, and whether one waited with the rate limit as its reason. */
interface Outcome {
  texts: string[];
  ids: string[];
  memories: Memory[];
  sawRateLimitError: boolean;
  auth: string;
  user: string;
}

describe(`remote embedders under rate limits (${PROFILE})`, function () {
  this.timeout(120_000);
  let server: EmbeddingServer | undefined;
  let t: TestRuntime | undefined;

  afterEach(async () => {
    await t?.close();
    await server?.close();
  });

  /**
   * Starts a runtime whose memories are embedded by `server` (`openai/text-embedding-3-small`),
   * adds `count` memories through mem0 add (infer false) and waits until none is pending.
   */
  async function indexMemories(embedServer: EmbeddingServer, settings: { concurrency: number; batch: number }, count: number): Promise<Outcome> {
    t = await startRuntime({
      env: {
        OPENAI_BASE_URL: embedServer.url,
        MEMORY_EMBED_MODEL: 'openai/text-embedding-3-small',
        OPENAI_EMBED_CONCURRENCY: String(settings.concurrency),
        OPENAI_EMBED_BATCH: String(settings.batch),
      },
    });
    const runtime = t;
    const { key } = await newProject(runtime);
    const auth = token(key);
    const user = unique('u');
    const texts = Array.from({ length: count }, (_, i) => `note ${i}: ${unique('fact')} about the rate-limited embeddings server`);
    const ids: string[] = [];
    for (let at = 0; at < texts.length; at += 50) {
      const res = await runtime.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: texts.slice(at, at + 50).map((content) => ({ role: 'user', content })), user_id: user, infer: false });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ids.push(...(res.body.results as Memory[]).map((m) => m.id));
    }
    expect(ids).to.have.length(count);

    const list = async (): Promise<Memory[]> => {
      const all: Memory[] = [];
      for (let page = 1; all.length < count; page++) {
        const res = await runtime.http.post(`/v3/memories/?page=${page}&page_size=100`).set('Authorization', auth).send({ filters: { user_id: user } });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const results = res.body.results as Memory[];
        if (results.length === 0) break;
        all.push(...results);
      }
      return all;
    };
    let sawRateLimitError = false;
    const memories = await waitFor(
      async () => {
        const now = await list();
        sawRateLimitError ||= now.some((m) => m.embedding_status === 'pending' && (m.embedding_error ?? '').includes('429'));
        return now.every((m) => m.embedding_status !== 'pending') && now;
      },
      { timeoutMs: 90_000, intervalMs: 100, message: 'every memory indexed' },
    );
    return { texts, ids, memories, sawRateLimitError, auth, user };
  }

  it('indexes every memory while the server answers 429 with Retry-After for a while, within OPENAI_EMBED_CONCURRENCY and OPENAI_EMBED_BATCH', async () => {
    const concurrency = 3;
    const batch = 8;
    const rateLimitedMs = 4_500;
    server = await startEmbeddingServer({ delayMs: 50, dimension: 1536, rateLimit: { forMs: rateLimitedMs, retryAfterSeconds: 1 } });
    const { texts, ids, memories, auth, user } = await indexMemories(server, { concurrency, batch }, 150);
    expect(memories.filter((m) => m.embedding_status !== 'indexed').map((m) => [m.embedding_status, m.embedding_error])).to.deep.equal([]);

    // while refused, the server was asked again once per Retry-After, not by every waiting call
    const refused = server.calls.filter((c) => c.status === 429).length;
    expect(refused, 'calls refused').to.be.within(1, concurrency + Math.ceil(rateLimitedMs / 1000));
    // the refusals lowered the limit: the first call that got through went alone
    expect(server.calls.find((c) => c.status === 200)?.inFlight).to.equal(1);
    expect(Math.max(...server.calls.map((c) => c.size)), 'texts per call').to.be.at.most(batch);
    expect(server.maxInFlight(), 'calls in flight').to.be.within(2, concurrency);
    expect(server.embedded()).to.be.at.least(texts.length);

    // the vectors are in the store: a memory's own text finds it first
    const probe = texts.length - 1;
    const found = await (t as TestRuntime).http
      .post('/v3/memories/search/')
      .set('Authorization', auth)
      .send({ query: texts[probe], filters: { user_id: user }, top_k: 3, mode: 'dense' });
    expect(found.status, JSON.stringify(found.body)).to.equal(200);
    expect((found.body.results as Array<{ id: string }>)[0]?.id).to.equal(ids[probe]);
  });

  it('retries through the queue the jobs whose call the refusals outlasted, until every memory is indexed', async () => {
    // One request at a time, refused for 8 s with Retry-After: 1: the first call's three attempts
    // (its own and the SDK's two retries, each a second apart) are all refused, however slowly a
    // busy machine makes them, so its jobs fail for now, wait in the queue with the reason, and are
    // indexed when it is over.
    server = await startEmbeddingServer({ delayMs: 50, dimension: 1536, rateLimit: { forMs: 8_000, retryAfterSeconds: 1 } });
    const { memories } = await indexMemories(server, { concurrency: 1, batch: 8 }, 20);
    expect(memories.filter((m) => m.embedding_status !== 'indexed').map((m) => [m.embedding_status, m.embedding_error])).to.deep.equal([]);
    expect(server.maxInFlight()).to.equal(1);
  });
});
