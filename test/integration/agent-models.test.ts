import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { fakeStreamingProvider, openaiChatAnswer, type Answer, type FakeProvider, type Received, type SseEvent, type StreamedAnswer } from '../provider-server.js';

// Agents on remote chat models, through the API alone: a runtime whose Cohere and
// OpenAI-compatible providers are one local stand-in speaking each wire format, and a local
// HTTP server behind the agents' tools. Each test names its own model, so the stand-in answers
// each test as that test scripts it.

const HANDBOOK = `# Returns

Refunds are issued within 14 days of purchase. To ask for a refund, write to support with your order number.

# Shipping

Orders ship within two business days. Express delivery costs 9 euros and arrives the next day.

# Warranty

Every device carries a two-year warranty covering manufacturing faults.
`;

const INSTRUCTIONS = 'You are the support assistant of Acme. Be brief.';
const ORDER = { order_id: 'A-1001', status: 'shipped', carrier: 'UPS', tracking_number: '1Z999' };
const TRACKING = { carrier: 'UPS', tracking_number: '1Z999', arrives: '2026-03-06' };
const FINAL = 'Order A-1001 shipped with UPS (1Z999) and arrives on 6 March.';
const OUTAGE: Answer = { status: 503, body: { message: 'overloaded', error: { message: 'overloaded', type: 'server_error' } } };

interface Citation {
  text: string;
  score: number;
  document_id: string;
  filename: string;
  chunk_id: string;
}

interface ToolCallTrace {
  tool: string;
  arguments: string;
  result: string;
  status: string;
  http_status?: number;
}

interface ChatResponse {
  run_id: string;
  conversation_id: string;
  message: { role: string; content: string };
  citations: Citation[];
  usage: { tokens_in: number; tokens_out: number };
  trace: { retrieved: Citation[]; available_tools: string[]; tool_calls: ToolCallTrace[]; plan: string[]; errors: unknown[] };
}

interface RunDetail {
  id: string;
  status: string;
  llm_calls: number;
  tokens_in: number;
  tokens_out: number;
  tool_calls: ToolCallTrace[];
  plan: string[];
  response: ChatResponse | null;
  error: { status: number; code: string; detail: string } | null;
}

/** A chat message as a provider receives it (both wire formats use these snake_case names). */
interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

interface Usage {
  in: number;
  out: number;
}

/** One provider's chat wire format, as much of it as these tests speak. */
interface Wire {
  provider: 'openai' | 'cohere';
  /** Where chat requests arrive. */
  path: string;
  toolCall(id: string, name: string, args: Record<string, unknown>, usage: Usage): Answer;
  text(text: string, usage: Usage): Answer;
  /** An answer citing the passage of `request` whose text matches `about`, as this provider cites. */
  citing(request: Received, about: RegExp, text: string, usage: Usage): Answer;
  streamedToolCall(id: string, name: string, args: Record<string, unknown>, usage: Usage): StreamedAnswer;
  streamedText(pieces: string[], usage: Usage): StreamedAnswer;
  /** A tool result (the tool's response body) as a `tool` message of this format holds it. */
  toolResult(result: string): unknown;
  /** Asserts that `request` carried the retrieved passages the way this provider takes them. */
  expectPassages(request: Received, retrieved: Citation[]): void;
}

const messagesOf = (request: Received): WireMessage[] => (request.body.messages as WireMessage[] | undefined) ?? [];
const offeredTools = (request: Received): string[] => ((request.body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);
/** The tool calls a request sent back, with their arguments parsed. */
const callsSent = (request: Received) =>
  messagesOf(request).flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : [])).map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown }));
/** The tool results a request carried, paired with their call ids. */
const resultsSent = (request: Received) => messagesOf(request).flatMap((m) => (m.role === 'tool' ? [{ id: m.tool_call_id, content: m.content }] : []));

