import { expect } from 'chai';
import { docxFile, pdfFile } from '../documents.js';
import { isProduction, newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { fakeProvider } from '../provider-server.js';

interface Doc {
  id: string;
  status: string;
  chunk_count: number;
  error: string | null;
  filename: string;
  source_type: string;
  created_at: string;
  updated_at: string;
}
interface Citation {
  text: string;
  score: number;
  document_id: string;
  filename: string;
  chunk_id: string;
  knowledge_base: string;
  start: number;
  end: number;
  heading: string | null;
  found_by: string[];
}

const GUIDE = `# Field guide

Welcome to the field guide of the observatory.

## Telescopes

The main telescope is a 40 cm reflector on an equatorial mount. Book it at least two days ahead through the front desk.

## Night rules

Red torches only after dark, so everyone's eyes stay adapted. The dome closes at 2 am sharp.
`;

describe(`knowledge (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  let projectId: string;

  before(async () => {
    t = await startRuntime();
    const project = await newProject(t);
    auth = token(project.key);
    projectId = project.projectId;
  });
  after(() => t.close());

  const post = (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object);
  const get = (path: string) => t.http.get(path).set('Authorization', auth);
  const settled = (kb: string, id: string) =>
    waitFor(
      async () => {
        const doc = (await get(`/v1/knowledge/${kb}/documents/${id}`)).body as Doc;
        return doc.status === 'ready' || doc.status === 'failed' ? doc : null;
      },
      { timeoutMs: 60_000, message: `document ${id} settled` },
    );
  const search = async (kb: string, body: Record<string, unknown>): Promise<Citation[]> => {
    const response = await post(`/v1/knowledge/${kb}/search`, body);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.results as Citation[];
  };

  it('creates, describes, lists and refuses knowledge bases', async () => {
    const name = unique('kb');
    const created = await post('/v1/knowledge', { name, instructions: 'Answer from the guide.' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ name, instructions: 'Answer from the guide.', model: 'local', embed_model: 'local/all-MiniLM-L6-v2', document_count: 0 });
    expect((await post('/v1/knowledge', { name })).status).to.equal(409);
    const bad = await post('/v1/knowledge', { name: 'no spaces allowed' });
    expect(bad.status).to.equal(400);
    expect(bad.body.errors[0].path).to.equal('/name');
    expect((await post('/v1/knowledge', { name: unique('kb'), chunk_size: 200, chunk_overlap: 150 })).status).to.equal(400);
    expect((await post('/v1/knowledge', { name: unique('kb'), embed_model: 'nobody/model' })).status).to.equal(400);
    expect((await get(`/v1/knowledge/${name}`)).body.name).to.equal(name);
    expect((await get('/v1/knowledge')).body.knowledge_bases.map((k: { name: string }) => k.name)).to.include(name);
    const missing = await get('/v1/knowledge/nope-nothing');
    expect(missing.status).to.equal(404);
    expect(missing.body.detail).to.match(/no knowledge base/);
  });

  it('takes every document type to ready through the worker, and a corrupt or unsupported file to a clear failure', async () => {
    const kb = unique('kb');
    await post('/v1/knowledge', { name: kb });
    const json = await post(`/v1/knowledge/${kb}/documents`, { filename: 'guide.md', content: GUIDE, source_type: 'markdown', metadata: { team: 'astro' } });
    expect(json.status, JSON.stringify(json.body)).to.equal(202);
    expect(json.body).to.include({ status: 'uploaded', chunk_count: 0, filename: 'guide.md', source_type: 'markdown' });
    const html = await post(`/v1/knowledge/${kb}/documents`, {
      filename: 'cafe.html',
      source_type: 'html',
      content: '<html><head><style>p{}</style></head><body><h1>Café</h1><p>The café serves <b>oat milk</b> flat whites until 4 pm.</p><script>alert(1)</script></body></html>',
    });
    const upload = (filename: string, data: Buffer, fields: Record<string, string> = {}) => {
      const request = t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth);
      for (const [k, v] of Object.entries(fields)) void request.field(k, v);
      return request.attach('file', data, filename);
    };
    const txt = await upload('parking.txt', Buffer.from('Visitors park in lot C.\n\nThe gate code is 4471.'), { metadata: JSON.stringify({ team: 'facilities' }) });
    expect(txt.status, JSON.stringify(txt.body)).to.equal(202);
    const md = await upload('wifi.md', Buffer.from('# Wi-Fi\n\nThe guest network is called Orion and needs no password.'));
    const pdf = await upload('safety.pdf', await pdfFile([['Safety rules', 'Never look at the Sun through the finder scope.'], ['Page two', 'Fire exits are behind the lecture hall.']]));
    const docx = await upload('history.docx', await docxFile('History', ['The observatory was founded in 1962 by the astronomer Ida Brandt.', 'Its first dome was made of copper.']));
    const corrupt = await upload('broken.pdf', Buffer.from('%PDF-1.7 this is not really a pdf'));
    const unsupported = await upload('tool.exe', Buffer.from('MZ...'));
    expect(unsupported.status).to.equal(400);
    expect(unsupported.body.detail).to.match(/not a supported document/);
    const empty = await post(`/v1/knowledge/${kb}/documents`, { filename: 'x.txt', content: '' });
    expect(empty.status).to.equal(400);

    const results = new Map<string, Doc>();
    for (const response of [json, html, txt, md, pdf, docx, corrupt]) {
      expect(response.status, JSON.stringify(response.body)).to.equal(202);
      const doc = await settled(kb, response.body.id as string);
      results.set(doc.filename, doc);
    }
    for (const filename of ['guide.md', 'cafe.html', 'parking.txt', 'wifi.md', 'safety.pdf', 'history.docx']) {
      const doc = results.get(filename) as Doc;
      expect(doc.status, `${filename}: ${doc.error}`).to.equal('ready');
      expect(doc.chunk_count, filename).to.be.greaterThan(0);
      expect(Date.parse(doc.updated_at)).to.be.at.least(Date.parse(doc.created_at));
    }
    expect(results.get('safety.pdf')?.source_type).to.equal('pdf');
    expect(results.get('history.docx')?.source_type).to.equal('docx');
    const broken = results.get('broken.pdf') as Doc;
    expect(broken.status).to.equal('failed');
    expect(broken.error).to.match(/pdf file could not be read/i);
    expect((await get(`/v1/knowledge/${kb}`)).body.document_count).to.equal(7);
    expect((await get(`/v1/knowledge/${kb}/documents`)).body.documents).to.have.length(7);

    // every type is searchable, with citations that point into the document
    const [telescope] = await search(kb, { query: 'How far ahead must I reserve the big telescope?' });
    expect(telescope?.filename).to.equal('guide.md');
    expect(telescope?.text).to.include('Book it at least two days ahead');
    expect(telescope?.heading).to.equal('Field guide > Telescopes');
    expect(telescope?.end).to.be.greaterThan(telescope?.start as number);
    expect((await search(kb, { query: 'oat milk flat white' }))[0]?.filename).to.equal('cafe.html');
    expect((await search(kb, { query: 'gate code' }))[0]?.filename).to.equal('parking.txt');
    expect((await search(kb, { query: 'guest wifi network name' }))[0]?.filename).to.equal('wifi.md');
    expect((await search(kb, { query: 'where are the fire exits' }))[0]?.filename).to.equal('safety.pdf');
    expect((await search(kb, { query: 'who founded the observatory' }))[0]?.filename).to.equal('history.docx');
    const html0 = (await search(kb, { query: 'café', mode: 'keyword' }))[0];
    expect(html0?.text).to.not.include('alert(1)');
    // each hit says which signal found it: one in its own mode; in hybrid, words and meaning both find the passage named by both
    expect(html0?.found_by).to.deep.equal(['keyword']);
    expect((await search(kb, { query: 'gate code', mode: 'dense' })).every((c) => JSON.stringify(c.found_by) === '["dense"]')).to.equal(true);
    const gate = (await search(kb, { query: 'gate code' }))[0];
    expect([gate?.filename, gate?.found_by]).to.deep.equal(['parking.txt', ['dense', 'keyword']]);

    // filters use the shared filter language
    const filtered = await search(kb, { query: 'rules', filter: { source_type: 'pdf' } });
    expect(filtered.length).to.be.greaterThan(0);
    expect(filtered.every((c) => c.filename === 'safety.pdf')).to.equal(true);
    const byTeam = await search(kb, { query: 'code', filter: { 'metadata.team': 'facilities' }, mode: 'keyword' });
    expect(byTeam.map((c) => c.filename)).to.deep.equal(['parking.txt']);
    const badFilter = await post(`/v1/knowledge/${kb}/search`, { query: 'x', filter: { colour: 'red' } });
    expect(badFilter.status).to.equal(400);
  });

  it('re-processes a document in place, deletes documents and bases with their vectors, and searches several bases', async () => {
    // a project of its own, so its vector counts are this test's alone
    const project = await newProject(t);
    auth = token(project.key);
    projectId = project.projectId;
    const kb = unique('kb');
    const other = unique('kb');
    await post('/v1/knowledge', { name: kb, chunk_size: 200, chunk_overlap: 40 });
    await post('/v1/knowledge', { name: other });
    const long = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} describes exhibit number ${i} of the museum in some detail.`).join('\n\n');
    const doc = (await post(`/v1/knowledge/${kb}/documents`, { filename: 'museum.txt', content: long })).body as Doc;
    const first = await settled(kb, doc.id);
    expect(first.chunk_count).to.be.greaterThan(2);
    const otherDoc = (await post(`/v1/knowledge/${other}/documents`, { filename: 'zoo.txt', content: 'The zoo feeds the penguins at noon.' })).body as Doc;
    await settled(other, otherDoc.id);

    const before = await search(kb, { query: 'exhibit number 7', top_k: 50, mode: 'dense' });
    const again = await post(`/v1/knowledge/${kb}/documents/${doc.id}/reprocess`, {});
    expect(again.status).to.equal(202);
    expect(again.body.status).to.equal('uploaded');
    const second = await settled(kb, doc.id);
    expect(second.chunk_count).to.equal(first.chunk_count);
    const after = await search(kb, { query: 'exhibit number 7', top_k: 50, mode: 'dense' });
    expect(after.map((c) => c.chunk_id).sort(), 'the same chunks, none duplicated').to.deep.equal(before.map((c) => c.chunk_id).sort());
    const collection = await t.runtime.knowledge.collection('local');
    const vectors = () => t.runtime.vectors.count(collection, projectId);
    expect(await vectors()).to.equal(first.chunk_count + 1);

    const both = await post('/v1/knowledge/search', { knowledge: [kb, other], query: 'when are the penguins fed' });
    expect(both.status).to.equal(200);
    expect(both.body.results[0]).to.include({ knowledge_base: other, filename: 'zoo.txt' });
    expect((await post('/v1/knowledge/search', { knowledge: [kb, 'missing-kb'], query: 'x' })).status).to.equal(404);

    expect((await t.http.delete(`/v1/knowledge/${kb}/documents/${doc.id}`).set('Authorization', auth)).status).to.equal(204);
    expect((await get(`/v1/knowledge/${kb}/documents/${doc.id}`)).status).to.equal(404);
    expect(await search(kb, { query: 'exhibit number 7' })).to.deep.equal([]);
    await waitFor(async () => (await vectors()) === 1, { message: 'the deleted document left no vectors' });

    expect((await t.http.delete(`/v1/knowledge/${other}`).set('Authorization', auth)).status).to.equal(204);
    expect((await get(`/v1/knowledge/${other}`)).status).to.equal(404);
    await waitFor(async () => (await vectors()) === 0, { message: 'the deleted base left no vectors' });
  });

  it('reranks with Cohere when asked and configured, and says what to set when not', async () => {
    const kb = unique('kb');
    await post('/v1/knowledge', { name: kb });
    for (const content of ['Alpha is the first letter.', 'Omega is the last letter.']) {
      const doc = (await post(`/v1/knowledge/${kb}/documents`, { filename: `${content.split(' ')[0]}.txt`, content })).body as Doc;
      await settled(kb, doc.id);
    }
    const refused = await post(`/v1/knowledge/${kb}/search`, { query: 'last letter', rerank: true });
    expect(refused.status).to.equal(400);
    expect(refused.body.detail).to.match(/COHERE_API_KEY/);

    const cohere = await fakeProvider((request) => {
      const documents = request.body.documents as string[];
      // ranks the passage that mentions "Alpha" first, whatever the query
      const results = documents.map((d, index) => ({ index, relevance_score: d.includes('Alpha') ? 0.9 : 0.1 })).sort((a, b) => b.relevance_score - a.relevance_score);
      return { status: 200, body: { id: 'r', results, meta: { billed_units: { search_units: 1 } } } };
    });
    const reranking = await startRuntime({ env: { COHERE_API_KEY: 'k', COHERE_BASE_URL: cohere.url } });
    try {
      const key = token((await newProject(reranking)).key);
      await reranking.http.post('/v1/knowledge').set('Authorization', key).send({ name: kb });
      for (const content of ['Alpha is the first letter.', 'Omega is the last letter.']) {
        const doc = (await reranking.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', key).send({ filename: 'x.txt', content })).body as Doc;
        await waitFor(async () => (await reranking.http.get(`/v1/knowledge/${kb}/documents/${doc.id}`).set('Authorization', key)).body.status === 'ready');
      }
      const ranked = await reranking.http.post(`/v1/knowledge/${kb}/search`).set('Authorization', key).send({ query: 'the last letter', rerank: true, top_k: 2 });
      expect(ranked.status, JSON.stringify(ranked.body)).to.equal(200);
      expect(ranked.body.results.map((c: Citation) => [c.text, c.score])).to.deep.equal([
        ['Alpha is the first letter.', 0.9],
        ['Omega is the last letter.', 0.1],
      ]);
      expect(cohere.received[0]?.path).to.equal('/v2/rerank');
      expect(cohere.received[0]?.body).to.include({ model: 'rerank-v3.5', query: 'the last letter', top_n: 2 });
    } finally {
      await reranking.close();
      await cohere.close();
    }
  });

  it("lists a document's chunks in order, each id the chunk_id its citations carry, a page at a time", async () => {
    const kb = unique('kb');
    expect((await post('/v1/knowledge', { name: kb, chunk_size: 100, chunk_overlap: 0 })).status).to.equal(201);
    const doc = (await post(`/v1/knowledge/${kb}/documents`, { filename: 'guide.md', content: GUIDE, source_type: 'markdown' })).body as Doc;
    const before = await get(`/v1/knowledge/${kb}/documents/${doc.id}/chunks`);
    expect(before.status).to.equal(200);
    const ready = await settled(kb, doc.id);
    expect(ready.status).to.equal('ready');
    const all = (await get(`/v1/knowledge/${kb}/documents/${doc.id}/chunks`)).body.chunks as Array<{ id: string; ordinal: number; text: string; start: number; end: number; heading: string | null; document_id: string }>;
    expect(all).to.have.length(ready.chunk_count).and.length.above(2);
    expect(all.map((c) => c.ordinal)).to.deep.equal(all.map((_, i) => i));
    for (const c of all) expect(c.document_id).to.equal(doc.id);
    expect(all.some((c) => c.heading?.includes('Night rules') && c.text.includes('The dome closes at 2 am'))).to.equal(true);
    const [hit] = await search(kb, { query: 'when does the dome close', top_k: 1 });
    expect(all.find((c) => c.id === hit?.chunk_id)).to.include({ text: hit?.text, start: hit?.start, end: hit?.end });
    const second = (await get(`/v1/knowledge/${kb}/documents/${doc.id}/chunks?limit=1&offset=1`)).body.chunks;
    expect(second).to.deep.equal([all[1]]);
    expect((await get(`/v1/knowledge/${kb}/documents/no-such-document/chunks`)).status).to.equal(404);
    expect((await get(`/v1/knowledge/${unique('none')}/documents/${doc.id}/chunks`)).status).to.equal(404);
  });
});

