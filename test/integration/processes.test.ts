import { expect } from 'chai';
import supertest from 'supertest';
import { buildDist, freePort, isProduction, profileEnv, spawnCairn, token, unique, waitFor } from '../helpers.js';

describe('processes', function () {
  this.timeout(60_000);

  it('refuses to start with every bad variable named', async () => {
    const proc = await spawnCairn('start.ts', {
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'postgres://x',
      SECRETS_KEY: 'short',
    });
    const code = await proc.exited;
    expect(code).to.equal(78);
    const output = proc.output();
    for (const name of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'SECRETS_KEY', 'REDIS_URL', 'MILVUS_ADDRESS']) {
      expect(output, name).to.include(name);
    }
  });

  it('`npm run keys -- create` prints a key that the server accepts, then lists it', async () => {
    const env = profileEnv();
    const project = unique('cli');
    const create = await spawnCairn('keys.ts', env, ['create', '--project', project, '--name', 'deploy']);
    expect(await create.exited).to.equal(0);
    const key = /cairn_[A-Za-z0-9_-]+/.exec(create.output())?.[0];
    expect(key).to.be.a('string');

    const port = await freePort();
    const server = await spawnCairn(isProduction ? 'start-api.ts' : 'start.ts', { ...env, LOG_LEVEL: 'info', PORT: String(port) });
    try {
      await server.waitForOutput(/cairn started/);
      const res = await supertest(`http://127.0.0.1:${port}`).get('/v1/api-keys').set('Authorization', token(key as string));
      expect(res.status).to.equal(200);
      expect(res.body.api_keys[0].name).to.equal('deploy');
    } finally {
      await server.kill();
    }
    const list = await spawnCairn('keys.ts', env, ['list', '--project', project]);
    expect(await list.exited).to.equal(0);
    expect(list.output()).to.include('deploy');
    expect(list.output()).not.to.include(key as string);

    const usage = await spawnCairn('keys.ts', env, ['create']);
    expect(await usage.exited).to.equal(2);
    expect(usage.output()).to.include('Usage');
  });

  if (!isProduction) {
    it('`npm start` with nothing configured serves the API, prints a first key, and shuts down cleanly', async () => {
      const env = profileEnv({ LOG_LEVEL: 'info' });
      const port = await freePort();
      const proc = await spawnCairn('start.ts', { DATA_DIR: env.DATA_DIR as string, PORT: String(port) });
      try {
        const [, key] = await proc.waitForOutput(/^\s+(cairn_[A-Za-z0-9_-]+)$/m);
        await proc.waitForOutput(/cairn started/);
        const api = supertest(`http://127.0.0.1:${port}`);
        expect((await api.get('/v1/api-keys').set('Authorization', token(key as string))).status).to.equal(200);
        const probe = await api.post('/v1/probes').set('Authorization', token(key as string)).send({});
        await waitFor(async () => (await api.get(`/v1/probes/${probe.body.id}`).set('Authorization', token(key as string))).body.status === 'done');
      } finally {
        expect(await proc.kill('SIGTERM')).to.equal(0);
      }
    });

    it('the compiled build runs without tsx: its document, language model and embedding threads start from dist/', async () => {
      await buildDist();
      const key = `cairn_${unique('compiled')}-abcdef`;
      const port = await freePort();
      const proc = await spawnCairn('start.ts', profileEnv({ BOOTSTRAP_API_KEY: key, LOG_LEVEL: 'info', PORT: String(port) }), [], { compiled: true });
      try {
        await proc.waitForOutput(/cairn started/);
        const api = supertest(`http://127.0.0.1:${port}`);
        // a memory with inference: facts picked on a language model thread, embedded on the model thread
        const added = await api
          .post('/v3/memories/add/')
          .set('Authorization', token(key))
          .send({ messages: [{ role: 'user', content: 'I am allergic to peanuts.' }], user_id: 'compiled' });
        expect(added.status).to.equal(200);
        expect(added.body.results[0].memory).to.match(/peanuts/);
        await waitFor(async () => {
          const res = await api.post('/v3/memories/search/').set('Authorization', token(key)).send({ query: 'food allergy', filters: { user_id: 'compiled' } });
          return res.body.results?.[0]?.memory?.includes('peanuts') ? res : null;
        });
        // a document read and cut into chunks on a reader thread
        expect((await api.post('/v1/knowledge').set('Authorization', token(key)).send({ name: 'compiled' })).status).to.equal(201);
        const doc = await api
          .post('/v1/knowledge/compiled/documents')
          .set('Authorization', token(key))
          .send({ filename: 'boiler.html', source_type: 'html', content: '<h1>Boiler</h1><p>Keep the pressure between 1 and 2 bar.</p>' });
        expect(doc.status).to.equal(202);
        const ready = await waitFor(async () => {
          const res = await api.get(`/v1/knowledge/compiled/documents/${doc.body.id}`).set('Authorization', token(key));
          return res.body.status === 'ready' || res.body.status === 'failed' ? res.body : null;
        });
        expect(ready.status, ready.error).to.equal('ready');
        expect(proc.output()).not.to.match(/tsx/);
      } finally {
        expect(await proc.kill('SIGTERM')).to.equal(0);
      }
    });
  } else {
    it('`start:api` and `start:worker` run apart against MariaDB, Redis and Milvus', async () => {
      const bootstrap = `bootstrap-${unique('k')}-abcdef`;
      const env = profileEnv({ BOOTSTRAP_API_KEY: bootstrap, LOG_LEVEL: 'info' });
      const port = await freePort();
      const apiProc = await spawnCairn('start-api.ts', { ...env, PORT: String(port) });
      const workerProc = await spawnCairn('start-worker.ts', env);
      try {
        await apiProc.waitForOutput(/cairn started/);
        await workerProc.waitForOutput(/cairn started/);
        const api = supertest(`http://127.0.0.1:${port}`);
        // Readiness is probed until true, as an orchestrator would: the first Milvus connection takes a moment.
        const ready = await waitFor(async () => {
          const res = await api.get('/readyz');
          return res.status === 200 ? res : null;
        }, { timeoutMs: 20_000, message: 'start:api ready' });
        expect(ready.body.checks.map((c: { name: string }) => c.name)).to.have.members(['database', 'queue', 'vectors', 'embedder']);
        const probe = await api.post('/v1/probes').set('Authorization', token(bootstrap)).send({});
        expect(probe.status).to.equal(202);
        const done = await waitFor(async () => {
          const p = (await api.get(`/v1/probes/${probe.body.id}`).set('Authorization', token(bootstrap))).body;
          return p.status === 'done' ? p : null;
        });
        expect(done.processed_by).to.include(String(workerProc.child.pid));
      } finally {
        expect(await apiProc.kill('SIGTERM')).to.equal(0);
        expect(await workerProc.kill('SIGTERM')).to.equal(0);
      }
    });

    it('`start:api` refuses to run on an unmigrated database', async () => {
      const url = new URL(profileEnv().DATABASE_URL as string);
      url.pathname = `/${unique('cairn_empty').replace('-', '_')}`;
      const { ensureMysqlDatabase, createDatabase } = await import('../../db/knex.js');
      await ensureMysqlDatabase(url.toString());
      const proc = await spawnCairn('start-api.ts', { ...profileEnv(), DATABASE_URL: url.toString(), PORT: String(await freePort()) });
      try {
        expect(await proc.exited).to.equal(1);
        expect(proc.output()).to.match(/npm run db:migrate/);
      } finally {
        const db = createDatabase({ databaseUrl: url.toString(), dataDir: '' });
        await db.raw('DROP DATABASE IF EXISTS ??', [url.pathname.slice(1)]);
        await db.destroy();
      }
    });
  }
});