// OpenAI chat completions (https://platform.openai.com/docs/api-reference/chat)
const openaiUsage = (u: Usage) => ({ prompt_tokens: u.in, completion_tokens: u.out, total_tokens: u.in + u.out });
const openaiCompletion = (message: Record<string, unknown>, finishReason: string, u: Usage): Answer => openaiChatAnswer(message, { finishReason, model: 'fake', usage: { input: u.in, output: u.out } });
const openaiStream = (deltas: Array<Record<string, unknown>>, finishReason: string, u: Usage): StreamedAnswer => {
  const chunk = (choices: unknown[], usage: unknown = null): SseEvent => ({ data: { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'fake', choices, usage } });
  return {
    status: 200,
    events: [
      ...deltas.map((delta) => chunk([{ index: 0, delta, finish_reason: null }])),
      chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
      chunk([], openaiUsage(u)),
      { data: '[DONE]' },
    ],
  };
};
/** The numbered passages of an OpenAI system message: marker → text. */
const numberedPassages = (system: string): Map<number, string> =>
  new Map([...system.matchAll(/\[(\d+)\] \(([^)\n]+)\) ([\s\S]*?)(?=\n\n\[\d+\] \(|$)/g)].map((m) => [Number(m[1]), m[3] as string]));

const OPENAI: Wire = {
  provider: 'openai',
  path: '/v1/chat/completions',
  toolCall: (id, name, args, u) => openaiCompletion({ content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, 'tool_calls', u),
  text: (text, u) => openaiCompletion({ content: text }, 'stop', u),
  citing(request, about, text, u) {
    const system = String(messagesOf(request)[0]?.content ?? '');
    const marker = [...numberedPassages(system)].find(([, passage]) => about.test(passage))?.[0];
    return this.text(marker === undefined ? text : `${text} [${marker}]`, u);
  },
  streamedToolCall: (id, name, args, u) =>
    openaiStream(
      [
        { role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] },
        { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args).slice(0, 8) } }] },
        { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args).slice(8) } }] },
      ],
      'tool_calls',
      u,
    ),
  streamedText: (pieces, u) => openaiStream([{ role: 'assistant', content: '' }, ...pieces.map((content) => ({ content }))], 'stop', u),
  toolResult: (result) => result,
  expectPassages(request, retrieved) {
    const [system] = messagesOf(request);
    expect(system?.role).to.equal('system');
    const content = String(system?.content);
    expect(content.startsWith(`${INSTRUCTIONS}\n\n`), content).to.equal(true);
    expect(content).to.include(retrieved.map((c, i) => `[${i + 1}] (${c.filename}) ${c.text.trim()}`).join('\n\n'));
    expect(request.body).to.not.have.property('documents');
  },
};

// Cohere v2 chat (https://docs.cohere.com/reference/chat, chat-stream)
const cohereUsage = (u: Usage) => ({ billed_units: { input_tokens: u.in - 1, output_tokens: u.out - 1 }, tokens: { input_tokens: u.in, output_tokens: u.out } });
const cohereStream = (events: Array<Record<string, unknown>>, finishReason: string, u: Usage): StreamedAnswer => ({
  status: 200,
  events: [
    { type: 'message-start', id: 'chat-3', delta: { message: { role: 'assistant' } } },
    ...events,
    { type: 'message-end', delta: { finish_reason: finishReason, usage: cohereUsage(u) } },
  ].map((data): SseEvent => ({ event: data.type as string, data })),
});
const cohereText = (text: string, citations: unknown[], u: Usage): Answer => ({
  status: 200,
  body: { id: 'chat-1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }], citations }, usage: cohereUsage(u) },
});

const COHERE: Wire = {
  provider: 'cohere',
  path: '/v2/chat',
  toolCall: (id, name, args, u) => ({
    status: 200,
    body: {
      id: 'chat-2',
      finish_reason: 'TOOL_CALL',
      message: { role: 'assistant', tool_plan: `I will call ${name}.`, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
      usage: cohereUsage(u),
    },
  }),
  text: (text, u) => cohereText(text, [], u),
  citing(request, about, text, u) {
    const documents = (request.body.documents as Array<{ id: string; data: { text: string } }> | undefined) ?? [];
    const cited = documents.find((d) => about.test(d.data.text));
    const citations = cited ? [{ start: 0, end: text.length, text, type: 'TEXT_CONTENT', sources: [{ type: 'document', id: cited.id, document: { id: cited.id, text: cited.data.text } }] }] : [];
    return cohereText(text, citations, u);
  },
  streamedToolCall: (id, name, args, u) =>
    cohereStream(
      [
        { type: 'tool-plan-delta', delta: { message: { tool_plan: `I will call ${name}.` } } },
        { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id, type: 'function', function: { name, arguments: '' } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: JSON.stringify(args).slice(0, 8) } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: JSON.stringify(args).slice(8) } } } } },
        { type: 'tool-call-end', index: 0 },
      ],
      'TOOL_CALL',
      u,
    ),
  streamedText: (pieces, u) =>
    cohereStream(
      [
        { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
        ...pieces.map((text) => ({ type: 'content-delta', index: 0, delta: { message: { content: { text } } } })),
        { type: 'content-end', index: 0 },
      ],
      'COMPLETE',
      u,
    ),
  // a tool's JSON object goes to Cohere as one document holding it
  toolResult: (result) => [{ type: 'document', document: { data: JSON.parse(result) as unknown } }],
  expectPassages(request, retrieved) {
    expect(messagesOf(request)[0]).to.deep.equal({ role: 'system', content: INSTRUCTIONS });
    expect(request.body.documents).to.deep.equal(retrieved.map((c) => ({ id: c.chunk_id, data: { title: c.filename, text: c.text } })));
  },
};

