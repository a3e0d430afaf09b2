import { randomBytes } from 'node:crypto';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { expect } from 'chai';
import { json, serve, type TestServer } from '../http-server.js';
import { isProduction, newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mcpServer } from '../mcp-server.js';
import { fakeProvider, openaiChatAnswer, type FakeProvider } from '../provider-server.js';

// OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, a chat turn and a memory's indexing reach an
// OTLP/HTTP receiver as connected spans; without it, nothing is sent.

/** A span as OTLP/JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
  service: string;
}

/** A local OTLP/HTTP receiver: every span posted to /v1/traces as http/json. */
interface Receiver {
  url: string;
  spans: OtlpSpan[];
  /** Requests it got, of any kind. */
  posts: () => number;
  close(): Promise<void>;
}

async function otlpReceiver(): Promise<Receiver> {
  const spans: OtlpSpan[] = [];
  const server: TestServer = await serve((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
      const body = JSON.parse(req.body) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: Omit<OtlpSpan, 'service'>[] }> }>;
      };
      for (const resource of body.resourceSpans) {
        const service = String(resource.resource.attributes?.find((a) => a.key === 'service.name')?.value.stringValue);
        for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
      }
    }
    json(res, 200, {});
  });
  return { url: server.base, spans, posts: () => server.requests.length, close: () => server.close() };
}

/** A span attribute's value, whatever its OTLP type. */
function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if ('intValue' in value) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.arrayValue;
}

/** Exports what the SDK has batched now, rather than at its next scheduled export. */
async function flush(): Promise<void> {
  const sdk = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as unknown as { forceFlush?: () => Promise<void> };
  await sdk.forceFlush?.();
}

