import http from 'node:http';
import { expect } from 'chai';
import { json, serve, type Seen, type TestServer } from '../http-server.js';
import { MemoryToolRateLimiter, RedisToolRateLimiter, type ToolRateLimiter } from '../../db/tool-rate-limiter.js';
import { ToolRunner, type ToolDefinition, type ToolOutcome, type ToolRunnerOptions } from '../../core/agents/tool-runner.js';
import { loadConfig, type PrivateHostAllowance } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';
import { freePort, PROFILE, TEST_REDIS_URL, unique } from '../helpers.js';

/** What the operator's TOOL_ALLOW_PRIVATE_HOSTS=`raw` allows, read the way the server reads it. */
const operatorAllows = (raw: string): PrivateHostAllowance => loadConfig({ TOOL_ALLOW_PRIVATE_HOSTS: raw }).toolAllowPrivateHosts;

/** A tool on the local test server (127.0.0.1), which the runners below are allowed to reach unless said otherwise. */
const tool = (overrides: Partial<ToolDefinition> & Pick<ToolDefinition, 'http_url'>): ToolDefinition => ({
  id: unique('tool'),
  name: 'lookup',
  description: 'Looks something up.',
  http_method: 'GET',
  parameters: { type: 'object', properties: {} },
  auth_header: 'Authorization',
  secret_ref: null,
  rate_per_min: 60,
  allowed_hosts: ['127.0.0.1'],
  hosts_explicit: true,
  ...overrides,
});