interface ToolServer {
  base: string;
  /** `METHOD /path?query` of each request, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** The tools' backend: GET /orders/{order_id} and GET /tracking/{carrier}?tracking_number=. */
async function toolServer(): Promise<ToolServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const [, kind, key] = url.pathname.split('/');
    const body =
      kind === 'orders' && key === ORDER.order_id
        ? ORDER
        : kind === 'tracking' && key === TRACKING.carrier && url.searchParams.get('tracking_number') === TRACKING.tracking_number
          ? TRACKING
          : null;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const getOrder = (base: string) => ({
  name: 'get_order',
  description: 'Look up an order by its id: status, carrier and tracking number.',
  http: { url: `${base}/orders/{order_id}`, method: 'GET' },
  parameters: { type: 'object', properties: { order_id: { type: 'string', description: 'The order id, e.g. A-1001' } }, required: ['order_id'] },
  allowed_hosts: ['127.0.0.1'],
});
const getTracking = (base: string) => ({
  name: 'get_tracking',
  description: 'When a parcel arrives, by carrier and tracking number.',
  http: { url: `${base}/tracking/{carrier}`, method: 'GET' },
  parameters: { type: 'object', properties: { carrier: { type: 'string' }, tracking_number: { type: 'string' } }, required: ['carrier', 'tracking_number'] },
  allowed_hosts: ['127.0.0.1'],
});

/** A server-sent events body as its events, each `data` parsed. */
function sseEvents(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((e) => e.trim() !== '')
    .map((e) => ({ event: /^event: (.+)$/m.exec(e)?.[1] ?? '', data: JSON.parse(/^data: (.+)$/m.exec(e)?.[1] ?? 'null') as Record<string, unknown> }));
}

type Behaviour = (request: Received, count: number) => Answer | StreamedAnswer;

describe(`agent models (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  let provider: FakeProvider;
  let kb: string;
  let documentId: string;
  /** How the stand-in answers, by the model name an agent uses (each test its own). */
  const behaviours = new Map<string, Behaviour>();
  const tools: ToolServer[] = [];

  /** The requests the stand-in got for one model name. */
  const requestsFor = (model: string): Received[] => provider.received.filter((r) => r.body.model === model);

  before(async () => {
    provider = await fakeStreamingProvider((request) => {
      const model = String(request.body.model);
      const behaviour = behaviours.get(model);
      if (!behaviour) return { status: 404, body: { message: `no model ${model}`, error: { message: `no model ${model}` } } };
      return behaviour(request, requestsFor(model).length);
    });
    t = await startRuntime({
      env: { OPENAI_BASE_URL: `${provider.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai', COHERE_API_KEY: 'fake-cohere-key', COHERE_BASE_URL: provider.url, TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1' },
    });
    auth = token((await newProject(t)).key);
    kb = unique('handbook');
    expect((await post('/v1/knowledge', { name: kb })).status).to.equal(201);
    const doc = await post(`/v1/knowledge/${kb}/documents`, { filename: 'handbook.md', content: HANDBOOK, source_type: 'markdown' });
    expect(doc.status, JSON.stringify(doc.body)).to.equal(202);
    documentId = doc.body.id as string;
    await waitFor(async () => (await get(`/v1/knowledge/${kb}/documents/${documentId}`)).body.status === 'ready', { timeoutMs: 60_000, message: 'handbook ready' });
  });
  after(async () => {
    await t?.close();
    await provider?.close();
  });
  afterEach(async () => {
    await Promise.all(tools.splice(0).map((s) => s.close()));
  });

  const post = (path: string, body: object) => t.http.post(path).set('Authorization', auth).send(body);
  const get = (path: string) => t.http.get(path).set('Authorization', auth);

  const tooling = async (): Promise<ToolServer> => {
    const s = await toolServer();
    tools.push(s);
    return s;
  };

  /** Creates an agent on a fresh model of `wire`'s provider that answers as `behaviour`. */
  async function agentOn(wire: Wire, behaviour: Behaviour, body: Record<string, unknown> = {}, agentTools: object[] = []): Promise<{ agent: string; model: string }> {
    const model = unique(wire.provider === 'openai' ? 'gpt' : 'command');
    behaviours.set(model, behaviour);
    const agent = unique('agent');
    const created = await post('/v1/agents', { name: agent, model: `${wire.provider}/${model}`, instructions: INSTRUCTIONS, ...body });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.model).to.equal(`${wire.provider}/${model}`);
    for (const tool of agentTools) {
      const added = await post(`/v1/agents/${agent}/tools`, tool);
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
    }
    return { agent, model };
  }

  async function chat(agent: string, content: string): Promise<ChatResponse> {
    const res = await post(`/v1/agents/${agent}/chat`, { messages: [{ role: 'user', content }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as ChatResponse;
  }

  async function streamChat(agent: string, content: string) {
    const res = await t.http
      .post(`/v1/agents/${agent}/chat`)
      .set('Authorization', auth)
      .send({ messages: [{ role: 'user', content }], stream: true })
      .buffer(true)
      .parse((response, callback) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => callback(null, text));
      });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/event-stream/);
    return sseEvents(res.body as string);
  }

  const run = async (agent: string, runId: string): Promise<RunDetail> => {
    const res = await get(`/v1/agents/${agent}/runs/${runId}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as RunDetail;
  };

  for (const wire of [OPENAI, COHERE]) {
    describe(`${wire.provider}/<model>`, () => {
      it('runs a multi-step tool loop: each tool called once on its path, results sent back in the wire format, usage summed', async () => {
        const s = await tooling();
        const orderCall = wire.provider === 'openai' ? 'call_Xo1' : 'get_order_r7k2q';
        const trackingCall = wire.provider === 'openai' ? 'call_Xo2' : 'get_tracking_p3m9d';
        const { agent, model } = await agentOn(
          wire,
          (_request, count) => {
            if (count === 1) return wire.toolCall(orderCall, 'get_order', { order_id: ORDER.order_id }, { in: 100, out: 10 });
            if (count === 2) return wire.toolCall(trackingCall, 'get_tracking', { carrier: ORDER.carrier, tracking_number: ORDER.tracking_number }, { in: 200, out: 20 });
            return wire.text(FINAL, { in: 300, out: 30 });
          },
          {},
          [getOrder(s.base), getTracking(s.base)],
        );

        const response = await chat(agent, 'Where is order A-1001 and when will it arrive?');

        expect(response.message).to.deep.equal({ role: 'assistant', content: FINAL });
        expect(s.requests).to.deep.equal(['GET /orders/A-1001', 'GET /tracking/UPS?tracking_number=1Z999']);
        expect(response.trace.available_tools).to.deep.equal(['get_order', 'get_tracking']);
        expect(response.trace.tool_calls.map((c) => ({ tool: c.tool, status: c.status, http_status: c.http_status, arguments: JSON.parse(c.arguments) as unknown, result: JSON.parse(c.result) as unknown }))).to.deep.equal([
          { tool: 'get_order', status: 'ok', http_status: 200, arguments: { order_id: 'A-1001' }, result: ORDER },
          { tool: 'get_tracking', status: 'ok', http_status: 200, arguments: { carrier: 'UPS', tracking_number: '1Z999' }, result: TRACKING },
        ]);
        expect(response.trace.plan).to.deep.equal(['rules', 'llm:tools', 'tool:get_order', 'llm:tools', 'tool:get_tracking', 'llm:tools']);
        expect(response.trace.errors).to.deep.equal([]);
        expect(response.usage).to.deep.equal({ tokens_in: 600, tokens_out: 60 });

        const requests = requestsFor(model);
        expect(requests.map((r) => `${r.method} ${r.path}`)).to.deep.equal(Array(3).fill(`POST ${wire.path}`));
        for (const request of requests) expect(offeredTools(request)).to.deep.equal(['get_order', 'get_tracking']);
        const [first, second, third] = requests as [Received, Received, Received];
        expect(messagesOf(first).map((m) => m.role)).to.deep.equal(['system', 'user']);
        expect(resultsSent(first)).to.deep.equal([]);
        // the second request carries the first call and its result, the third both
        expect(messagesOf(second).map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool']);
        expect(callsSent(second)).to.deep.equal([{ id: orderCall, name: 'get_order', arguments: { order_id: 'A-1001' } }]);
        expect(resultsSent(second)).to.deep.equal([{ id: orderCall, content: wire.toolResult(JSON.stringify(ORDER)) }]);
        expect(messagesOf(third).map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
        expect(callsSent(third)).to.deep.equal([
          { id: orderCall, name: 'get_order', arguments: { order_id: 'A-1001' } },
          { id: trackingCall, name: 'get_tracking', arguments: { carrier: 'UPS', tracking_number: '1Z999' } },
        ]);
        expect(resultsSent(third)).to.deep.equal([
          { id: orderCall, content: wire.toolResult(JSON.stringify(ORDER)) },
          { id: trackingCall, content: wire.toolResult(JSON.stringify(TRACKING)) },
        ]);

        const stored = await run(agent, response.run_id);
        expect(stored).to.include({ status: 'ok', llm_calls: 3, tokens_in: 600, tokens_out: 60 });
        expect(stored.tool_calls).to.deep.equal(response.trace.tool_calls);
        expect(stored.plan).to.deep.equal(response.trace.plan);
        expect(stored.error).to.equal(null);
      });

      it('sends the retrieved passages to the model and turns its citation into the response’s citations', async () => {
        const text = 'Refunds are issued within 14 days of purchase.';
        const { agent, model } = await agentOn(wire, (request) => wire.citing(request, /Refunds are issued/, text, { in: 400, out: 12 }), { knowledge: [kb] });

        const response = await chat(agent, 'How long do refunds take?');

        expect(response.trace.retrieved.length).to.be.greaterThan(0);
        const requests = requestsFor(model);
        expect(requests).to.have.length(1);
        wire.expectPassages(requests[0] as Received, response.trace.retrieved);
        expect(response.message.content).to.equal(wire.provider === 'openai' ? `${text} [${response.trace.retrieved.findIndex((c) => /Refunds are issued/.test(c.text)) + 1}]` : text);
        expect(response.citations).to.have.length(1);
        expect(response.citations[0]).to.include({ document_id: documentId, filename: 'handbook.md' });
        expect(response.citations[0]?.text).to.match(/Refunds are issued within 14 days/);
        expect(response.trace.retrieved.map((c) => c.chunk_id)).to.include(response.citations[0]?.chunk_id);
        expect(response.trace.plan).to.deep.equal(['rules', 'retrieve', 'llm']);
        expect(response.usage).to.deep.equal({ tokens_in: 400, tokens_out: 12 });
        expect((await run(agent, response.run_id)).response?.citations).to.deep.equal(response.citations);
      });

      it('streams: a tool call, then the answer as delta events that join to the final response', async () => {
        const s = await tooling();
        const pieces = ['Order A-1001 ', 'shipped with UPS ', 'and is on its way.'];
        const { agent, model } = await agentOn(
          wire,
          (_request, count) => (count === 1 ? wire.streamedToolCall('call_s1', 'get_order', { order_id: ORDER.order_id }, { in: 50, out: 5 }) : wire.streamedText(pieces, { in: 70, out: 7 })),
          {},
          [getOrder(s.base)],
        );

        const events = await streamChat(agent, 'Where is order A-1001?');

        const last = events.at(-1);
        expect(last?.event).to.equal('response');
        const response = last?.data as unknown as ChatResponse;
        const deltas = events.filter((e) => e.event === 'delta').map((e) => e.data.text);
        expect(deltas).to.deep.equal(pieces);
        expect(deltas.join('')).to.equal(response.message.content);
        expect(events.map((e) => e.event)).to.deep.equal([...pieces.map(() => 'delta'), 'response']);
        expect(response.trace.tool_calls.map((c) => [c.tool, c.status])).to.deep.equal([['get_order', 'ok']]);
        expect(s.requests).to.deep.equal(['GET /orders/A-1001']);
        expect(response.usage).to.deep.equal({ tokens_in: 120, tokens_out: 12 });
        const requests = requestsFor(model);
        expect(requests.map((r) => r.body.stream)).to.deep.equal([true, true]);
        expect(resultsSent(requests[1] as Received)).to.deep.equal([{ id: 'call_s1', content: wire.toolResult(JSON.stringify(ORDER)) }]);
        expect(await run(agent, response.run_id)).to.include({ status: 'ok', llm_calls: 2 });
      });

      it('answers 503 {detail, code} with Retry-After while the provider is down, and keeps the failed run with its error', async () => {
        const { agent, model } = await agentOn(wire, () => OUTAGE);

        const res = await post(`/v1/agents/${agent}/chat`, { messages: [{ role: 'user', content: 'Hello?' }] });
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body).to.have.keys('detail', 'code');
        expect(res.body.code).to.equal('service_unavailable');
        expect(res.body.detail).to.be.a('string').and.match(/unavailable/);
        // neither where the provider lives nor its key reaches the client
        expect(res.body.detail).to.not.include(provider.url).and.not.include('fake-cohere-key').and.not.include('sk-fake-openai');
        expect(res.headers['retry-after']).to.match(/^\d+$/);
        expect(requestsFor(model).length).to.be.greaterThan(0);

        const runs = (await get(`/v1/agents/${agent}/runs`)).body.runs as Array<{ id: string; status: string }>;
        expect(runs.map((r) => r.status)).to.deep.equal(['failed']);
        const failed = await run(agent, (runs[0] as { id: string }).id);
        expect(failed.status).to.equal('failed');
        expect(failed.error).to.deep.equal({ status: 503, code: 'service_unavailable', detail: res.body.detail });
        expect(failed.response).to.equal(null);
        expect(failed.plan).to.deep.equal(['rules', 'llm']);

        // streamed, the failure is the stream's one event
        const events = await streamChat(agent, 'Hello again?');
        expect(events.map((e) => e.event)).to.deep.equal(['error']);
        expect(events[0]?.data).to.deep.include({ code: 'service_unavailable' });
        const after = (await get(`/v1/agents/${agent}/runs`)).body.runs as Array<{ status: string }>;
        expect(after.map((r) => r.status)).to.deep.equal(['failed', 'failed']);
      });
    });
  }

  describe('on a server without COHERE_API_KEY', () => {
    let bare: TestRuntime;
    let bareAuth: string;
    before(async () => {
      bare = await startRuntime({ env: { OPENAI_BASE_URL: `${provider.url}/v1` } });
      bareAuth = token((await newProject(bare)).key);
    });
    after(() => bare?.close());

    it('refuses a cohere/<model> agent with 400 model_unavailable, on create and on PATCH, storing nothing', async () => {
      const name = unique('agent');
      const refused = await bare.http.post('/v1/agents').set('Authorization', bareAuth).send({ name, model: 'cohere/x' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
      expect(refused.body.code).to.equal('model_unavailable');
      expect(refused.body.detail).to.include('COHERE_API_KEY');
      expect((await bare.http.get(`/v1/agents/${name}`).set('Authorization', bareAuth)).status).to.equal(404);

      const openai = await bare.http.post('/v1/agents').set('Authorization', bareAuth).send({ name, model: 'openai/x' });
      expect(openai.status, JSON.stringify(openai.body)).to.equal(201);
      const patched = await bare.http.patch(`/v1/agents/${name}`).set('Authorization', bareAuth).send({ model: 'cohere/x' });
      expect([patched.status, patched.body.code]).to.deep.equal([400, 'model_unavailable']);
      expect((await bare.http.get(`/v1/agents/${name}`).set('Authorization', bareAuth)).body.model).to.equal('openai/x');

      // the runtime with the key takes the same agent
      expect((await post('/v1/agents', { name: unique('agent'), model: 'cohere/x' })).status).to.equal(201);
    });
  });
});
