import { expect } from 'chai';
import knex from 'knex';
import { DOCUMENT_LIMITS } from '../../core/knowledge/documents.js';
import { freePort, isProduction, newProject, PROFILE, profileEnv, spawnCairn, startRuntime, TEST_DATABASE_URL, token, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

// Large documents and many documents at once: the API keeps answering while a document is read,
// chunked and embedded; a document over the text limit is refused or failed with the reason,
// never cut; documents processed together all end ready without the database deadlocking.

interface Doc {
  id: string;
  status: string;
  chunk_count: number;
  error: string | null;
}

/** Paragraphs of prose, `chars` characters in all (about one chunk per 1 000). */
function prose(chars: number, seed = 0): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i += 1) {
    const paragraph = `Shelf ${seed}-${i} holds the ${i % 7 === 0 ? 'winter' : 'summer'} stock: boxes of tea, tins of biscuits and jars of jam. The keeper counts them every morning, writes the numbers in the ledger, and orders more when a row runs low. Visitors may look but must not touch.\n\n`;
    parts.push(paragraph);
    length += paragraph.length;
  }
  return parts.join('').slice(0, chars);
}

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] as number;
}

/** Times `GET /v1/ping` back to back (a pause of `gapMs` between calls) until `stop()` says so. */
async function pingUntil(base: string, key: string, stop: () => boolean, gapMs = 20): Promise<number[]> {
  const samples: number[] = [];
  while (!stop()) {
    const started = performance.now();
    const response = await fetch(`${base}/v1/ping`, { headers: { authorization: `Token ${key}` } });
    const body = await response.text();
    samples.push(performance.now() - started);
    expect(response.status, body).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return samples;
}

describe(`knowledge under load (${PROFILE})`, function () {
  this.timeout(600_000); // a ceiling for a loaded machine: the tests wait on conditions

  describe('a large document', () => {
    /** Big enough that reading, chunking and embedding it would freeze an event loop for seconds. */
    const CHARS = Number(process.env.LOAD_TEST_DOC_CHARS ?? 250_000);
    const procs: CairnProcess[] = [];
    afterEach(async () => {
      for (const p of procs.splice(0)) await p.kill('SIGKILL');
    });

    it('is processed while GET /v1/ping keeps answering within 50 ms at the 99th percentile, through a real listener', async () => {
      const port = await freePort();
      const env = profileEnv({ LOG_LEVEL: 'warn', PORT: String(port) });
      // a project of its own (the production database is shared with other tests' projects)
      const keys = await spawnCairn('keys.ts', env, ['create', '--project', unique('load')]);
      expect(await keys.exited, keys.output()).to.equal(0);
      const KEY = keys.output().split('\n').find((line) => line.startsWith('cairn_')) as string;
      if (isProduction) {
        // the API answers pings; the worker process next to it does the document
        const worker = await spawnCairn('start-worker.ts', { ...env, LOG_LEVEL: 'info' });
        procs.push(worker);
        await worker.waitForOutput(/cairn started/, 60_000);
      }
      const server = await spawnCairn(isProduction ? 'start-api.ts' : 'start.ts', { ...env, LOG_LEVEL: 'info' });
      procs.push(server);
      await server.waitForOutput(/cairn started/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: token(KEY), 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const kb = unique('load');
      expect((await call('POST', '/v1/knowledge', { name: kb })).status).to.equal(201);
      // the model loaded and warm, as on a server that has embedded before
      const warm = await call('POST', `/v1/knowledge/${kb}/documents`, { filename: 'warm.txt', content: prose(2_000) });
      await waitFor(async () => (await call('GET', `/v1/knowledge/${kb}/documents/${String(warm.body.id)}`)).body.status === 'ready', {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: 'the warm-up document is ready',
      });
      const idle = await pingUntil(base, KEY, (() => {
        const until = Date.now() + 2_000;
        return () => Date.now() > until;
      })());

      const uploaded = await call('POST', `/v1/knowledge/${kb}/documents`, { filename: 'ledger.txt', content: prose(CHARS) });
      expect(uploaded.status).to.equal(202);
      let doc = uploaded.body as unknown as Doc;
      let settled = false;
      let sawProcessing = false;
      const started = Date.now();
      const watch = (async () => {
        while (!settled) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          doc = (await call('GET', `/v1/knowledge/${kb}/documents/${doc.id}`)).body as unknown as Doc;
          sawProcessing ||= doc.status === 'processing';
          settled = doc.status === 'ready' || doc.status === 'failed' || Date.now() - started > 200_000;
        }
      })();
      const busy = await pingUntil(base, KEY, () => settled);
      await watch;

      expect(doc.status, doc.error ?? '').to.equal('ready');
      expect(sawProcessing).to.equal(true);
      expect(doc.chunk_count).to.be.greaterThan(CHARS / 1_000);
      expect(busy.length, 'pings while the document was processed').to.be.greaterThan(100);
      const figures = `idle p99 ${p99(idle).toFixed(1)} ms; while processing ${busy.length} pings, p99 ${p99(busy).toFixed(1)} ms, max ${Math.max(...busy).toFixed(1)} ms; document ${((Date.now() - started) / 1000).toFixed(1)} s`;
      expect(p99(busy), figures).to.be.below(50);
    });
  });

  describe('a shutdown while a document is embedded', () => {
    let proc: CairnProcess | null = null;
    afterEach(async () => {
      await proc?.kill('SIGKILL');
      proc = null;
    });

    /**
     * Starts a server, uploads `documents` documents of `chars` characters each, sends SIGTERM once
     * `busy` says the model is at work on them, expects exit code 0, then starts the server again
     * and expects every document to end ready.
     */
    async function stopWhileEmbedding(
      { documents, chars, env: extra }: { documents: number; chars: number; env: Record<string, string> },
      busy: (proc: CairnProcess) => Promise<unknown>,
    ): Promise<void> {
      const port = await freePort();
      // embedded: the same DATA_DIR on both starts; production: the same database and queue prefix.
      // What is tested is a clean exit, however long the batch in hand takes on a loaded machine:
      // the shutdown's own limit (15 s by default, then a forced exit) is raised out of the way.
      const env = profileEnv({ LOG_LEVEL: 'info', PORT: String(port), SHUTDOWN_TIMEOUT_MS: '180000', ...extra });
      const keys = await spawnCairn('keys.ts', env, ['create', '--project', unique('stop')]);
      expect(await keys.exited, keys.output()).to.equal(0);
      const key = keys.output().split('\n').find((line) => line.startsWith('cairn_')) as string;
      const start = async (): Promise<CairnProcess> => {
        const started = await spawnCairn(isProduction ? 'start-worker.ts' : 'start.ts', env);
        await started.waitForOutput(/cairn started/, 60_000);
        return started;
      };
      proc = await start();
      const api = isProduction ? await spawnCairn('start-api.ts', env) : null;
      try {
        await api?.waitForOutput(/cairn started/, 60_000);
        const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
          const response = await fetch(`http://127.0.0.1:${port}${path}`, {
            method,
            headers: { authorization: token(key), 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return (await response.json()) as Record<string, unknown>;
        };
        const kb = unique('stop');
        await call('POST', '/v1/knowledge', { name: kb });
        const ids: string[] = [];
        for (let i = 0; i < documents; i += 1) ids.push(String((await call('POST', `/v1/knowledge/${kb}/documents`, { filename: `ledger-${i}.txt`, content: prose(chars, i) })).id));
        const statuses = async (): Promise<Doc[]> => Promise.all(ids.map(async (id) => (await call('GET', `/v1/knowledge/${kb}/documents/${id}`)) as unknown as Doc));
        await waitFor(async () => (await statuses()).some((d) => d.status === 'processing'), { timeoutMs: 60_000, intervalMs: 20, message: 'a document is being processed' });
        await busy(proc);
        const stopping = proc;
        const code = await stopping.kill('SIGTERM');
        expect(code, stopping.output().slice(-2_000)).to.equal(0);
        proc = await start();
        const done = await waitFor(
          async () => {
            const docs = await statuses();
            return docs.every((d) => d.status === 'ready' || d.status === 'failed') ? docs : null;
          },
          { timeoutMs: 180_000, intervalMs: 250, message: 'the documents were finished after the restart' },
        );
        for (const d of done) expect(d.status, d.error ?? '').to.equal('ready');
      } finally {
        await api?.kill('SIGKILL');
      }
    }

    it('exits cleanly (code 0) on SIGTERM, and the next start finishes the document', async () => {
      // the model is in the middle of a batch then (its first, loading the model, or a later one)
      await stopWhileEmbedding({ documents: 1, chars: 60_000, env: {} }, () => new Promise((resolve) => setTimeout(resolve, 1_500)));
    });

    it('exits cleanly (code 0) on SIGTERM while two model threads each run a batch with more queued, and the next start finishes the documents', async () => {
      // two documents of about 150 chunks each: more batches than threads, for many seconds
      await stopWhileEmbedding({ documents: 2, chars: 150_000, env: { LOCAL_EMBED_THREADS: '2' } }, (server) =>
        // once both threads have loaded the model and answered a batch, each has taken the next one
        waitFor(async () => (server.output().match(/local embedding model loaded/g) ?? []).length >= 2, {
          timeoutMs: 60_000,
          intervalMs: 20,
          message: 'the model loaded on both threads',
        }),
      );
    });
  });

  describe('documents over the text limit', () => {
    let t: TestRuntime;
    let auth: string;
    before(async () => {
      t = await startRuntime();
      auth = token((await newProject(t)).key);
    });
    after(() => t.close());

    it('refuses text over the limit at upload (JSON and file) and fails HTML whose text is over it, saying why; nothing is cut', async () => {
      const kb = unique('limits');
      expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb })).status).to.equal(201);
      const over = 'a'.repeat(DOCUMENT_LIMITS.maxTextChars - 9) + ' ledger.\n\n';
      expect(over.length).to.equal(DOCUMENT_LIMITS.maxTextChars + 1);

      const json = await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: 'big.txt', content: over });
      expect(json.status).to.equal(400);
      expect(json.body.code).to.equal('document_too_large');
      expect(json.body.detail).to.include('5,000,001 characters').and.include('5,000,000');

      const file = await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).attach('file', Buffer.from(over), 'big.md');
      expect(file.status).to.equal(400);
      expect(file.body.code).to.equal('document_too_large');

      // HTML: its text is known only once extracted
      const html = `<html><body><p>${'a'.repeat(DOCUMENT_LIMITS.maxTextChars)} and a last line.</p></body></html>`;
      const page = (await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: 'big.html', content: html, source_type: 'html' })).body as Doc;
      const failed = await waitFor(
        async () => {
          const d = (await t.http.get(`/v1/knowledge/${kb}/documents/${page.id}`).set('Authorization', auth)).body as Doc;
          return d.status === 'failed' || d.status === 'ready' ? d : null;
        },
        { timeoutMs: 120_000, intervalMs: 200, message: 'the HTML document settled' },
      );
      expect(failed.status).to.equal('failed');
      expect(failed.error).to.include('over the limit of 5,000,000');
      expect(failed.chunk_count).to.equal(0);
    });
  });

  describe('documents processed at once', () => {
    let t: TestRuntime;
    let auth: string;
    before(async () => {
      t = await startRuntime({ env: { WORKER_CONCURRENCY: '8' } });
      auth = token((await newProject(t)).key);
    });
    after(() => t.close());

    /** The latest deadlock InnoDB detected, or null (production only). */
    const latestDeadlock = async (): Promise<string | null> => {
      const db = knex({ client: 'mysql2', connection: TEST_DATABASE_URL });
      try {
        const [rows] = (await db.raw('SHOW ENGINE INNODB STATUS')) as [Array<{ Status: string }>];
        const status = rows[0]?.Status ?? '';
        const at = status.indexOf('LATEST DETECTED DEADLOCK');
        return at === -1 ? null : status.slice(at, status.indexOf('\nTRANSACTIONS\n', at));
      } finally {
        await db.destroy();
      }
    };

    it('takes eight documents of one base, uploaded together, all to ready without a deadlock on the chunks', async () => {
      const before = isProduction ? await latestDeadlock() : null;
      for (let round = 0; round < 3; round += 1) {
        const kb = unique('together');
        expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb, chunk_size: 200, chunk_overlap: 0 })).status).to.equal(201);
        const docs = await Promise.all(
          Array.from({ length: 8 }, async (_, i) => (await t.http.post(`/v1/knowledge/${kb}/documents`).set('Authorization', auth).send({ filename: `shelf-${i}.txt`, content: prose(500, i) })).body as Doc),
        );
        const done = await waitFor(
          async () => {
            const list = (await t.http.get(`/v1/knowledge/${kb}/documents`).set('Authorization', auth)).body.documents as Doc[];
            return list.every((d) => d.status === 'ready' || d.status === 'failed') ? list : null;
          },
          { timeoutMs: 120_000, intervalMs: 200, message: 'every document settled' },
        );
        expect(done.map((d) => d.status)).to.deep.equal(docs.map(() => 'ready'));
        expect(done.map((d) => d.error)).to.deep.equal(docs.map(() => null));
      }
      if (isProduction) {
        const after = await latestDeadlock();
        if (after !== before) expect(after ?? '').not.to.include('knowledge_chunks');
      }
    });
  });
});
