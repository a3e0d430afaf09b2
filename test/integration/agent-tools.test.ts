import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { json, serve, type Seen, type TestServer } from '../http-server.js';
import supertest from 'supertest';
import { isProduction, newProject, PROFILE, secretsKey, startRuntime, token, unique, useLoggedApi, useProjectRuntime, type TestRuntime } from '../helpers.js';
import { fakeProvider, type Answer, type FakeProvider, type Received } from '../provider-server.js';

// Agents' HTTP tools through the API alone: tool CRUD, calls made by the local model and by an
// OpenAI-compatible stand-in, the host guard, the per-turn cap, secrets and rate limits.


interface ToolCallTrace {
  tool: string;
  arguments: string;
  result: string;
  status: string;
  http_status?: number;
  duration_ms: number;
}

interface ChatBody {
  run_id: string;
  conversation_id: string;
  message: { role: string; content: string };
  trace: { available_tools: string[]; tool_calls: ToolCallTrace[]; errors: unknown[] };
}

/** A tool the local model routes "Please look up order 12345" to. */
const orderTool = (url: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'lookup_order',
  description: 'Look up an order by its order id',
  http: { url, method: 'GET' },
  parameters: { type: 'object', properties: { order_id: { type: 'integer', description: 'The order id' } }, required: ['order_id'] },
  ...extra,
});

/** A tool the OpenAI stand-in calls by name, without arguments. */
const plainTool = (name: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  description: `The ${name.replace(/_/g, ' ')}`,
  http: { url },
  parameters: { type: 'object', properties: {} },
  allowed_hosts: ['127.0.0.1'],
  ...extra,
});

/** An OpenAI chat completion that asks for `names` (one call each, no arguments). */
function toolCallsAnswer(names: string[], request: number): Answer {
  return {
    status: 200,
    body: {
      id: `chatcmpl-${request}`,
      object: 'chat.completion',
      created: 1_767_225_600,
      model: 'fake',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: names.map((name, i) => ({ id: `call_${request}_${i}`, type: 'function', function: { name, arguments: '{}' } })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    },
  };
}

/** An OpenAI chat completion that answers with `content`. */
function textAnswer(content: string): Answer {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-text',
      object: 'chat.completion',
      created: 1_767_225_600,
      model: 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    },
  };
}