describe(`tool runner (${PROFILE})`, function () {
  this.timeout(20_000);
  const servers: TestServer[] = [];
  const closers: Array<{ close(): Promise<void> }> = [];
  let runner: ToolRunner;

  const server = async (handler: (req: Seen, res: http.ServerResponse) => void): Promise<TestServer> => {
    const s = await serve(handler);
    servers.push(s);
    return s;
  };
  const runnerWith = (options: ToolRunnerOptions, limiter: ToolRateLimiter = new MemoryToolRateLimiter()): ToolRunner => {
    const r = new ToolRunner(limiter, { privateHosts: operatorAllows('127.0.0.1'), ...options });
    closers.push(r, limiter);
    return r;
  };
  const run = (t: ToolDefinition, args: Record<string, unknown> = {}, secret: string | null = null, using = runner): Promise<ToolOutcome> =>
    using.run({ projectId: 'p1', agentId: 'a1', tool: t, args, secret });

  /** A runner on a server whose operator allows no private address (TOOL_ALLOW_PRIVATE_HOSTS unset). */
  let bare: ToolRunner;

  before(() => {
    runner = runnerWith({ timeoutMs: 3_000 });
    bare = runnerWith({ timeoutMs: 3_000, privateHosts: operatorAllows('') });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(async () => {
    await Promise.all(closers.map((c) => c.close()));
  });

  describe('requests', () => {
    it('fills path templates and sends the other arguments of a GET as query string', async () => {
      const s = await server((_req, res) => json(res, 200, { order: 'shipped' }));
      const outcome = await run(tool({ http_url: `${s.base}/orders/{order_id}?v=2` }), {
        order_id: 'a b/c?',
        tag: ['red', 'blue'],
        filter: { since: 2024 },
        limit: 3,
        skipped: null,
      });
      expect(outcome).to.include({ status: 'ok', result: '{"order":"shipped"}', http_status: 200 });
      expect(s.requests).to.have.length(1);
      const seen = s.requests[0] as Seen;
      const url = new URL(seen.url, s.base);
      expect(url.pathname).to.equal('/orders/a%20b%2Fc%3F');
      expect(url.searchParams.getAll('tag')).to.deep.equal(['red', 'blue']);
      expect(url.searchParams.get('filter')).to.equal('{"since":2024}');
      expect(url.searchParams.get('limit')).to.equal('3');
      expect(url.searchParams.get('v')).to.equal('2');
      expect(url.searchParams.has('order_id')).to.equal(false);
      expect(url.searchParams.has('skipped')).to.equal(false);
      expect(seen.headers.accept).to.equal('application/json, text/plain;q=0.9, */*;q=0.1');
      expect(seen.headers['user-agent']).to.equal('Cairn-Tool/1');
      expect(seen.headers.authorization).to.equal(undefined);
    });

    it('refuses a call with a missing path parameter without sending anything', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const outcome = await run(tool({ http_url: `${s.base}/orders/{order_id}` }), { other: 1 });
      expect(outcome.status).to.equal('error');
      expect(outcome.result).to.match(/missing path parameter order_id/);
      expect(s.requests).to.have.length(0);
    });

    it('sends the other arguments of a POST as a JSON body', async () => {
      const s = await server((req, res) => json(res, 201, { received: JSON.parse(req.body) as unknown }));
      const outcome = await run(tool({ http_url: `${s.base}/orders/{order_id}/notes`, http_method: 'post' }), {
        order_id: 42,
        text: 'late delivery',
        tags: ['a'],
      });
      expect(outcome).to.include({ status: 'ok', http_status: 201 });
      expect(JSON.parse(outcome.result)).to.deep.equal({ received: { text: 'late delivery', tags: ['a'] } });
      const seen = s.requests[0] as Seen;
      expect(seen.method).to.equal('POST');
      expect(seen.url).to.equal('/orders/42/notes');
      expect(seen.headers['content-type']).to.equal('application/json');
    });

    it('sends the secret in the auth header and redacts it from what the server echoes', async () => {
      const secret = 'Bearer sk-live-8c1f2e9d77';
      const s = await server((req, res) => json(res, req.url === '/fail' ? 500 : 200, { headers: req.headers, token: 'sk-live-8c1f2e9d77' }));
      const ok = await run(tool({ http_url: `${s.base}/echo`, auth_header: 'X-Api-Key' }), {}, secret);
      expect(ok.status).to.equal('ok');
      expect((s.requests[0] as Seen).headers['x-api-key']).to.equal(secret);
      expect(ok.result).to.not.include('sk-live-8c1f2e9d77');
      expect(ok.result).to.include('"x-api-key":"[secret]"');
      expect(ok.result).to.include('"token":"[secret]"');

      const failed = await run(tool({ http_url: `${s.base}/fail` }), {}, secret);
      expect(failed).to.include({ status: 'error', http_status: 500 });
      expect(failed.result).to.match(/^HTTP 500: /);
      expect(failed.result).to.include('"authorization":"[secret]"');
      expect(failed.result).to.not.include('sk-live-8c1f2e9d77');
    });
  });

  describe('hosts and addresses', () => {
    it('denies a host that is not in allowed_hosts without any traffic', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const outcome = await run(tool({ http_url: `${s.base}/x`, allowed_hosts: ['api.example.com', '*.example.com'] }));
      expect(outcome.status).to.equal('denied');
      expect(outcome.result).to.match(/not in the tool's allowed_hosts/);
      expect(s.requests).to.have.length(0);
    });

    it('matches *.example.com entries against subdomains only', async () => {
      const apex = await run(tool({ http_url: 'http://localhost:1/', allowed_hosts: ['*.localhost'], hosts_explicit: false }));
      expect(apex.status).to.equal('denied');
      expect(apex.result).to.match(/not in the tool's allowed_hosts/);
      // The subdomain passes the allow-list; what happens next (no such name, or loopback) is not about the list.
      const sub = await run(tool({ http_url: 'http://api.localhost:1/', allowed_hosts: ['*.localhost'], hosts_explicit: false }));
      expect(sub.status).to.be.oneOf(['error', 'denied']);
      expect(sub.result).to.not.match(/allowed_hosts \(/);
    });

    it('denies loopback and metadata addresses a tool lists itself when the operator allows none, sending nothing', async () => {
      const s = await server((_req, res) => json(res, 200, { internal: true }));
      const cases: Array<[string, string[], RegExp]> = [
        [`http://127.0.0.1:${s.port}/x`, ['127.0.0.1'], /address 127\.0\.0\.1 is loopback/],
        [`http://localhost:${s.port}/x`, ['localhost'], /of localhost is loopback/],
        [`http://[::ffff:127.0.0.1]:${s.port}/x`, ['[::ffff:7f00:1]'], /is loopback/],
        [`http://2130706433:${s.port}/x`, ['127.0.0.1'], /127\.0\.0\.1 is loopback/],
        [`http://0x7f.1:${s.port}/x`, ['127.0.0.1'], /127\.0\.0\.1 is loopback/],
        [`http://127.1:${s.port}/x`, ['127.0.0.1'], /127\.0\.0\.1 is loopback/],
        ['http://169.254.169.254/latest/meta-data', ['169.254.169.254'], /169\.254\.169\.254 is link-local, a cloud metadata address/],
        ['http://metadata.google.internal/computeMetadata/v1/', ['metadata.google.internal'], /cloud metadata service/],
      ];
      for (const [url, allowed, pattern] of cases) {
        for (const explicit of [true, false]) {
          const outcome = await run(tool({ http_url: url, allowed_hosts: allowed, hosts_explicit: explicit }), {}, null, bare);
          expect(outcome.status, `${url} ${explicit}`).to.equal('denied');
          expect(outcome.result, url).to.match(pattern).and.include('TOOL_ALLOW_PRIVATE_HOSTS');
          expect(outcome.duration_ms, url).to.be.below(1_000);
        }
      }
      expect(s.requests).to.have.length(0);
    });

    it('calls a loopback address or name the operator allows', async () => {
      const s = await server((_req, res) => json(res, 200, { internal: true }));
      const byAddress = await run(tool({ http_url: `http://127.0.0.1:${s.port}/x`, allowed_hosts: ['127.0.0.1'], hosts_explicit: false }));
      expect(byAddress).to.include({ status: 'ok', result: '{"internal":true}' });
      // a numeric form is the same address, and the tool lists that address
      const numeric = await run(tool({ http_url: `http://2130706433:${s.port}/x`, allowed_hosts: ['127.0.0.1'] }));
      expect(numeric).to.include({ status: 'ok' });
      const named = runnerWith({ privateHosts: operatorAllows('localhost') });
      const byName = await run(tool({ http_url: `http://localhost:${s.port}/x`, allowed_hosts: ['localhost'] }), {}, null, named);
      expect(byName).to.include({ status: 'ok', result: '{"internal":true}' });
      // the name is allowed, not the address: the literal stays refused
      const literal = await run(tool({ http_url: `http://127.0.0.1:${s.port}/x`, allowed_hosts: ['127.0.0.1'] }), {}, null, named);
      expect(literal.status).to.equal('denied');
      expect(s.requests).to.have.length(3);
    });

    it('still denies what the operator allows when the tool does not list it (allowed_hosts only narrows)', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      for (const url of [`http://127.0.0.1:${s.port}/x`, `http://2130706433:${s.port}/x`, `http://localhost:${s.port}/x`]) {
        const outcome = await run(tool({ http_url: url, allowed_hosts: ['api.example.com'] }));
        expect(outcome.status, url).to.equal('denied');
        expect(outcome.result, url).to.match(/is not in the tool's allowed_hosts/);
      }
      expect(s.requests).to.have.length(0);
    });

    it('denies a host the operator allows that resolves to an address it does not', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const other = runnerWith({ privateHosts: operatorAllows('10.0.0.0/8') });
      const outcome = await run(tool({ http_url: `http://localhost:${s.port}/x`, allowed_hosts: ['localhost'] }), {}, null, other);
      expect(outcome.status).to.equal('denied');
      expect(outcome.result).to.match(/of localhost is loopback/);
      expect(s.requests).to.have.length(0);
    });

    it('keeps the metadata address refused under a network that covers it', async () => {
      const wide = runnerWith({ privateHosts: operatorAllows('169.254.0.0/16,127.0.0.1') });
      const outcome = await run(tool({ http_url: 'http://169.254.169.254/latest/meta-data', allowed_hosts: ['169.254.169.254'] }), {}, null, wide);
      expect(outcome.status).to.equal('denied');
      expect(outcome.result).to.match(/169\.254\.169\.254 is link-local, a cloud metadata address/);
      expect(outcome.duration_ms).to.be.below(1_000);
    });

    it('refuses IPv4-mapped, unique-local and private literal addresses', async () => {
      const cases: Array<[string, RegExp]> = [
        ['http://[::ffff:169.254.169.254]/latest', /link-local/],
        ['http://[::ffff:127.0.0.2]:1/', /loopback/],
        ['http://[fd00:ec2::254]/latest/meta-data', /unique-local/],
        ['http://10.1.2.3/', /private/],
        ['http://100.64.0.1/', /carrier-grade NAT/],
        ['http://100.100.100.200/latest/meta-data', /cloud metadata address/],
        ['http://0.0.0.0:1/', /unspecified/],
        ['http://[::1]:1/', /loopback/],
        ['http://224.0.0.1/', /multicast/],
        ['http://167772161/', /10\.0\.0\.1 is private/],
        ['http://0xa9.0xfe.0xa9.0xfe/', /169\.254\.169\.254 is link-local/],
      ];
      for (const [url, pattern] of cases) {
        const host = new URL(url).hostname;
        const outcome = await run(tool({ http_url: url, allowed_hosts: [host], hosts_explicit: true }));
        expect(outcome.status, url).to.equal('denied');
        expect(outcome.result, url).to.match(pattern);
      }
    });

    it('refuses schemes other than http and https', async () => {
      const outcome = await run(tool({ http_url: 'file:///etc/passwd', allowed_hosts: [''] }));
      expect(outcome.status).to.equal('denied');
    });
  });

  describe('redirects', () => {
    it('follows a redirect on the same origin with the secret', async () => {
      const s = await server((req, res) => {
        if (req.url === '/start') {
          res.writeHead(302, { location: '/final' });
          res.end();
        } else json(res, 200, { at: req.url });
      });
      const outcome = await run(tool({ http_url: `${s.base}/start` }), {}, 'Token abc123');
      expect(outcome).to.include({ status: 'ok', result: '{"at":"/final"}' });
      expect(s.requests.map((r) => r.headers.authorization)).to.deep.equal(['Token abc123', 'Token abc123']);
    });

    it('does not send the secret to another origin it is redirected to', async () => {
      const other = await server((req, res) => json(res, 200, { auth: req.headers.authorization ?? null }));
      const s = await server((_req, res) => {
        res.writeHead(307, { location: `${other.base}/landed` });
        res.end();
      });
      const outcome = await run(tool({ http_url: `${s.base}/start` }), {}, 'Token abc123');
      expect(outcome).to.include({ status: 'ok', result: '{"auth":null}' });
      expect((s.requests[0] as Seen).headers.authorization).to.equal('Token abc123');
      expect(other.requests).to.have.length(1);
    });

    it('denies a redirect to the metadata address, even when it is listed', async () => {
      const s = await server((_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' });
        res.end();
      });
      const outcome = await run(tool({ http_url: `${s.base}/start`, allowed_hosts: ['127.0.0.1', '169.254.169.254'] }));
      expect(outcome.status).to.equal('denied');
      expect(outcome.result).to.match(/169\.254\.169\.254 is link-local/);
      expect(outcome.duration_ms).to.be.below(1_000);
      expect(s.requests).to.have.length(1);
    });

    it('denies a redirect to a private address the tool lists but the operator does not allow', async () => {
      // 127.0.0.2 is loopback too, but only 127.0.0.1 is allowed
      const hidden = http.createServer((_req, res) => res.end('internal'));
      let hits = 0;
      hidden.on('request', () => (hits += 1));
      await new Promise<void>((resolve) => hidden.listen(0, '127.0.0.2', resolve));
      const hiddenPort = (hidden.address() as { port: number }).port;
      try {
        for (const target of [`http://127.0.0.2:${hiddenPort}/`, `http://[::ffff:127.0.0.2]:${hiddenPort}/`, `http://2130706434:${hiddenPort}/`]) {
          const s = await server((_req, res) => {
            res.writeHead(302, { location: target });
            res.end();
          });
          const outcome = await run(tool({ http_url: `${s.base}/start`, allowed_hosts: ['127.0.0.1', '127.0.0.2', '[::ffff:7f00:2]'] }));
          expect(outcome.status, target).to.equal('denied');
          expect(outcome.result, target).to.match(/^redirected: /).and.match(/is loopback/);
          expect(s.requests, target).to.have.length(1);
        }
        expect(hits).to.equal(0);
      } finally {
        await new Promise((resolve) => hidden.close(resolve));
      }
    });

    it('denies a redirect to a host that is not listed', async () => {
      const s = await server((_req, res) => {
        res.writeHead(301, { location: 'https://attacker.example.net/collect' });
        res.end();
      });
      const outcome = await run(tool({ http_url: `${s.base}/start` }));
      expect(outcome.status).to.equal('denied');
      expect(outcome.result).to.match(/attacker\.example\.net is not in the tool's allowed_hosts/);
      expect(s.requests).to.have.length(1);
    });

    it('stops after maxRedirects', async () => {
      const s = await server((req, res) => {
        res.writeHead(302, { location: `${req.url}x` });
        res.end();
      });
      const outcome = await run(tool({ http_url: `${s.base}/r` }));
      expect(outcome.status).to.equal('error');
      expect(outcome.result).to.match(/more than 3 redirects/);
      expect(s.requests).to.have.length(4);
    });
  });

  describe('limits', () => {
    it('times out when the server does not answer', async () => {
      const s = await server(() => undefined);
      const quick = runnerWith({ timeoutMs: 300 });
      const outcome = await run(tool({ http_url: `${s.base}/slow` }), {}, null, quick);
      expect(outcome.status).to.equal('timeout');
      expect(outcome.duration_ms).to.be.below(2_000);
    });

    it('times out when the body never ends', async () => {
      const s = await server((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      });
      const quick = runnerWith({ timeoutMs: 300 });
      const outcome = await run(tool({ http_url: `${s.base}/trickle` }), {}, null, quick);
      expect(outcome.status).to.equal('timeout');
    });

    it('refuses a response larger than maxResponseBytes', async () => {
      const s = await server((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 10; i += 1) res.write('x'.repeat(1_000));
        res.end();
      });
      const small = runnerWith({ maxResponseBytes: 4_096 });
      const outcome = await run(tool({ http_url: `${s.base}/big` }), {}, null, small);
      expect(outcome).to.include({ status: 'error', result: 'response larger than 4096 bytes' });
    });

    it('truncates a long result with a marker', async () => {
      const text = 'abcdefghij'.repeat(100);
      const s = await server((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(text);
      });
      const short = runnerWith({ maxResultChars: 100 });
      const outcome = await run(tool({ http_url: `${s.base}/long` }), {}, null, short);
      expect(outcome.status).to.equal('ok');
      expect(outcome.result).to.equal(`${text.slice(0, 100)}… [truncated, 1000 chars]`);
    });

    it('reports a non-2xx answer as an error with its status and body', async () => {
      const s = await server((_req, res) => json(res, 404, { error: 'no such order' }));
      const outcome = await run(tool({ http_url: `${s.base}/orders/9` }));
      expect(outcome).to.deep.include({ status: 'error', http_status: 404, result: 'HTTP 404: {"error":"no such order"}' });
    });

    it('reports a refused connection as a short error', async () => {
      const port = await freePort();
      const outcome = await run(tool({ http_url: `http://127.0.0.1:${port}/` }), {}, 'Bearer never-shown');
      expect(outcome.status).to.equal('error');
      expect(outcome.result).to.match(/connection refused \(ECONNREFUSED\)/);
      expect(outcome.result).to.not.include('never-shown');
    });
  });

  describe('rate limits', () => {
    it('refuses the third call when the tool allows two per minute (in memory)', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const t = tool({ http_url: `${s.base}/r`, rate_per_min: 2 });
      const limited = runnerWith({});
      const outcomes = [await run(t, {}, null, limited), await run(t, {}, null, limited), await run(t, {}, null, limited)];
      expect(outcomes.map((o) => o.status)).to.deep.equal(['ok', 'ok', 'rate_limited']);
      expect(s.requests).to.have.length(2);
      // Another agent using the same tool has its own budget.
      const other = await limited.run({ projectId: 'p1', agentId: 'a2', tool: t, args: {}, secret: null });
      expect(other.status).to.equal('ok');
    });

    it('shares one budget between two processes through Redis', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const t = tool({ http_url: `${s.base}/r`, rate_per_min: 2 });
      const prefix = unique('tool-rate');
      const first = runnerWith({}, new RedisToolRateLimiter(TEST_REDIS_URL, prefix));
      const second = runnerWith({}, new RedisToolRateLimiter(TEST_REDIS_URL, prefix));
      const outcomes = [await run(t, {}, null, first), await run(t, {}, null, second), await run(t, {}, null, first), await run(t, {}, null, second)];
      expect(outcomes.map((o) => o.status)).to.deep.equal(['ok', 'ok', 'rate_limited', 'rate_limited']);
      expect(s.requests).to.have.length(2);
    });

    it('fails closed with a 503 when Redis does not answer', async () => {
      const s = await server((_req, res) => json(res, 200, {}));
      const limiter = new RedisToolRateLimiter('redis://127.0.0.1:1', unique('tool-rate'));
      const down = runnerWith({}, limiter);
      let taken: unknown;
      try {
        await limiter.take('p:a:t', 5);
      } catch (err) {
        taken = err;
      }
      expect(taken).to.be.instanceOf(AppError);
      expect(taken).to.include({ status: 503, code: 'service_unavailable' });
      let thrown: unknown;
      try {
        await run(tool({ http_url: `${s.base}/r` }), {}, null, down);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(AppError);
      expect((thrown as AppError).status).to.equal(503);
      expect(s.requests).to.have.length(0);
    });
  });
});
