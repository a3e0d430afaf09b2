import { expect } from 'chai';
import { PASSAGES, QUESTIONS } from '../fixtures/knowledge-corpus.js';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Retrieval quality on a small corpus with known answers: hit@3 and MRR (over the top 10) for
// dense-only, keyword-only and hybrid search, with the real local embedding model. The table is
// printed (BENCHMARKS.md records it); hybrid must be at least as good as the better of the two.

describe(`knowledge retrieval quality (${PROFILE})`, function () {
  this.timeout(180_000);
  let t: TestRuntime;

  before(async () => {
    t = await startRuntime();
  });
  after(() => t.close());

  it('hybrid search is at least as good as the better of dense and keyword search', async () => {
    const auth = token((await newProject(t)).key);
    const kb = unique('corpus');
    await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb });
    const fileOf = new Map<string, string>();
    const ids: string[] = [];
    for (const passage of PASSAGES) {
      const filename = `${passage.id}.md`;
      fileOf.set(filename, passage.id);
      const response = await t.http
        .post(`/v1/knowledge/${kb}/documents`)
        .set('Authorization', auth)
        .send({ filename, source_type: 'markdown', content: `# ${passage.title}\n\n${passage.text}\n` });
      ids.push(response.body.id as string);
    }
    await waitFor(
      async () => {
        const docs = (await t.http.get(`/v1/knowledge/${kb}/documents?limit=100`).set('Authorization', auth)).body.documents as Array<{ status: string }>;
        return docs.length === PASSAGES.length && docs.every((d) => d.status === 'ready');
      },
      { timeoutMs: 120_000, message: 'the corpus is ready' },
    );

    const table: Record<string, { hit3: number; mrr: number }> = {};
    for (const mode of ['dense', 'keyword', 'hybrid'] as const) {
      let hits = 0;
      let reciprocal = 0;
      for (const { question, answer } of QUESTIONS) {
        const response = await t.http.post(`/v1/knowledge/${kb}/search`).set('Authorization', auth).send({ query: question, mode, top_k: 10 });
        expect(response.status).to.equal(200);
        const ranked = (response.body.results as Array<{ filename: string }>).map((c) => fileOf.get(c.filename));
        const rank = ranked.indexOf(answer);
        if (rank !== -1 && rank < 3) hits += 1;
        if (rank !== -1) reciprocal += 1 / (rank + 1);
      }
      table[mode] = { hit3: hits / QUESTIONS.length, mrr: reciprocal / QUESTIONS.length };
    }
    process.stdout.write(
      `\n      retrieval quality (${PASSAGES.length} passages, ${QUESTIONS.length} questions):\n` +
        Object.entries(table)
          .map(([mode, r]) => `      ${mode.padEnd(8)} hit@3 ${r.hit3.toFixed(3)}  MRR ${r.mrr.toFixed(3)}\n`)
          .join(''),
    );
    const { dense, keyword, hybrid } = table as Record<'dense' | 'keyword' | 'hybrid', { hit3: number; mrr: number }>;
    expect(hybrid.hit3, 'hybrid hit@3').to.be.at.least(Math.max(dense.hit3, keyword.hit3));
    expect(hybrid.mrr, 'hybrid MRR').to.be.at.least(Math.max(dense.mrr, keyword.mrr));
    expect(hybrid.hit3).to.be.at.least(0.8);
  });
});