describe(`a document that can never be read, on the queue board (${PROFILE})`, function () {
  this.timeout(120_000);
  const ADMIN_TOKEN = 'admin-token-for-failed-documents-0123456789';
  let t: TestRuntime;
  let auth: string;

  before(async () => {
    t = await startRuntime({ env: { ADMIN_TOKEN } });
    auth = token((await newProject(t)).key);
  });
  after(() => t.close());

  it('ends its job failed, once, with the reason the document shows', async () => {
    const kb = unique('kb');
    expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb })).status).to.equal(201);
    const uploaded = await t.http
      .post(`/v1/knowledge/${kb}/documents`)
      .set('Authorization', auth)
      .attach('file', Buffer.from('%PDF-1.7 this is not really a pdf'), 'broken.pdf');
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(202);
    const id = uploaded.body.id as string;
    const doc = await waitFor(
      async () => {
        const d = (await t.http.get(`/v1/knowledge/${kb}/documents/${id}`).set('Authorization', auth)).body as Doc;
        return d.status === 'failed' || d.status === 'ready' ? d : null;
      },
      { timeoutMs: 60_000, message: 'the document settled' },
    );
    expect(doc.status).to.equal('failed');
    expect(doc.error).to.match(/pdf file could not be read/i);

    const jobId = `document.process-${id}-1`;
    if (isProduction) {
      // Bull Board's API, as the board's page reads it
      const shown = await waitFor(
        async () => {
          const res = await t.http.get(`/admin/queues/api/queues/documents/${encodeURIComponent(jobId)}`).auth('admin', ADMIN_TOKEN);
          return res.status === 200 && res.body.status === 'failed' ? res.body : null;
        },
        { timeoutMs: 10_000, message: 'the job failed on the board' },
      );
      expect(shown.job).to.include({ id: jobId, name: 'document.process', failedReason: doc.error, attempts: 1 });
    } else {
      // the embedded board: queue depths and the failed jobs with their reasons
      const board = await waitFor(
        async () => {
          const res = await t.http.get('/admin/queues').auth('admin', ADMIN_TOKEN);
          return (res.body.failed as Array<{ id: string }>).some((j) => j.id === jobId) ? res.body : null;
        },
        { timeoutMs: 10_000, message: 'the job failed on the board' },
      );
      expect(board.failed.find((j: { id: string }) => j.id === jobId)).to.include({ queue: 'documents', name: 'document.process', reason: doc.error, attempts: 1 });
      expect(board.queues.find((q: { queue: string }) => q.queue === 'documents')).to.include({ failed: 1, delayed: 0 });
    }
  });
});
