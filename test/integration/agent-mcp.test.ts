import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { json, serve, type TestServer } from '../http-server.js';
import { freePort, isProduction, newProject, PROFILE, secretsKey, startRuntime, token, unique, useLoggedApi, useProjectRuntime, type TestRuntime } from '../helpers.js';
import { mcpServer, type TestMcpServer } from '../mcp-server.js';
import { fakeProvider, openaiChatAnswer, type Answer, type FakeProvider, type Received } from '../provider-server.js';

// Agents' MCP servers through the API alone: CRUD, tools listed and called over Streamable HTTP
// against a real SDK server, and every guard HTTP tools have (allow-lists, tool policy, rate
// limits, secrets, timeout, size cap, host rules and the operator's private-address rule).

interface ToolCallTrace {
  tool: string;
  arguments: string;
  result: string;
  status: string;
  duration_ms: number;
}

interface ChatBody {
  run_id: string;
  message: { role: string; content: string };
  trace: { available_tools: string[]; tool_calls: ToolCallTrace[]; errors: Array<{ where: string; message: string }> };
}

const ALL_TOOLS = ['get_order', 'show_headers', 'huge_report', 'slow_invoice', 'refund_payment'];
/** An OpenAI completion asking for `names` (no arguments), or answering with text when there are none. */
const openaiReply = (names: string[], content = 'Done.'): Answer =>
  names.length === 0
    ? openaiChatAnswer({ content })
    : openaiChatAnswer({ content: null, tool_calls: names.map((name, i) => ({ id: `call_${i}`, type: 'function', function: { name, arguments: '{}' } })) }, { finishReason: 'tool_calls' });
