import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, useProjectRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { json, serve, type TestServer } from '../http-server.js';

// Rerank endpoints in the common shape (`POST <RERANK_BASE_URL>/rerank`), as TEI, Jina, vLLM and
// Infinity serve them: a local stand-in that ranks passages naming "Omega" first, whatever the
// query, so a reranked answer is told apart from the search's own order.

/** How the stand-in answers the next requests. */
type Behaviour = 'results' | 'tei' | 'late' | 'down';

interface RerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n: number;
}

interface Hit {
  memory?: string;
  text?: string;
  score: number;
}

describe(`rerank endpoints (${PROFILE})`, function () {
  this.timeout(180_000);
  let endpoint: TestServer;
  let behaviour: Behaviour = 'results';
  let t: TestRuntime;
  let auth: string;
  /** Answers held back by the `late` stand-in, released when the test ends. */
  const held: Array<() => void> = [];

  before(async () => {
    endpoint = await serve((req, res) => {
      if (req.method !== 'POST' || req.url !== '/rerank') return json(res, 404, { error: 'not found' });
      const { documents, top_n } = JSON.parse(req.body) as RerankRequest;
      const scored = documents.map((d, index) => ({ index, score: d.includes('Omega') ? 0.97 : 0.05 + index / 1000 }));
      const best = scored.sort((a, b) => b.score - a.score).slice(0, top_n);
      if (behaviour === 'down') return json(res, 503, { error: 'model is loading' });
      if (behaviour === 'late') return void held.push(() => json(res, 200, { results: [] }));
      if (behaviour === 'tei') return json(res, 200, best);
      return json(res, 200, { model: 'stand-in', results: best.map(({ index, score }) => ({ index, relevance_score: score })), usage: { total_tokens: 1 } });
    });
    t = await startRuntime({
      env: { RERANK_MODEL: 'http/BAAI/bge-reranker-v2-m3', RERANK_BASE_URL: endpoint.base, RERANK_API_KEY: 'rk-test', RERANK_TIMEOUT_MS: '1500' },
    });
    auth = token((await newProject(t)).key);
  });
  afterEach(() => {
    behaviour = 'results';
    for (const release of held.splice(0)) release();
  });
  after(async () => {
    await t.close();
    await endpoint.close();
  });

  const post = (path: string, body: object) => t.http.post(path).set('Authorization', auth).send(body);
  const lastRequest = (): RerankRequest & { authorization: string | undefined } => {
    const seen = endpoint.requests[endpoint.requests.length - 1];
    if (!seen) throw new Error('the rerank endpoint was not called');
    return { ...(JSON.parse(seen.body) as RerankRequest), authorization: seen.headers.authorization };
  };

  describe('knowledge search', () => {
    const kb = unique('kb');
    const passages = ['Alpha is the first letter of the Greek alphabet.', 'Beta is the second letter.', 'Omega is the last letter of the alphabet.'];

    before(async () => {
      expect((await post('/v1/knowledge', { name: kb })).status).to.equal(201);
      for (const content of passages) {
        const doc = await post(`/v1/knowledge/${kb}/documents`, { filename: `${content.split(' ')[0]}.txt`, content });
        expect(doc.status, JSON.stringify(doc.body)).to.equal(202);
        await waitFor(async () => (await t.http.get(`/v1/knowledge/${kb}/documents/${doc.body.id}`).set('Authorization', auth)).body.status === 'ready', {
          message: 'document ready',
        });
      }
    });

    it('reorders the candidates by the endpoint and says the reranker was used', async () => {
      const res = await post(`/v1/knowledge/${kb}/search`, { query: 'the first letter', rerank: true, top_k: 2 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.results.map((c: Hit) => [c.text, c.score])).to.deep.equal([
        ['Omega is the last letter of the alphabet.', 0.97],
        [(res.body.results[1] as Hit).text, (res.body.results[1] as Hit).score],
      ]);
      expect(res.body.results).to.have.length(2);
      expect(res.body.rerank).to.deep.equal({ model: 'http/BAAI/bge-reranker-v2-m3', applied: true });
      const sent = lastRequest();
      expect(sent).to.include({ model: 'BAAI/bge-reranker-v2-m3', query: 'the first letter', top_n: 2, authorization: 'Bearer rk-test' });
      expect(sent.documents).to.have.members(passages);
    });

    it("reads TEI's own answer, a bare list of {index, score}", async () => {
      behaviour = 'tei';
      const res = await post(`/v1/knowledge/${kb}/search`, { query: 'the first letter', rerank: true, top_k: 1 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.results.map((c: Hit) => c.text)).to.deep.equal(['Omega is the last letter of the alphabet.']);
      expect(res.body.rerank).to.deep.equal({ model: 'http/BAAI/bge-reranker-v2-m3', applied: true });
    });

    it('answers in the fused order when the endpoint is down or late, and says why', async () => {
      const own = await post(`/v1/knowledge/${kb}/search`, { query: 'the first letter', top_k: 2 });
      expect(own.status).to.equal(200);
      expect(own.body).to.not.have.property('rerank');

      for (const [kind, reason] of [
        ['down', /unavailable \(503/],
        ['late', /did not answer within 1500 ms/],
      ] as const) {
        behaviour = kind;
        const res = await post(`/v1/knowledge/${kb}/search`, { query: 'the first letter', rerank: true, top_k: 2 });
        expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body.results, kind).to.deep.equal(own.body.results);
        expect(res.body.rerank.applied, kind).to.equal(false);
        expect(res.body.rerank.model).to.equal('http/BAAI/bge-reranker-v2-m3');
        expect(res.body.rerank.reason, kind).to.match(reason);
        expect(JSON.stringify(res.body), kind).to.not.include('rk-test');
      }
    });
  });

  describe('memory search', () => {
    const user = unique('user');
    const texts = ['I play the cello in an amateur orchestra', 'My sister lives in Omega Street in Lisbon', 'I am learning to play the violin too'];

    before(async () => {
      const added = await post('/v3/memories/add/', { messages: texts.map((content) => ({ role: 'user', content })), user_id: user, infer: false });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      const ids = (added.body.results as Array<{ id: string }>).map((m) => m.id);
      await waitFor(
        async () => {
          for (const id of ids) if ((await t.http.get(`/v1/memories/${id}/`).set('Authorization', auth)).body.embedding_status !== 'indexed') return false;
          return true;
        },
        { message: 'memories indexed' },
      );
    });

    it('reranks the candidates of hybrid and dense search with rerank: true, and not without it', async () => {
      for (const mode of ['hybrid', 'dense']) {
        const own = await post('/v3/memories/search/', { query: 'play cello', filters: { user_id: user }, top_k: 2, mode });
        expect(own.status, JSON.stringify(own.body)).to.equal(200);
        expect(own.body).to.not.have.property('rerank');
        expect((own.body.results as Hit[]).map((h) => h.memory), mode).to.not.include('My sister lives in Omega Street in Lisbon');

        const res = await post('/v3/memories/search/', { query: 'play cello', filters: { user_id: user }, top_k: 2, mode, rerank: true });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect((res.body.results as Hit[])[0], mode).to.include({ memory: 'My sister lives in Omega Street in Lisbon', score: 0.97 });
        expect(res.body.results, mode).to.have.length(2);
        expect(res.body.rerank, mode).to.deep.equal({ model: 'http/BAAI/bge-reranker-v2-m3', applied: true });
        expect(lastRequest(), mode).to.include({ query: 'play cello', top_n: 2 });
        expect(lastRequest().documents, mode).to.have.members(texts);
      }
    });

    it('answers in its own order when the endpoint is down, and says why', async () => {
      const own = await post('/v3/memories/search/', { query: 'play cello', filters: { user_id: user }, top_k: 2 });
      behaviour = 'down';
      const res = await post('/v3/memories/search/', { query: 'play cello', filters: { user_id: user }, top_k: 2, rerank: true });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.results).to.deep.equal(own.body.results);
      expect(res.body.rerank).to.include({ model: 'http/BAAI/bge-reranker-v2-m3', applied: false });
      expect(res.body.rerank.reason).to.match(/unavailable \(503/);
    });
  });
});

describe(`rerank without a reranker (${PROFILE})`, function () {
  this.timeout(120_000);
  const suite = useProjectRuntime();

  it("memory search takes mem0's rerank: true and answers in its own order, saying there is no reranker", async () => {
    const user = unique('user');
    const added = await suite.runtime.http.post('/v3/memories/add/').set('Authorization', suite.auth).send({ messages: [{ role: 'user', content: 'I keep bees in the garden' }], user_id: user, infer: false });
    expect(added.status).to.equal(200);
    const res = await suite.runtime.http.post('/v3/memories/search/').set('Authorization', suite.auth).send({ query: 'bees', filters: { user_id: user }, rerank: true, mode: 'keyword' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.results.map((h: Hit) => h.memory)).to.deep.equal(['I keep bees in the garden']);
    expect(res.body.rerank).to.deep.equal({ model: null, applied: false, reason: 'this server has no reranker (RERANK_MODEL)' });
  });

  it('knowledge search with rerank: true is a 400 that says what an operator sets', async () => {
    const kb = unique('kb');
    await suite.runtime.http.post('/v1/knowledge').set('Authorization', suite.auth).send({ name: kb });
    const res = await suite.runtime.http.post(`/v1/knowledge/${kb}/search`).set('Authorization', suite.auth).send({ query: 'x', rerank: true });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('model_unavailable');
    expect(res.body.detail).to.match(/RERANK_BASE_URL/);
  });
});
