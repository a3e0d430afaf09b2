import { expect } from 'chai';
import supertest from 'supertest';
import { freePort, isProduction, PROFILE, profileEnv, spawnCairn, startRuntime, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

// A process that dies in the middle of a document leaves it to the retry: the document is
// finished by the next process, with its chunks once, never stuck in `processing`.

const KEY = 'crash-test-bootstrap-key-0123456789';

/** About 3 000 chunks of 200 characters: long enough to kill the process half-way. */
const BIG = Array.from({ length: 3000 }, (_, i) => `Section ${i} explains item ${i} of the catalogue, its size, its colour and where it is kept in the warehouse.`).join('\n\n');

describe(`knowledge: a worker killed mid-document (${PROFILE})`, function () {
  this.timeout(600_000); // a ceiling for a loaded machine: the test waits on conditions
  const procs: CairnProcess[] = [];
  let api: TestRuntime | null = null;
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.kill('SIGKILL');
    await api?.close();
    api = null;
  });

  it('finishes the document after the process that was processing it is killed', async () => {
    const env = profileEnv({ JOB_LOCK_MS: '2000', BOOTSTRAP_API_KEY: KEY, LOG_LEVEL: 'info' });
    let http: supertest.Agent;
    const startWorker = async (): Promise<CairnProcess> => {
      if (isProduction) {
        const worker = await spawnCairn('start-worker.ts', env);
        procs.push(worker);
        return worker;
      }
      // embedded: API and worker are one process, restarted on the same DATA_DIR
      const port = await freePort();
      const proc = await spawnCairn('start.ts', { ...env, PORT: String(port) });
      procs.push(proc);
      await proc.waitForOutput(/cairn started/, 60_000);
      http = supertest(`http://127.0.0.1:${port}`);
      return proc;
    };
    const worker = await startWorker();
    if (isProduction) {
      // the API in this process consumes no jobs; the worker process does
      api = await startRuntime({ role: 'api', env });
      http = supertest(api.app.callback());
    }
    const auth = `Token ${KEY}`;
    const kb = unique('crash');
    expect((await http!.post('/v1/knowledge').set('Authorization', auth).send({ name: kb, chunk_size: 200, chunk_overlap: 0 })).status).to.equal(201);
    const doc = (await http!.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: 'catalogue.txt', content: BIG })).body as { id: string };
    const status = async () => (await http!.get(`/v1/knowledge/${kb}/documents/${doc.id}`).set('Authorization', auth)).body as { status: string; chunk_count: number };
    await waitFor(async () => (await status()).status === 'processing', { timeoutMs: 60_000, intervalMs: 20, message: 'the document is being processed' });

    await worker.kill('SIGKILL');
    procs.splice(procs.indexOf(worker), 1);
    if (isProduction) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await status()).status, 'nobody finished it').to.equal('processing');
    }

    await startWorker();
    const done = await waitFor(async () => {
      const s = await status();
      return s.status === 'ready' || s.status === 'failed' ? s : null;
    }, { timeoutMs: 300_000, intervalMs: 200, message: 'the document was finished by the next process' });
    expect(done.status).to.equal('ready');
    expect(done.chunk_count).to.equal(3000);
    const hits = await http!.post(`/v1/knowledge/${kb}/search`).set('Authorization', auth).send({ query: 'Section 1234 explains item 1234', mode: 'keyword', top_k: 3 });
    expect(hits.body.results[0].text).to.include('item 1234 of the catalogue');
    expect(new Set(hits.body.results.map((r: { chunk_id: string }) => r.chunk_id)).size).to.equal(hits.body.results.length);
  });
});