const offeredIn = (request: Received): string[] => ((request.body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);
const errorsOf = (reply: ChatBody): string => reply.trace.errors.map((e) => e.message).join('\n');

describe(`agent MCP servers (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  let mcp: TestMcpServer;
  let model: FakeProvider;
  const behaviours = new Map<string, (request: Received, count: number) => Answer>();
  const servers: TestServer[] = [];

  before(async () => {
    mcp = await mcpServer();
    model = await fakeProvider((request) => {
      const name = String(request.body.model);
      const behaviour = behaviours.get(name);
      if (!behaviour) return { status: 404, body: { error: { message: `no model ${name}` } } };
      return behaviour(request, model.received.filter((r) => r.body.model === name).length);
    });
    // the MCP server listens on 127.0.0.1, which the operator must allow
    t = await startRuntime({
      env: { SECRETS_KEY: secretsKey(), OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-fake-provider', TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1', TOOL_TIMEOUT_MS: '2000' },
    });
    auth = token((await newProject(t)).key);
  });
  after(async () => {
    await t?.close();
    await mcp?.close();
    await model?.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  const post = (path: string, body: object, via = t, as = auth) => via.http.post(path).set('Authorization', as).send(body);
  const patch = (path: string, body: object) => t.http.patch(path).set('Authorization', auth).send(body);
  const get = (path: string) => t.http.get(path).set('Authorization', auth);
  const fakeModel = (behaviour: (request: Received, count: number) => Answer): { model: string; name: string } => {
    const name = unique('fake');
    behaviours.set(name, behaviour);
    return { model: `openai/${name}`, name };
  };

  /** An agent (unique name) with an MCP server named `shop` at `url` (default: the test server). */
  async function agentWith(server: Record<string, unknown> = {}, agent: Record<string, unknown> = {}, via = t, as = auth): Promise<string> {
    const name = unique('agent');
    const created = await post('/v1/agents', { name, ...agent }, via, as);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const added = await post(`/v1/agents/${name}/mcp-servers`, { name: 'shop', url: mcp.url, ...server }, via, as);
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    return name;
  }

  async function chat(agent: string, content: string, via = t, as = auth): Promise<ChatBody> {
    const res = await post(`/v1/agents/${agent}/chat`, { messages: [{ role: 'user', content }] }, via, as);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as ChatBody;
  }

  describe('CRUD', () => {
    it('attaches a server with its defaults, shows it on the agent, and changes and detaches it', async () => {
      const agent = unique('agent');
      expect((await post('/v1/agents', { name: agent })).status).to.equal(201);
      const created = await post(`/v1/agents/${agent}/mcp-servers`, { name: 'shop', url: 'https://mcp.example.com/mcp' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ name: 'shop', url: 'https://mcp.example.com/mcp', auth_header: 'Authorization', secret_ref: null, tools: null, rate_per_min: 60 });
      expect(created.body.allowed_hosts).to.deep.equal(['mcp.example.com']);
      expect(created.body.id).to.be.a('string');

      const shown = await get(`/v1/agents/${agent}`);
      expect(shown.body.mcp_servers).to.deep.equal([created.body]);
      expect(shown.body.tools).to.deep.equal([]);
      expect((await get(`/v1/agents/${agent}/mcp-servers`)).body.mcp_servers).to.deep.equal([created.body]);
      expect((await get(`/v1/agents/${agent}/mcp-servers/shop`)).body).to.deep.equal(created.body);
      expect((await get(`/v1/agents/${agent}/mcp-servers/${created.body.id as string}`)).body.name).to.equal('shop');

      const patched = await patch(`/v1/agents/${agent}/mcp-servers/shop`, { tools: ['get_order'], rate_per_min: 5, auth_header: 'X-Api-Key' });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body).to.include({ rate_per_min: 5, auth_header: 'X-Api-Key', url: 'https://mcp.example.com/mcp' });
      expect(patched.body.tools).to.deep.equal(['get_order']);
      const moved = await patch(`/v1/agents/${agent}/mcp-servers/shop`, { url: 'https://tools.example.org/mcp' });
      expect(moved.body.allowed_hosts).to.deep.equal(['tools.example.org']);
      const bad = await patch(`/v1/agents/${agent}/mcp-servers/shop`, { allowed_hosts: ['evil.example.net'] });
      expect(bad.status).to.equal(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path)).to.include('/allowed_hosts');
      expect((await get(`/v1/agents/${agent}/mcp-servers/shop`)).body.allowed_hosts).to.deep.equal(['tools.example.org']);

      expect((await t.http.delete(`/v1/agents/${agent}/mcp-servers/shop`).set('Authorization', auth)).status).to.equal(204);
      expect((await get(`/v1/agents/${agent}/mcp-servers/shop`)).status).to.equal(404);
      expect((await t.http.delete(`/v1/agents/${agent}/mcp-servers/shop`).set('Authorization', auth)).status).to.equal(404);
      expect((await get(`/v1/agents/${agent}`)).body.mcp_servers).to.deep.equal([]);
    });

    it('answers 409 for a second server of the same name, 404 for an unknown agent, 400 past the limit', async () => {
      const agent = await agentWith();
      const again = await post(`/v1/agents/${agent}/mcp-servers`, { name: 'shop', url: 'https://other.example.com/mcp' });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('mcp_server_exists');
      expect((await get(`/v1/agents/${agent}/mcp-servers/shop`)).body.url).to.equal(mcp.url);
      expect((await post(`/v1/agents/${unique('nobody')}/mcp-servers`, { name: 'shop', url: mcp.url })).status).to.equal(404);
      expect((await get(`/v1/agents/${unique('nobody')}/mcp-servers`)).status).to.equal(404);
      for (let i = 1; i < 16; i += 1) expect((await post(`/v1/agents/${agent}/mcp-servers`, { name: `s${i}`, url: `https://s${i}.example.com/mcp` })).status).to.equal(201);
      const over = await post(`/v1/agents/${agent}/mcp-servers`, { name: 's16', url: 'https://s16.example.com/mcp' });
      expect(over.status).to.equal(400);
      expect(over.body.code).to.equal('limit_exceeded');
    });

    it('rejects an invalid server with 400 naming the field, and stores nothing', async () => {
      const agent = unique('agent');
      expect((await post('/v1/agents', { name: agent })).status).to.equal(201);
      const cases: Array<{ body: Record<string, unknown>; path: string; code?: string }> = [
        { body: { name: 'shop', url: 'not a url' }, path: '/url' },
        { body: { name: 'shop', url: 'ftp://files.example.com/mcp' }, path: '/url' },
        { body: { name: 'shop', url: 'https://user:pw@mcp.example.com/mcp' }, path: '/url' },
        { body: { name: 'shop', url: 'http://93.184.215.14:0/mcp', allowed_hosts: ['93.184.215.14'] }, path: '/url' },
        { body: { name: 'shop', url: 'https://mcp.example.com/mcp', allowed_hosts: ['other.example.com'] }, path: '/allowed_hosts' },
        { body: { name: 'shop', url: 'https://mcp.example.com/mcp', secret_ref: unique('missing') }, path: '/secret_ref', code: 'unknown_secret' },
        { body: { name: 'shop__x', url: 'https://mcp.example.com/mcp' }, path: '/name' },
        { body: { name: 'shop', url: 'https://mcp.example.com/mcp', rate_per_min: 0 }, path: '/rate_per_min' },
        { body: { name: 'shop', url: 'https://mcp.example.com/mcp', command: 'npx evil' }, path: '/command' },
      ];
      for (const { body, path, code } of cases) {
        const res = await post(`/v1/agents/${agent}/mcp-servers`, body);
        const what = JSON.stringify({ sent: body, got: res.body });
        expect(res.status, what).to.equal(400);
        expect(res.body.code, what).to.equal(code ?? 'validation_failed');
        expect(JSON.stringify(res.body.errors), what).to.include(path);
      }
      expect((await get(`/v1/agents/${agent}`)).body.mcp_servers).to.deep.equal([]);
    });
  });

  describe('calls through chat with the local model', () => {
    it('offers the server’s tools namespaced, calls one, and answers with its result', async () => {
      const agent = await agentWith();
      const before = mcp.calls.length;
      const reply = await chat(agent, 'Please look up order 12345');
      expect(reply.trace.available_tools).to.deep.equal(ALL_TOOLS.map((name) => `shop__${name}`));
      expect(reply.trace.tool_calls).to.have.length(1);
      const call = reply.trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'shop__get_order', status: 'ok' });
      expect(JSON.parse(call.arguments)).to.deep.equal({ order_id: 12345 });
      expect(mcp.calls.slice(before)).to.have.length(1);
      expect(mcp.calls.at(-1)).to.deep.include({ tool: 'get_order', arguments: { order_id: 12345 } });
      expect(reply.message.content).to.include('TRK-12345').and.include('shipped');
      const run = await get(`/v1/agents/${agent}/runs/${reply.run_id}`);
      expect(run.body.tool_calls[0]).to.include({ tool: 'shop__get_order', status: 'ok' });
    });

    it('offers only the tools of its allow-list, and sees a PATCH of it at once; isError is status error', async () => {
      const agent = await agentWith({ tools: ['get_order'] });
      const before = mcp.calls.length;
      const hidden = await chat(agent, 'Please refund payment 77');
      expect(hidden.trace.available_tools).to.deep.equal(['shop__get_order']);
      expect(hidden.trace.tool_calls).to.deep.equal([]);
      expect(mcp.calls.length).to.equal(before);

      expect((await patch(`/v1/agents/${agent}/mcp-servers/shop`, { tools: ['refund_payment'] })).status).to.equal(200);
      const reply = await chat(agent, 'Please refund payment 77');
      expect(reply.trace.available_tools).to.deep.equal(['shop__refund_payment']);
      expect(reply.trace.tool_calls[0]).to.include({ tool: 'shop__refund_payment', status: 'error', result: 'refund refused: payment 77 is locked' });
    });

    it('ends a call that never answers at the timeout, and refuses a result past the size cap', async () => {
      const agent = await agentWith();
      const started = Date.now();
      const slow = await chat(agent, 'Please fetch invoice 9');
      expect(slow.trace.tool_calls[0]).to.include({ tool: 'shop__slow_invoice', status: 'timeout' });
      expect(slow.trace.tool_calls[0]?.result).to.match(/within 2000 ms/);
      expect(Date.now() - started).to.be.below(8_000);
      const huge = await chat(agent, 'Please produce the report for report 3');
      expect(huge.trace.tool_calls[0]).to.include({ tool: 'shop__huge_report', status: 'error' });
      expect(huge.trace.tool_calls[0]?.result).to.match(/larger than 1048576 bytes/);
    });

    it('skips a server that cannot be listed, with the reason in the trace, and still answers', async () => {
      const port = await freePort();
      const agent = await agentWith({ url: `http://127.0.0.1:${port}/mcp` });
      const reply = await chat(agent, 'Please look up order 12345');
      expect(reply.trace.available_tools).to.deep.equal([]);
      expect(reply.trace.tool_calls).to.deep.equal([]);
      expect(errorsOf(reply)).to.match(/tools\/list of MCP server shop: could not reach 127\.0\.0\.1: connection refused/);
      expect(reply.message.content).to.be.a('string').and.not.equal('');
      const run = await get(`/v1/agents/${agent}/runs/${reply.run_id}`);
      expect(run.body.response.trace.errors).to.deep.equal(reply.trace.errors);
    });

    it('lets a flow tool node name an MCP tool by its namespaced name', async () => {
      const agent = await agentWith();
      const flow = { start: 'look', nodes: { look: { type: 'tool', tool: 'shop__get_order', next: 'done' }, done: { type: 'respond', text: 'Looked it up.' } } };
      expect((await patch(`/v1/agents/${agent}`, { flow })).status).to.equal(200);
      const unknown = await patch(`/v1/agents/${agent}`, { flow: { ...flow, nodes: { ...flow.nodes, look: { type: 'tool', tool: 'other__get_order', next: 'done' } } } });
      expect(unknown.status).to.equal(400);
      const reply = await chat(agent, 'Please look up order 4711');
      expect(reply.message.content).to.equal('Looked it up.');
      expect(reply.trace.tool_calls[0]).to.include({ tool: 'shop__get_order', status: 'ok' });
      expect(JSON.parse(reply.trace.tool_calls[0]?.arguments ?? '{}')).to.deep.equal({ order_id: 4711 });
    });
  });

  describe('tool policy and rate limits', () => {
    it('shares maxCallsPerTurn with HTTP tools', async () => {
      const ping = await serve((_req, res) => json(res, 200, { pong: true }));
      servers.push(ping);
      const fake = fakeModel(() => openaiReply(['ping_tool', 'shop__get_order', 'shop__get_order']));
      const agent = await agentWith({}, { model: fake.model, tool_policy: { maxCallsPerTurn: 2 } });
      const tool = { name: 'ping_tool', description: 'Ping', http: { url: `${ping.base}/ping` }, parameters: { type: 'object', properties: {} } };
      expect((await post(`/v1/agents/${agent}/tools`, tool)).status).to.equal(201);
      const before = mcp.calls.length;
      const reply = await chat(agent, 'Ping and look up orders as often as you can.');
      expect(reply.trace.tool_calls.map((c) => [c.tool, c.status])).to.deep.equal([
        ['ping_tool', 'ok'],
        ['shop__get_order', 'ok'],
        ['shop__get_order', 'limit_exceeded'],
      ]);
      expect(ping.requests).to.have.length(1);
      expect(mcp.calls.length - before).to.equal(1);
    });

    it('offers only the namespaced names in allow, and refuses a call to another one', async () => {
      const fake = fakeModel((_request, count) => openaiReply(count === 1 ? ['shop__refund_payment'] : []));
      const agent = await agentWith({}, { model: fake.model, tool_policy: { allow: ['shop__get_order'] } });
      const before = mcp.calls.length;
      const reply = await chat(agent, 'Use whatever tools you have.');
      expect(reply.trace.available_tools).to.deep.equal(['shop__get_order']);
      for (const request of model.received.filter((r) => r.body.model === fake.name)) expect(offeredIn(request)).to.deep.equal(['shop__get_order']);
      expect(reply.trace.tool_calls).to.have.length(1);
      expect(reply.trace.tool_calls[0]).to.include({ tool: 'shop__refund_payment', status: 'denied' });
      expect(mcp.calls.length).to.equal(before);
    });

    it('refuses the third call in a minute of a tool allowing two', async () => {
      const agent = await agentWith({ rate_per_min: 2 });
      const before = mcp.calls.length;
      const statuses: string[] = [];
      for (const id of [1001, 1002, 1003]) statuses.push((await chat(agent, `Please look up order ${id}`)).trace.tool_calls[0]?.status ?? '');
      expect(statuses).to.deep.equal(['ok', 'ok', 'rate_limited']);
      expect(mcp.calls.slice(before).map((c) => c.arguments.order_id)).to.deep.equal([1001, 1002]);
    });

    if (isProduction) {
      it('shares a tool’s budget between two API processes', async () => {
        const agent = await agentWith({ rate_per_min: 2 });
        const other = await startRuntime({ role: 'api', env: t.env });
        try {
          const via = [t, other, other, t];
          const replies = [];
          for (const [i, runtime] of via.entries()) replies.push(await chat(agent, `Please look up order ${3001 + i}`, runtime));
          expect(replies.map((r) => r.trace.tool_calls[0]?.status)).to.deep.equal(['ok', 'ok', 'rate_limited', 'rate_limited']);
        } finally {
          await other.runtime.shutdown.run();
        }
      });
    }
  });

  describe('host rules', () => {
    it('denies a redirect to a host the server does not list, though the operator allows its address', async () => {
      const redirect = await serve((_req, res) => {
        res.writeHead(307, { location: `http://localhost:${mcp.port}/mcp` });
        res.end();
      });
      servers.push(redirect);
      const before = mcp.requests.length;
      const agent = await agentWith({ url: `${redirect.base}/mcp` });
      const reply = await chat(agent, 'Please look up order 12345');
      expect(reply.trace.available_tools).to.deep.equal([]);
      expect(errorsOf(reply)).to.match(/redirected \(HTTP 307\): host localhost is not in the MCP server's allowed_hosts/);
      expect(redirect.requests).to.have.length(1);
      expect(mcp.requests.length).to.equal(before);
    });

    it('denies the cloud metadata address, directly and by redirect, at once', async () => {
      const redirect = await serve((_req, res) => {
        res.writeHead(307, { location: 'http://169.254.169.254/mcp' });
        res.end();
      });
      servers.push(redirect);
      for (const server of [{ url: 'http://169.254.169.254/mcp' }, { url: `${redirect.base}/mcp`, allowed_hosts: ['127.0.0.1', '169.254.169.254'] }]) {
        const agent = await agentWith(server);
        const started = Date.now();
        const reply = await chat(agent, 'Please look up order 12345');
        expect(Date.now() - started, server.url).to.be.below(3_000);
        expect(reply.trace.available_tools).to.deep.equal([]);
        expect(errorsOf(reply), server.url).to.match(/169\.254\.169\.254 is link-local, a cloud metadata address/);
      }
      expect(redirect.requests).to.have.length(1);
    });

    describe('on a server whose operator allows no private address', () => {
      const operator = useProjectRuntime();

      it('denies loopback hosts and numeric forms a tenant lists in allowed_hosts, with no request reaching the listener', async () => {
        const { runtime: bare, auth: bareAuth } = operator;
        const before = mcp.requests.length;
        const cases: Array<[string, string[] | undefined]> = [
          [mcp.url, ['127.0.0.1']],
          [mcp.url, undefined],
          [`http://localhost:${mcp.port}/mcp`, ['localhost']],
          [`http://[::ffff:127.0.0.1]:${mcp.port}/mcp`, ['::ffff:7f00:1']],
          [`http://2130706433:${mcp.port}/mcp`, ['127.0.0.1']],
          [`http://0x7f.1:${mcp.port}/mcp`, ['127.0.0.1']],
        ];
        for (const [url, allowed] of cases) {
          const agent = await agentWith({ url, ...(allowed ? { allowed_hosts: allowed } : {}) }, {}, bare, bareAuth);
          const reply = await chat(agent, 'Please look up order 12345', bare, bareAuth);
          expect(reply.trace.available_tools, url).to.deep.equal([]);
          expect(errorsOf(reply), url).to.match(/loopback/).and.include('TOOL_ALLOW_PRIVATE_HOSTS');
        }
        expect(mcp.requests.length).to.equal(before);
      });
    });
  });

  describe('secrets', () => {
    const logged = useLoggedApi();

    it('sends the secret in its header only, and shows it in no response, run or log line', async () => {
      const { api, proc, bootstrap } = logged;
      const secret = `sk-mcp-${randomBytes(16).toString('hex')}`;
      const name = unique('mcp-key');
      const as = (req: supertest.Test) => req.set('Authorization', token(bootstrap));
      const bodies: string[] = [];
      const keep = (res: { text?: string; body: unknown }) => bodies.push(`${res.text ?? ''}${JSON.stringify(res.body)}`);
      expect((await as(api.put(`/v1/secrets/${name}`)).send({ value: secret })).status).to.equal(201);
      const agent = unique('agent');
      expect((await as(api.post('/v1/agents')).send({ name: agent })).status).to.equal(201);
      const added = await as(api.post(`/v1/agents/${agent}/mcp-servers`)).send({ name: 'shop', url: mcp.url, secret_ref: name, auth_header: 'X-Api-Key' });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      keep(added);

      const before = mcp.requests.length;
      const reply = await as(api.post(`/v1/agents/${agent}/chat`)).send({ messages: [{ role: 'user', content: 'Please show the headers for ticket 4242' }] });
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
      keep(reply);
      const call = (reply.body as ChatBody).trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'shop__show_headers', status: 'ok' });
      // the server echoed the header back; what the model and the trace see has it redacted
      expect(call.result).to.include('"x-api-key":"[secret]"');
      const seen = mcp.requests.slice(before);
      expect(seen.length).to.be.at.least(2);
      for (const request of seen) expect(request.headers['x-api-key']).to.equal(secret);
      expect(mcp.calls.at(-1)?.headers.authorization).to.equal(undefined);

      keep(await as(api.get(`/v1/agents/${agent}/runs/${(reply.body as ChatBody).run_id}`)));
      keep(await as(api.get(`/v1/agents/${agent}/runs`)));
      keep(await as(api.get(`/v1/agents/${agent}`)));
      keep(await as(api.get(`/v1/agents/${agent}/mcp-servers/shop`)));
      keep(await as(api.get('/v1/project/export')));
      for (const body of bodies) expect(body).to.not.include(secret);

      expect(await proc.kill('SIGTERM')).to.equal(0);
      expect(proc.output(), 'the log').to.not.include(secret);
    });
  });

  describe('project export and apply', () => {
    it('exports an agent’s MCP servers without secret values and applies them idempotently', async () => {
      const secret = unique('secret-value');
      const ref = unique('mcp-key');
      expect((await t.http.put(`/v1/secrets/${ref}`).set('Authorization', auth).send({ value: secret })).status).to.equal(201);
      const agent = await agentWith({ secret_ref: ref, tools: ['get_order', 'show_headers'], allowed_hosts: ['127.0.0.1', '*.example.com'], rate_per_min: 7 });
      const plain = unique('agent');
      expect((await post('/v1/agents', { name: plain })).status).to.equal(201);

      const exported = await get('/v1/project/export');
      expect(exported.status).to.equal(200);
      expect(JSON.stringify(exported.body)).to.not.include(secret);
      const spec = (exported.body.agents as Array<Record<string, unknown>>).find((a) => a.name === agent) as Record<string, unknown>;
      expect(spec.mcp_servers).to.deep.equal([
        { name: 'shop', url: mcp.url, auth_header: 'Authorization', secret_ref: ref, tools: ['get_order', 'show_headers'], rate_per_min: 7, allowed_hosts: ['127.0.0.1', '*.example.com'] },
      ]);
      expect((exported.body.agents as Array<Record<string, unknown>>).find((a) => a.name === plain)).to.not.have.property('mcp_servers');

      // into another project: its secret must be set there first
      const other = await newProject(t);
      const otherAuth = token(other.key);
      const document = { kind: exported.body.kind, version: exported.body.version, agents: [spec] };
      const apply = (body: object) => t.http.post('/v1/project/apply').set('Authorization', otherAuth).send(body);
      const missing = await apply({ spec: document });
      expect(missing.status).to.equal(400);
      expect(JSON.stringify(missing.body.errors)).to.include('/mcp_servers/0/secret_ref');
      expect((await t.http.put(`/v1/secrets/${ref}`).set('Authorization', otherAuth).send({ value: secret })).status).to.equal(201);
      const first = await apply({ spec: document });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.changes).to.deep.include({ kind: 'mcp_server', name: `${agent}/shop`, action: 'create' });
      const again = await apply({ spec: document });
      expect(again.body.changes.filter((c: { action: string }) => c.action !== 'unchanged')).to.deep.equal([]);
      const roundTrip = await t.http.get('/v1/project/export').set('Authorization', otherAuth);
      expect(roundTrip.body.agents).to.deep.equal([spec]);

      const changed = await apply({ spec: { ...document, agents: [{ ...spec, mcp_servers: [{ name: 'shop', url: mcp.url, rate_per_min: 9 }] }] } });
      expect(changed.body.changes).to.deep.include({ kind: 'mcp_server', name: `${agent}/shop`, action: 'update', detail: 'changes secret_ref, tools, rate_per_min, allowed_hosts' });
      const server = await t.http.get(`/v1/agents/${agent}/mcp-servers/shop`).set('Authorization', otherAuth);
      expect(server.body).to.include({ secret_ref: null, tools: null, rate_per_min: 9 });
      expect(server.body.allowed_hosts).to.deep.equal(['127.0.0.1']);
      const dropped = await apply({ spec: { ...document, agents: [{ ...spec, mcp_servers: [] }] } });
      expect(dropped.body.changes).to.deep.include({ kind: 'mcp_server', name: `${agent}/shop`, action: 'delete' });
      expect((await t.http.get(`/v1/agents/${agent}`).set('Authorization', otherAuth)).body.mcp_servers).to.deep.equal([]);
    });
  });
});
