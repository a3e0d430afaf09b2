import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routesOf } from '../../api/app.js';
import net from 'node:net';
import { pino } from 'pino';
import { isProduction, newProject, startRuntime, TEST_DATABASE_URL, token, waitFor, type TestRuntime } from '../helpers.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

describe('operations endpoints', () => {
  let t: TestRuntime;
  let key: string;

  before(async () => {
    t = await startRuntime({ env: { ADMIN_TOKEN } });
    ({ key } = await newProject(t));
  });
  after(() => t.close());

  it('/healthz says the process is up', async () => {
    const res = await t.http.get('/healthz');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('/readyz checks every dependency of the profile', async () => {
    const res = await waitFor(async () => {
      const r = await t.http.get('/readyz');
      return r.status === 200 ? r : null;
    }, { message: 'ready' });
    const names = res.body.checks.map((c: { name: string }) => c.name);
    expect(names).to.include.members(['database', 'queue']);
    if (isProduction) expect(names).to.include('vectors');
    expect(res.body.checks.every((c: { ok: boolean }) => c.ok)).to.equal(true);
  });

  it('/metrics exposes request latency and queue depths in Prometheus format', async () => {
    await t.http.get('/v1/api-keys').set('Authorization', token(key));
    const res = await t.http.get('/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/text\/plain/);
    expect(res.text).to.match(/cairn_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/api-keys"[^}]*\}/);
    expect(res.text).to.match(/cairn_queue_jobs\{queue="maintenance",state="waiting"\} \d+/);
    expect(res.text).to.match(/cairn_outbox_pending \d+/);
  });

  it('counts extraction jobs (an add with infer) in /metrics like every other queue', async function () {
    this.timeout(90_000);
    const completed = async (): Promise<number> => {
      const text = (await t.http.get('/metrics')).text;
      return Number(/cairn_queue_jobs\{queue="extraction",state="completed"\} (\d+)/.exec(text)?.[1] ?? NaN);
    };
    const before = await completed();
    expect(before).to.be.a('number').and.not.NaN;
    const res = await t.http.post('/v3/memories/add/').set('Authorization', token(key)).send({ messages: [{ role: 'user', content: 'I keep bees.' }], user_id: 'metrics-user' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await waitFor(async () => (await completed()) > before, { timeoutMs: 30_000, message: 'the extraction job counted' });
  });

  it('labels requests that match no route as "unmatched", whatever their path', async () => {
    const odd = `/v1/api-keys/${Math.random().toString(36).slice(2)}`;
    expect((await t.http.put(odd).set('Authorization', token(key))).status).to.equal(405);
    const res = await t.http.get('/metrics');
    expect(res.text).not.to.include(odd);
    expect(res.text).to.match(/cairn_http_request_duration_seconds_count\{method="PUT",route="unmatched",status="405"\} \d+/);
  });

  describe('/openapi.json', () => {
    it('is a valid OpenAPI 3.1 document', async () => {
      const res = await t.http.get('/openapi.json');
      expect(res.status).to.equal(200);
      const result = await new Validator().validate(res.body);
      expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
      expect(result.valid).to.equal(true);
      expect(res.body.openapi).to.equal('3.1.0');
    });

    it('documents exactly the routes the app serves, and each documented route answers', async () => {
      const doc = (await t.http.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
      const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
      const served = routesOf(t.app).map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      expect(documented).to.have.members(served);
      for (const op of documented) {
        const [method, path] = op.split(' ') as [string, string];
        const res = await t.http[method.toLowerCase() as 'get'](path.replace(/\{[^}]+\}/g, 'x'));
        // Unauthenticated, a route answers 200, 401 or 403; only an unrouted path says "No route".
        expect(res.status, op).not.to.equal(405);
        expect(String(res.body?.detail ?? ''), op).not.to.match(/^No route/);
      }
    });

    it('enforces the request schemas it publishes', async () => {
      const doc = (await t.http.get('/openapi.json')).body as {
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { additionalProperties?: boolean } }> } }>>;
      };
      let checked = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const schema = op.requestBody?.content['application/json']?.schema;
          // a merge patch of a record's values is checked against the record's schema after merging
          if (!schema || op.requestBody?.content['application/merge-patch+json']) continue;
          // registry paths take an OIDC ID token, not the API key: registry.test.ts checks them with one
          if (path.startsWith('/projects/')) continue;
          expect(schema.additionalProperties, `${method} ${path}`).to.equal(false);
          const res = await t.http[method as 'post'](path.replace(/\{[^}]+\}/g, 'x'))
            .set('Authorization', token(key))
            .send({ not_a_documented_field: 1 });
          expect(res.status, `${method} ${path}`).to.equal(400);
          expect(res.body.errors.map((e: { path: string }) => e.path), `${method} ${path}`).to.include('/not_a_documented_field');
          checked += 1;
        }
      }
      expect(checked).to.be.at.least(2);
    });
  });

  describe('/admin/queues', () => {
    it('refuses callers without the admin token', async () => {
      expect((await t.http.get('/admin/queues')).status).to.equal(401);
      expect((await t.http.get('/admin/queues').set('Authorization', 'Bearer wrong-token-wrong-token')).status).to.equal(401);
      expect((await t.http.get('/admin/queues').set('Authorization', token(key))).status).to.equal(401);
    });

    it(isProduction ? 'serves Bull Board with the queues to the admin' : 'answers queue depths to the admin', async () => {
      const res = await t.http.get('/admin/queues').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect(res.status).to.equal(200);
      if (isProduction) {
        expect(res.text).to.match(/<html/i);
        const api = await t.http
          .get('/admin/queues/api/queues')
          .set('Authorization', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`);
        expect(api.status).to.equal(200);
        expect(api.body.queues.map((q: { name: string }) => q.name)).to.include('maintenance');
      } else {
        expect(res.body.driver).to.equal('in-process');
        expect(res.body.queues[0]).to.include({ queue: 'maintenance' });
      }
    });

    it('is disabled when ADMIN_TOKEN is unset', async () => {
      const plain = await startRuntime();
      try {
        const res = await plain.http.get('/admin/queues').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('forbidden');
      } finally {
        await plain.close();
      }
    });
  });
});

describe('access log', () => {
  let t: TestRuntime;
  let key: string;
  const lines: Array<{ level: number; msg: string; path?: string; status?: number }> = [];

  before(async () => {
    t = await startRuntime({ logger: pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) }) });
    ({ key } = await newProject(t));
  });
  after(() => t.close());

  it('logs /healthz and /readyz probes at debug, and other requests at info as before', async () => {
    await waitFor(async () => (await t.http.get('/readyz')).status === 200, { message: 'ready' });
    lines.length = 0;
    expect((await t.http.get('/healthz')).status).to.equal(200);
    expect((await t.http.get('/readyz/')).status).to.equal(200);
    expect((await t.http.get('/v1/ping').set('Authorization', token(key))).status).to.equal(200);
    const requests = lines.filter((l) => l.msg === 'request').map((l) => [l.path, l.level]);
    // pino's levels: 20 debug, 30 info
    expect(requests).to.deep.equal([
      ['/healthz', 20],
      ['/readyz', 20],
      ['/v1/ping', 30],
    ]);
  });
});

if (isProduction) {
  describe('dependency outage', () => {
    it('starts while Milvus is down, reports it in /readyz, and connects once Milvus is up', async function () {
      this.timeout(120_000);
      const { freePort, repoRoot } = await import('../helpers.js');
      const { spawnSync } = await import('node:child_process');
      const port = await freePort();
      const t = await startRuntime({ env: { MILVUS_ADDRESS: `127.0.0.1:${port}` } });
      try {
        const { key } = await newProject(t);
        expect((await t.http.get('/v1/api-keys').set('Authorization', token(key))).status).to.equal(200);
        const down = await t.http.get('/readyz');
        expect(down.status).to.equal(503);
        expect(down.body.checks.find((c: { name: string }) => c.name === 'vectors').ok).to.equal(false);

        const started = spawnSync(`${repoRoot}/scripts/milvus-lite.sh`, ['start', String(port)], { encoding: 'utf8' });
        expect(started.status, started.stderr).to.equal(0);
        await waitFor(async () => (await t.http.get('/readyz')).status === 200, { timeoutMs: 30_000, message: 'ready once Milvus is up' });
      } finally {
        await t.close();
        spawnSync(`${repoRoot}/scripts/milvus-lite.sh`, ['stop', String(port)]);
      }
    });

    it('answers 503 with Retry-After, not 500, when the database becomes unreachable', async function () {
      this.timeout(30_000);
      // The runtime reaches MariaDB through a proxy this test owns; closing it is a real outage.
      const target = new URL(TEST_DATABASE_URL);
      const sockets = new Set<net.Socket>();
      const proxy = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 3306), target.hostname);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = (): void => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop);
        upstream.on('error', drop);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const proxied = new URL(TEST_DATABASE_URL);
      proxied.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      const t = await startRuntime({ env: { DATABASE_URL: proxied.toString() } });
      try {
        const { key } = await newProject(t);
        expect((await t.http.get('/v1/api-keys').set('Authorization', token(key))).status).to.equal(200);
        proxy.close();
        for (const socket of sockets) socket.destroy();
        const res = await t.http.get('/v1/api-keys').set('Authorization', token(key));
        expect(res.status).to.equal(503);
        expect(res.headers['retry-after']).to.be.a('string');
        expect(res.body.code).to.equal('service_unavailable');
        const ready = await t.http.get('/readyz');
        expect(ready.status).to.equal(503);
        expect(ready.body.checks.find((c: { name: string }) => c.name === 'database').ok).to.equal(false);
      } finally {
        await t.close();
      }
    });
  });
}