/** Names of the tools an OpenAI request offered. */
const offeredIn = (request: Received): string[] =>
  ((request.body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);


describe(`agent tools (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  let model: FakeProvider;
  /** How the OpenAI stand-in answers, by the model name an agent names (each test its own). */
  const behaviours = new Map<string, (request: Received, count: number) => Answer>();
  const servers: TestServer[] = [];

  /** The requests the OpenAI stand-in got for one model name. */
  const modelRequests = (name: string): Received[] => model.received.filter((r) => r.body.model === name);

  before(async () => {
    model = await fakeProvider((request) => {
      const name = String(request.body.model);
      const behaviour = behaviours.get(name);
      if (!behaviour) return { status: 404, body: { error: { message: `no model ${name}` } } };
      return behaviour(request, modelRequests(name).length);
    });
    // The tools below call local test servers on 127.0.0.1, which the operator must allow.
    t = await startRuntime({ env: { SECRETS_KEY: secretsKey(), OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-fake-provider', TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    auth = token((await newProject(t)).key);
  });
  after(async () => {
    await t?.close();
    await model?.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  const server = async (handler: (req: Seen, res: http.ServerResponse) => void): Promise<TestServer> => {
    const s = await serve(handler);
    servers.push(s);
    return s;
  };

  /** A fake model that answers as `behaviour`; the `openai/<name>` an agent uses to reach it. */
  const fakeModel = (behaviour: (request: Received, count: number) => Answer): { model: string; name: string } => {
    const name = unique('fake');
    behaviours.set(name, behaviour);
    return { model: `openai/${name}`, name };
  };

  const post = (path: string, body: object) => t.http.post(path).set('Authorization', auth).send(body);
  const get = (path: string) => t.http.get(path).set('Authorization', auth);

  /** Creates an agent (unique name) and its tools; returns the agent's name. */
  async function agentWith(tools: Array<Record<string, unknown>>, agent: Record<string, unknown> = {}): Promise<string> {
    const name = unique('agent');
    const created = await post('/v1/agents', { name, ...agent });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    for (const tool of tools) {
      const added = await post(`/v1/agents/${name}/tools`, tool);
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
    }
    return name;
  }

  async function chat(agent: string, content: string, via: TestRuntime = t): Promise<ChatBody> {
    const res = await via.http.post(`/v1/agents/${agent}/chat`).set('Authorization', auth).send({ messages: [{ role: 'user', content }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as ChatBody;
  }

  describe('tool CRUD', () => {
    it('creates a tool with its defaults, shows it on the agent, and changes and deletes it', async () => {
      const agent = await agentWith([]);
      const created = await post(`/v1/agents/${agent}/tools`, orderTool('https://api.example.com/orders/{order_id}'));
      expect(created.status).to.equal(201);
      expect(created.body).to.include({
        name: 'lookup_order',
        description: 'Look up an order by its order id',
        http_url: 'https://api.example.com/orders/{order_id}',
        http_method: 'GET',
        auth_header: 'Authorization',
        secret_ref: null,
        rate_per_min: 60,
      });
      expect(created.body.allowed_hosts).to.deep.equal(['api.example.com']);
      expect(created.body.parameters.required).to.deep.equal(['order_id']);
      expect(created.body).to.not.have.property('http');
      expect(created.body.id).to.be.a('string');

      const lower = await post(`/v1/agents/${agent}/tools`, plainTool('create_note', 'https://notes.example.com/notes', { http: { url: 'https://notes.example.com/notes', method: 'post' }, allowed_hosts: ['*.example.com'] }));
      expect(lower.status, JSON.stringify(lower.body)).to.equal(201);
      expect(lower.body).to.include({ http_method: 'POST' });
      expect(lower.body.allowed_hosts).to.deep.equal(['*.example.com']);

      const shown = await get(`/v1/agents/${agent}`);
      expect(shown.status).to.equal(200);
      expect(shown.body.tools.map((x: { name: string }) => x.name)).to.deep.equal(['lookup_order', 'create_note']);
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).body).to.deep.equal(created.body);
      expect((await get(`/v1/agents/${agent}/tools/${created.body.id as string}`)).body.name).to.equal('lookup_order');

      const patched = await t.http
        .patch(`/v1/agents/${agent}/tools/lookup_order`)
        .set('Authorization', auth)
        .send({ description: 'Find an order', rate_per_min: 5, auth_header: 'X-Api-Key' });
      expect(patched.status).to.equal(200);
      expect(patched.body).to.include({ description: 'Find an order', rate_per_min: 5, auth_header: 'X-Api-Key', http_url: 'https://api.example.com/orders/{order_id}' });
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).body).to.include({ description: 'Find an order', rate_per_min: 5 });

      // a new URL without allowed_hosts takes its host again
      const moved = await t.http
        .patch(`/v1/agents/${agent}/tools/lookup_order`)
        .set('Authorization', auth)
        .send({ http: { url: 'https://orders.example.org/v2/{order_id}' } });
      expect(moved.status).to.equal(200);
      expect(moved.body.allowed_hosts).to.deep.equal(['orders.example.org']);

      const badPatch = await t.http.patch(`/v1/agents/${agent}/tools/lookup_order`).set('Authorization', auth).send({ allowed_hosts: ['evil.example.net'] });
      expect(badPatch.status).to.equal(400);
      expect(badPatch.body.code).to.equal('validation_failed');
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).body.allowed_hosts).to.deep.equal(['orders.example.org']);

      expect((await t.http.delete(`/v1/agents/${agent}/tools/lookup_order`).set('Authorization', auth)).status).to.equal(204);
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).status).to.equal(404);
      expect((await t.http.delete(`/v1/agents/${agent}/tools/lookup_order`).set('Authorization', auth)).status).to.equal(404);
      expect((await get(`/v1/agents/${agent}`)).body.tools.map((x: { name: string }) => x.name)).to.deep.equal(['create_note']);
    });

    it('answers 409 for a second tool of the same name and 404 for an unknown agent', async () => {
      const agent = await agentWith([orderTool('https://api.example.com/orders/{order_id}')]);
      const again = await post(`/v1/agents/${agent}/tools`, orderTool('https://other.example.com/orders/{order_id}'));
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('tool_exists');
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).body.http_url).to.equal('https://api.example.com/orders/{order_id}');

      const nobody = await post(`/v1/agents/${unique('nobody')}/tools`, orderTool('https://api.example.com/orders/{order_id}'));
      expect(nobody.status).to.equal(404);
      expect(nobody.body).to.include.keys('detail', 'code');
      expect((await get(`/v1/agents/${unique('nobody')}/tools`)).status).to.equal(404);
    });

    it('rejects an invalid tool with 400 naming the field, and stores nothing', async () => {
      const agent = await agentWith([]);
      const cases: Array<{ body: Record<string, unknown>; path: string; code?: string }> = [
        { body: orderTool('not a url'), path: '/http/url' },
        { body: orderTool('ftp://files.example.com/orders/{order_id}'), path: '/http/url' },
        { body: orderTool('https://api.example.com:0/orders/{order_id}'), path: '/http/url' },
        { body: orderTool('https://api.example.com/orders/{order_id}', { http: { url: 'https://api.example.com/orders/{order_id}', method: 'TRACE' } }), path: '/http/method' },
        { body: orderTool('https://api.example.com/orders/{order_id}/lines/{line}'), path: '/http/url' },
        { body: orderTool('https://api.example.com/orders/{order_id}', { allowed_hosts: ['other.example.com'] }), path: '/allowed_hosts' },
        { body: orderTool('https://api.example.com/orders/{order_id}', { secret_ref: unique('missing') }), path: '/secret_ref', code: 'unknown_secret' },
      ];
      for (const { body, path, code } of cases) {
        const res = await post(`/v1/agents/${agent}/tools`, body);
        const what = JSON.stringify({ sent: body, got: res.body });
        expect(res.status, what).to.equal(400);
        expect(res.body, what).to.have.keys('detail', 'code', 'errors');
        expect(res.body.detail, what).to.be.a('string').and.not.equal('');
        expect(res.body.code, what).to.equal(code ?? 'validation_failed');
        expect(res.body.errors.map((e: { path: string }) => e.path), what).to.include(path);
      }
      expect((await get(`/v1/agents/${agent}/tools`)).body.tools).to.deep.equal([]);
      expect((await get(`/v1/agents/${agent}`)).body.tools).to.deep.equal([]);
    });
  });

  describe('calls through chat with the local model', () => {
    it('calls a loopback tool the operator allows, with the path parameter, and answers with the result', async () => {
      const tracking = `TRK-${randomBytes(4).toString('hex')}`;
      const s = await server((req, res) => json(res, 200, { order_id: Number(req.url.split('/').pop()), status: 'shipped', tracking }));
      const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`, { allowed_hosts: ['127.0.0.1'] })]);
      const reply = await chat(agent, 'Please look up order 12345');
      expect(reply.trace.available_tools).to.deep.equal(['lookup_order']);
      expect(reply.trace.tool_calls).to.have.length(1);
      const call = reply.trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'lookup_order', status: 'ok', http_status: 200 });
      expect(JSON.parse(call.arguments)).to.deep.equal({ order_id: 12345 });
      expect(s.requests).to.have.length(1);
      expect(s.requests[0]).to.include({ method: 'GET', url: '/orders/12345' });
      expect(reply.message.content).to.include(tracking).and.include('shipped');
    });

    it('calls a loopback tool the operator allows when allowed_hosts was defaulted', async () => {
      const s = await server((_req, res) => json(res, 200, { status: 'shipped' }));
      const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`)]);
      expect((await get(`/v1/agents/${agent}/tools/lookup_order`)).body.allowed_hosts).to.deep.equal(['127.0.0.1']);
      const reply = await chat(agent, 'Please look up order 12345');
      expect(reply.trace.tool_calls[0]).to.include({ tool: 'lookup_order', status: 'ok' });
      expect(s.requests).to.have.length(1);
    });

    it('denies a redirect from an allowed host to one the tool does not list, though the operator allows its address', async () => {
      const target = await server((_req, res) => json(res, 200, { status: 'internal' }));
      const s = await server((_req, res) => {
        res.writeHead(302, { location: `http://localhost:${target.port}/admin` });
        res.end();
      });
      const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`, { allowed_hosts: ['127.0.0.1'] })]);
      const reply = await chat(agent, 'Please look up order 12345');
      const call = reply.trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'lookup_order', status: 'denied', http_status: 302 });
      expect(call.result).to.match(/^redirected: host localhost is not in the tool's allowed_hosts/);
      expect(s.requests).to.have.length(1);
      expect(target.requests).to.have.length(0);
    });

    it('denies the cloud metadata address at once', async () => {
      const agent = await agentWith([
        {
          name: 'read_metadata',
          description: 'Read an instance metadata entry by its entry number',
          http: { url: 'http://169.254.169.254/latest/meta-data/{entry}' },
          parameters: { type: 'object', properties: { entry: { type: 'integer' } }, required: ['entry'] },
        },
      ]);
      const started = Date.now();
      const reply = await chat(agent, 'Please read metadata entry 7');
      expect(Date.now() - started).to.be.below(3_000);
      expect(reply.trace.tool_calls).to.have.length(1);
      const call = reply.trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'read_metadata', status: 'denied' });
      expect(JSON.parse(call.arguments)).to.deep.equal({ entry: 7 });
      expect(call.result).to.match(/169\.254\.169\.254 is link-local/);
      expect(call.duration_ms).to.be.below(1_000);
    });

    it('denies a redirect to the metadata address, listed or not', async () => {
      const s = await server((_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      });
      for (const allowed of [['127.0.0.1'], ['127.0.0.1', '169.254.169.254']]) {
        const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`, { allowed_hosts: allowed })]);
        const before = s.requests.length;
        const started = Date.now();
        const reply = await chat(agent, 'Please look up order 12345');
        expect(Date.now() - started, allowed.join()).to.be.below(3_000);
        expect(reply.trace.tool_calls, allowed.join()).to.have.length(1);
        const call = reply.trace.tool_calls[0] as ToolCallTrace;
        expect(call, allowed.join()).to.include({ tool: 'lookup_order', status: 'denied', http_status: 302 });
        expect(call.result, allowed.join()).to.match(/^redirected: /).and.include('169.254.169.254');
        // the first hop was made (and answered with the redirect); nothing was followed
        expect(s.requests.length - before, allowed.join()).to.equal(1);
        expect(s.requests.at(-1)?.url).to.equal('/orders/12345');
      }
    });
  });

  describe('on a server whose operator allows no private address', () => {
    const operator = useProjectRuntime();

    const bareAgentWith = async (tools: Array<Record<string, unknown>>): Promise<string> => {
      const { runtime: bare, auth: bareAuth } = operator;
      const name = unique('agent');
      const created = await bare.http.post('/v1/agents').set('Authorization', bareAuth).send({ name });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      for (const tool of tools) {
        const res = await bare.http.post(`/v1/agents/${name}/tools`).set('Authorization', bareAuth).send(tool);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
      }
      return name;
    };
    const bareChat = async (agent: string, content: string): Promise<ChatBody> => {
      const { runtime: bare, auth: bareAuth } = operator;
      const res = await bare.http.post(`/v1/agents/${agent}/chat`).set('Authorization', bareAuth).send({ messages: [{ role: 'user', content }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as ChatBody;
    };

    it('denies loopback hosts and numeric forms a tenant lists in allowed_hosts, with no request reaching the listener', async () => {
      const s = await server((_req, res) => json(res, 200, { status: 'shipped' }));
      const cases: Array<[string, string[] | undefined]> = [
        [`${s.base}/orders/{order_id}`, ['127.0.0.1']],
        [`${s.base}/orders/{order_id}`, undefined],
        [`http://localhost:${s.port}/orders/{order_id}`, ['localhost']],
        [`http://[::ffff:127.0.0.1]:${s.port}/orders/{order_id}`, ['::ffff:7f00:1']],
        [`http://2130706433:${s.port}/orders/{order_id}`, ['127.0.0.1']],
        [`http://0x7f.1:${s.port}/orders/{order_id}`, ['127.0.0.1']],
      ];
      for (const [url, allowed] of cases) {
        const agent = await bareAgentWith([orderTool(url, allowed ? { allowed_hosts: allowed } : {})]);
        const reply = await bareChat(agent, 'Please look up order 12345');
        expect(reply.trace.tool_calls, url).to.have.length(1);
        const call = reply.trace.tool_calls[0] as ToolCallTrace;
        expect(call, url).to.include({ tool: 'lookup_order', status: 'denied' });
        expect(call.result, url).to.match(/loopback/).and.include('TOOL_ALLOW_PRIVATE_HOSTS');
      }
      expect(s.requests).to.have.length(0);
    });

    it('denies the cloud metadata address a tenant lists in allowed_hosts, at once', async () => {
      const agent = await bareAgentWith([
        {
          name: 'read_metadata',
          description: 'Read an instance metadata entry by its entry number',
          http: { url: 'http://169.254.169.254/latest/meta-data/{entry}' },
          parameters: { type: 'object', properties: { entry: { type: 'integer' } }, required: ['entry'] },
          allowed_hosts: ['169.254.169.254'],
        },
      ]);
      const reply = await bareChat(agent, 'Please read metadata entry 7');
      const call = reply.trace.tool_calls[0] as ToolCallTrace;
      expect(call).to.include({ tool: 'read_metadata', status: 'denied' });
      expect(call.result).to.match(/169\.254\.169\.254 is link-local, a cloud metadata address/);
      expect(call.duration_ms).to.be.below(1_000);
    });
  });

  describe('tool policy', () => {
    it('stops at maxCallsPerTurn when the model asks for tools forever, and still answers', async () => {
      const s = await server((_req, res) => json(res, 200, { pong: true }));
      const fallback = `No more tools (${unique('fb')}).`;
      // three calls in every reply, whether tools are offered or not
      const fake = fakeModel((_request, count) => toolCallsAnswer(['ping_tool', 'ping_tool', 'ping_tool'], count));
      const agent = await agentWith([plainTool('ping_tool', `${s.base}/ping`)], { model: fake.model, tool_policy: { maxCallsPerTurn: 2 }, fallback_message: fallback });
      const reply = await chat(agent, 'Ping the service as often as you can.');

      expect(s.requests).to.have.length(2);
      expect(reply.trace.tool_calls.map((c) => c.status)).to.deep.equal(['ok', 'ok', 'limit_exceeded']);
      expect(reply.trace.tool_calls[2]?.result).to.match(/limit of 2 tool calls/);
      expect(reply.message.content).to.equal(fallback);
      const requests = modelRequests(fake.name);
      expect(requests).to.have.length(2);
      expect(offeredIn(requests[0] as Received)).to.deep.equal(['ping_tool']);
      // once the cap is reached the model is asked to answer without tools
      expect(offeredIn(requests[1] as Received)).to.deep.equal([]);

      const run = await get(`/v1/agents/${agent}/runs/${reply.run_id}`);
      expect(run.status).to.equal(200);
      expect(run.body.tool_calls.map((c: ToolCallTrace) => c.status)).to.deep.equal(['ok', 'ok', 'limit_exceeded']);
    });

    it('offers no tools with maxCallsPerTurn 0', async () => {
      const s = await server((_req, res) => json(res, 200, { pong: true }));
      const fake = fakeModel((request, count) => (offeredIn(request).length > 0 ? toolCallsAnswer(['ping_tool'], count) : textAnswer('Answered without tools.')));
      const agent = await agentWith([plainTool('ping_tool', `${s.base}/ping`)], { model: fake.model, tool_policy: { maxCallsPerTurn: 0 } });
      const reply = await chat(agent, 'Ping the service.');
      expect(reply.message.content).to.equal('Answered without tools.');
      expect(reply.trace.tool_calls).to.deep.equal([]);
      expect(reply.trace.available_tools).to.deep.equal([]);
      expect(s.requests).to.have.length(0);
      const requests = modelRequests(fake.name);
      expect(requests).to.have.length(1);
      expect(requests[0]?.body).to.not.have.property('tools');
    });

    it('offers only the tools in allow, and refuses a call to another one', async () => {
      const s = await server((_req, res) => json(res, 200, { ok: true }));
      const fake = fakeModel((_request, count) => (count === 1 ? toolCallsAnswer(['hidden_tool'], count) : textAnswer('Done.')));
      const agent = await agentWith([plainTool('allowed_tool', `${s.base}/allowed`), plainTool('hidden_tool', `${s.base}/hidden`)], {
        model: fake.model,
        tool_policy: { allow: ['allowed_tool'] },
      });
      const reply = await chat(agent, 'Use whatever tools you have.');
      expect(reply.trace.available_tools).to.deep.equal(['allowed_tool']);
      const requests = modelRequests(fake.name);
      expect(requests.length).to.be.at.least(1);
      for (const request of requests) expect(offeredIn(request)).to.deep.equal(['allowed_tool']);
      expect(reply.trace.tool_calls).to.have.length(1);
      expect(reply.trace.tool_calls[0]).to.include({ tool: 'hidden_tool', status: 'denied' });
      expect(s.requests).to.have.length(0);
      expect(reply.message.content).to.equal('Done.');
    });
  });

  describe('rate limits', () => {
    it('refuses the third call in a minute of a tool allowing two', async () => {
      const s = await server((_req, res) => json(res, 200, { status: 'shipped' }));
      const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`, { allowed_hosts: ['127.0.0.1'], rate_per_min: 2 })]);
      const statuses: string[] = [];
      for (const id of [1001, 1002, 1003]) {
        const reply = await chat(agent, `Please look up order ${id}`);
        expect(reply.trace.tool_calls).to.have.length(1);
        statuses.push(reply.trace.tool_calls[0]?.status ?? '');
      }
      expect(statuses).to.deep.equal(['ok', 'ok', 'rate_limited']);
      expect(s.requests.map((r) => r.url)).to.deep.equal(['/orders/1001', '/orders/1002']);
    });

    if (isProduction) {
      it('shares one budget between two API processes', async () => {
        const s = await server((_req, res) => json(res, 200, { status: 'shipped' }));
        const agent = await agentWith([orderTool(`${s.base}/orders/{order_id}`, { allowed_hosts: ['127.0.0.1'], rate_per_min: 2 })]);
        const second = await startRuntime({ role: 'api', env: t.env });
        try {
          const statuses: string[] = [];
          for (const [id, via] of [
            [2001, t],
            [2002, second],
            [2003, second],
            [2004, t],
          ] as const) {
            const reply = await chat(agent, `Please look up order ${id}`, via);
            expect(reply.trace.tool_calls).to.have.length(1);
            statuses.push(reply.trace.tool_calls[0]?.status ?? '');
          }
          expect(statuses).to.deep.equal(['ok', 'ok', 'rate_limited', 'rate_limited']);
          expect(s.requests.map((r) => r.url)).to.deep.equal(['/orders/2001', '/orders/2002']);
        } finally {
          await second.runtime.shutdown.run();
        }
      });
    }
  });

  describe('secrets', () => {
    const logged = useLoggedApi();

    it('stores secrets put at once, new and replaced, each once', async () => {
      const { api, bootstrap } = logged;
      const as = (req: supertest.Test) => req.set('Authorization', token(bootstrap));
      const names = Array.from({ length: 8 }, () => unique('parallel-key'));
      const first = await Promise.all(names.map((name) => as(api.put(`/v1/secrets/${name}`)).send({ value: `v1-${name}` })));
      expect(first.map((r) => r.status)).to.deep.equal(names.map(() => 201));
      const again = await Promise.all([...names, ...names].map((name) => as(api.put(`/v1/secrets/${name}`)).send({ value: `v2-${name}` })));
      expect(again.map((r) => r.status)).to.deep.equal([...names, ...names].map(() => 200));
      const listed = await as(api.get('/v1/secrets?limit=100'));
      expect(listed.body.secrets.filter((s: { name: string }) => names.includes(s.name))).to.have.length(names.length);
    });

    it('sends the secret to the tool and shows it in no response, run or log line', async () => {
      const { api, proc, bootstrap } = logged;
      const secret = `sk-test-${randomBytes(16).toString('hex')}`;
      const name = unique('vendor-key');
      const as = (req: supertest.Test) => req.set('Authorization', token(bootstrap));
      const s = await server((req, res) => json(res, req.url.endsWith('/500') ? 500 : 200, { ticket: req.url, headers: req.headers }));
      const seen: string[] = [];
      const leaks = (what: string, res: { status: number; body: unknown; text?: string }): void => {
        const text = `${res.text ?? ''}${JSON.stringify(res.body)}`;
        seen.push(what);
        expect(text, `${what} echoes the secret`).to.not.include(secret);
      };

      const put = await as(api.put(`/v1/secrets/${name}`)).send({ value: secret });
      expect(put.status).to.equal(201);
      expect(put.body).to.have.keys('name', 'created_at', 'updated_at');
      leaks('PUT /v1/secrets (new)', put);
      const replaced = await as(api.put(`/v1/secrets/${name}`)).send({ value: secret });
      expect(replaced.status).to.equal(200);
      leaks('PUT /v1/secrets (replaced)', replaced);

      // bad requests that carry the value must not echo it
      const unknownField = await as(api.put(`/v1/secrets/${name}`)).send({ value: secret, note: secret });
      expect(unknownField.status).to.equal(400);
      expect(unknownField.body.code).to.equal('validation_failed');
      leaks('PUT with an unknown field', unknownField);
      const badName = await as(api.put(`/v1/secrets/bad!name`)).send({ value: secret });
      expect(badName.status).to.equal(400);
      leaks('PUT with a bad name', badName);
      const malformed = await as(api.put(`/v1/secrets/${name}`))
        .set('Content-Type', 'application/json')
        .send(`{"value": ${secret}}`);
      expect(malformed.status).to.equal(400);
      expect(malformed.body.code).to.equal('malformed_json');
      leaks('PUT with malformed JSON', malformed);
      // a short value would fit whole in a parser's quote of the body
      const short = await as(api.put(`/v1/secrets/${name}`)).set('Content-Type', 'application/json').send('{"value": hunter22}');
      expect(short.status).to.equal(400);
      expect(JSON.stringify(short.body)).to.not.include('hunter22');

      const agent = unique('agent');
      expect((await as(api.post('/v1/agents')).send({ name: agent })).status).to.equal(201);
      const tool = await as(api.post(`/v1/agents/${agent}/tools`)).send({
        name: 'show_ticket',
        description: 'Show the request headers of a ticket by its ticket id',
        http: { url: `${s.base}/tickets/{ticket_id}` },
        parameters: { type: 'object', properties: { ticket_id: { type: 'integer' } }, required: ['ticket_id'] },
        auth_header: 'X-Api-Key',
        secret_ref: name,
        allowed_hosts: ['127.0.0.1'],
      });
      expect(tool.status, JSON.stringify(tool.body)).to.equal(201);
      expect(tool.body).to.include({ secret_ref: name, auth_header: 'X-Api-Key' });
      leaks('POST tool', tool);

      const runIds: string[] = [];
      for (const ticket of [4242, 500]) {
        const reply = await as(api.post(`/v1/agents/${agent}/chat`)).send({ messages: [{ role: 'user', content: `Please show the headers for ticket ${ticket}` }] });
        expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
        const call = (reply.body as ChatBody).trace.tool_calls[0] as ToolCallTrace;
        expect(call).to.include({ tool: 'show_ticket', status: ticket === 500 ? 'error' : 'ok', http_status: ticket === 500 ? 500 : 200 });
        // the server echoed the header back; what the model and trace see has it redacted
        expect(call.result).to.include('"x-api-key":"[secret]"');
        leaks(`chat (ticket ${ticket})`, reply);
        runIds.push((reply.body as ChatBody).run_id);
      }
      expect(s.requests).to.have.length(2);
      for (const request of s.requests) expect(request.headers['x-api-key']).to.equal(secret);

      for (const runId of runIds) {
        const run = await as(api.get(`/v1/agents/${agent}/runs/${runId}`));
        expect(run.status).to.equal(200);
        expect(run.body.tool_calls).to.have.length(1);
        leaks('GET run', run);
      }
      const runs = await as(api.get(`/v1/agents/${agent}/runs`));
      expect(runs.body.runs).to.have.length(2);
      leaks('GET runs', runs);
      const list = await as(api.get('/v1/secrets'));
      expect(list.body.secrets.map((x: { name: string }) => x.name)).to.include(name);
      leaks('GET /v1/secrets', list);
      const one = await as(api.get(`/v1/secrets/${name}`));
      expect(one.status).to.equal(200);
      expect(one.body).to.have.keys('name', 'created_at', 'updated_at');
      leaks('GET /v1/secrets/:name', one);
      const shown = await as(api.get(`/v1/agents/${agent}`));
      expect(shown.body.tools[0].secret_ref).to.equal(name);
      leaks('GET agent', shown);
      leaks('GET tool', await as(api.get(`/v1/agents/${agent}/tools/show_ticket`)));
      leaks('GET agents', await as(api.get('/v1/agents')));

      // a secret_ref to a deleted secret: the call fails without sending anything
      expect((await as(api.delete(`/v1/secrets/${name}`))).status).to.equal(204);
      const orphan = await as(api.post(`/v1/agents/${agent}/chat`)).send({ messages: [{ role: 'user', content: 'Please show the headers for ticket 77' }] });
      expect(orphan.status).to.equal(200);
      expect((orphan.body as ChatBody).trace.tool_calls[0]).to.include({ status: 'error' });
      expect(s.requests).to.have.length(2);

      expect(await proc.kill('SIGTERM')).to.equal(0);
      const output = proc.output();
      // debug logging was on: every request above has its line
      expect(output.match(/"msg":"request"/g)?.length ?? 0).to.be.at.least(seen.length);
      expect(output, 'the log').to.not.include(secret);
    });
  });
});