describe(`OpenTelemetry (${PROFILE})`, function () {
  this.timeout(60_000);
  let receiver: Receiver;
  let model: FakeProvider;
  let tool: TestServer;

  before(async () => {
    receiver = await otlpReceiver();
    tool = await serve((_req, res) => json(res, 200, { in_stock: 7 }));
    // an OpenAI stand-in: first the tool call, then (with its result) the answer
    model = await fakeProvider((request) => {
      const toolResult = (request.body.messages as Array<{ role: string }>).some((m) => m.role === 'tool');
      const message = toolResult
        ? { role: 'assistant', content: 'Seven in stock.' }
        : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'check_stock', arguments: '{}' } }] };
      return openaiChatAnswer(message, { finishReason: toolResult ? 'stop' : 'tool_calls', model: 'fake', usage: { input: 20, output: 5 } });
    });
  });
  after(async () => {
    await receiver?.close();
    await model?.close();
    await tool?.close();
  });

  const settings = (): Record<string, string> => ({
    SECRETS_KEY: randomBytes(32).toString('base64'),
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-fake-provider',
    TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
  });

  /** Adds a memory through the mem0 API and waits until it is indexed (searchable). */
  async function addMemory(t: TestRuntime, auth: string): Promise<void> {
    const user = unique('user');
    const added = await t.http.post('/v3/memories/add').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I keep bees on the roof' }], user_id: user, infer: false });
    expect(added.status, JSON.stringify(added.body)).to.be.oneOf([200, 201]);
    await waitFor(async () => (await t.http.post('/v3/memories/search').set('Authorization', auth).send({ query: 'bees', filters: { user_id: user } })).body.results?.length === 1, {
      message: 'the memory to be indexed',
    });
  }

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    /** The process serving HTTP; on production a separate worker runtime runs the jobs. */
    let api: TestRuntime;
    let worker: TestRuntime | null = null;
    let auth: string;

    before(async () => {
      const env = { ...settings(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'cairn-under-test' };
      api = await startRuntime({ role: isProduction ? 'api' : 'all', env });
      // the worker shares the API's queue prefix: the jobs the API queues run there, not in the API
      if (isProduction) worker = await startRuntime({ role: 'worker', env: api.env });
      auth = token((await newProject(api)).key);
    });
    after(async () => {
      await worker?.close();
      await api?.close();
    });

    /** The spans of one trace, once `ready` holds for them. */
    async function traceOf(root: (s: OtlpSpan) => boolean, ready: (spans: OtlpSpan[]) => boolean): Promise<OtlpSpan[]> {
      return waitFor(
        async () => {
          await flush();
          const first = receiver.spans.find(root);
          const spans = first ? receiver.spans.filter((s) => s.traceId === first.traceId) : [];
          return first && ready(spans) ? spans : null;
        },
        { timeoutMs: 20_000, message: 'the trace to reach the receiver' },
      );
    }

    /** Whether `span` descends from `ancestor` within `spans`. */
    const descends = (spans: OtlpSpan[], span: OtlpSpan, ancestor: OtlpSpan): boolean => {
      for (let parent = span.parentSpanId; parent; parent = spans.find((s) => s.spanId === parent)?.parentSpanId) {
        if (parent === ancestor.spanId) return true;
      }
      return false;
    };

    it('exports a chat turn as one trace: the request, the turn, its model calls with GenAI attributes and tokens, and the tool call', async () => {
      const agent = unique('agent');
      const fake = unique('fake');
      expect((await api.http.post('/v1/agents').set('Authorization', auth).send({ name: agent, model: `openai/${fake}` })).status).to.equal(201);
      const added = await api.http
        .post(`/v1/agents/${agent}/tools`)
        .set('Authorization', auth)
        .send({ name: 'check_stock', description: 'Stock level', http: { url: `${tool.base}/stock` }, parameters: { type: 'object', properties: {} }, allowed_hosts: ['127.0.0.1'] });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);

      const chat = await api.http.post(`/v1/agents/${agent}/chat`).set('Authorization', auth).send({ messages: [{ role: 'user', content: 'Is it in stock?' }] });
      expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
      expect(chat.body.message.content).to.equal('Seven in stock.');

      const turnName = `invoke_agent ${agent}`;
      const spans = await traceOf(
        (s) => s.name === turnName,
        (all) => all.some((s) => s.name === 'POST /v1/agents/:name/chat') && all.filter((s) => s.name === `chat ${fake}`).length === 2 && all.some((s) => s.name === 'execute_tool check_stock'),
      );
      const request = spans.find((s) => s.name === 'POST /v1/agents/:name/chat') as OtlpSpan;
      expect(request.parentSpanId ?? '', 'the request span is the root').to.equal('');
      expect(request.service).to.equal('cairn-under-test');
      expect(attr(request, 'http.route')).to.equal('/v1/agents/:name/chat');
      expect(attr(request, 'http.response.status_code')).to.equal(200);

      const turn = spans.find((s) => s.name === turnName) as OtlpSpan;
      expect(descends(spans, turn, request)).to.equal(true);
      expect(attr(turn, 'gen_ai.operation.name')).to.equal('invoke_agent');
      expect(attr(turn, 'gen_ai.usage.input_tokens')).to.equal(40);
      expect(attr(turn, 'gen_ai.usage.output_tokens')).to.equal(10);

      for (const call of spans.filter((s) => s.name === `chat ${fake}`)) {
        expect(descends(spans, call, turn)).to.equal(true);
        expect(attr(call, 'gen_ai.operation.name')).to.equal('chat');
        expect(attr(call, 'gen_ai.provider.name')).to.equal('openai');
        expect(attr(call, 'gen_ai.request.model')).to.equal(fake);
        expect(attr(call, 'gen_ai.usage.input_tokens')).to.equal(20);
        expect(attr(call, 'gen_ai.usage.output_tokens')).to.equal(5);
      }
      const toolCall = spans.find((s) => s.name === 'execute_tool check_stock') as OtlpSpan;
      expect(descends(spans, toolCall, turn)).to.equal(true);
      expect(attr(toolCall, 'gen_ai.tool.name')).to.equal('check_stock');
      expect(attr(toolCall, 'http.response.status_code')).to.equal(200);
    });

    it('exports a call of an MCP server’s tool as an execute_tool span of the turn', async () => {
      const mcp = await mcpServer();
      try {
        const agent = unique('agent');
        expect((await api.http.post('/v1/agents').set('Authorization', auth).send({ name: agent })).status).to.equal(201);
        expect((await api.http.post(`/v1/agents/${agent}/mcp-servers`).set('Authorization', auth).send({ name: 'shop', url: mcp.url })).status).to.equal(201);
        const chat = await api.http.post(`/v1/agents/${agent}/chat`).set('Authorization', auth).send({ messages: [{ role: 'user', content: 'Please look up order 12345' }] });
        expect(chat.body.trace.tool_calls[0]).to.include({ tool: 'shop__get_order', status: 'ok' });
        const turnName = `invoke_agent ${agent}`;
        const spans = await traceOf(
          (s) => s.name === turnName,
          (all) => all.some((s) => s.name === 'execute_tool shop__get_order'),
        );
        const toolCall = spans.find((s) => s.name === 'execute_tool shop__get_order') as OtlpSpan;
        expect(descends(spans, toolCall, spans.find((s) => s.name === turnName) as OtlpSpan)).to.equal(true);
        expect(attr(toolCall, 'gen_ai.operation.name')).to.equal('execute_tool');
        expect(attr(toolCall, 'cairn.mcp.server')).to.equal('shop');
        expect(attr(toolCall, 'cairn.mcp.tool')).to.equal('get_order');
        expect(attr(toolCall, 'cairn.tool.status')).to.equal('ok');
      } finally {
        await mcp.close();
      }
    });

    it(`exports a memory add's enqueue span and the memory.index run it leads to${isProduction ? ', from the API to the worker process' : ''}`, async () => {
      await addMemory(api, auth);
      const spans = await traceOf(
        (s) => s.name === 'POST /v3/memories/add',
        (all) => all.some((s) => s.name === 'run memory.index'),
      );
      const request = spans.find((s) => s.name === 'POST /v3/memories/add') as OtlpSpan;
      const enqueue = spans.find((s) => s.name === 'enqueue memory.index') as OtlpSpan;
      const run = spans.find((s) => s.name === 'run memory.index') as OtlpSpan;
      expect(enqueue, 'an enqueue span').to.not.equal(undefined);
      expect(descends(spans, enqueue, request)).to.equal(true);
      expect(run.parentSpanId, 'the run continues from the enqueue span').to.equal(enqueue.spanId);
      expect(attr(run, 'messaging.destination.name')).to.equal('embedding');
      // the run's own work (embedding the memory) is part of the trace too
      expect(spans.some((s) => s.name.startsWith('embeddings ') && descends(spans, s, run))).to.equal(true);
    });
  });

  describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    let t: TestRuntime;
    before(async () => {
      t = await startRuntime({ env: settings() });
    });
    after(async () => {
      await t?.close();
    });

    it('sends nothing, for requests and jobs alike', async () => {
      const before = receiver.posts();
      const auth = token((await newProject(t)).key);
      await addMemory(t, auth);
      expect((await t.http.get('/v1/agents').set('Authorization', auth)).status).to.equal(200);
      await flush();
      expect(receiver.posts()).to.equal(before);
    });
  });
});
