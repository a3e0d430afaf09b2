import { expect } from 'chai';
import type { ModelMessage, ModelReply, ModelRequest, Passage, ToolSpec } from '../../providers/language-model.js';
import type { ProvidersOptions } from '../../providers/provider.js';
import { Providers, type LanguageModels } from '../../providers/registry.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { tempDir } from '../helpers.js';
import { fakeStreamingProvider, openaiChatAnswer, rejection, type Answer, type FakeProvider, type SseEvent, type StreamedAnswer } from '../provider-server.js';

const log = createLogger('silent');

function modelsFor(env: Record<string, string>, options?: ProvidersOptions): LanguageModels {
  return new Providers(loadConfig({ DATA_DIR: tempDir(), ...env }), log, options).languageModels;
}

const REFUNDS: Passage = { id: 'chunk-refunds', document_id: 'doc-1', filename: 'refunds.md', score: 0.8, text: 'We refund any order within 30 days of delivery.' };
const SHIPPING: Passage = { id: 'chunk-shipping', document_id: 'doc-2', filename: 'shipping.md', score: 0.7, text: 'Standard shipping takes 3 to 5 business days.' };

const ORDER_STATUS: ToolSpec = {
  name: 'get_order_status',
  description: 'Look up the status of an order by its id.',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
};
const DELIVERY_ESTIMATE: ToolSpec = {
  name: 'get_delivery_estimate',
  description: 'When a parcel arrives, by carrier and tracking number.',
  parameters: { type: 'object', properties: { carrier: { type: 'string' }, tracking_number: { type: 'string' } }, required: ['carrier', 'tracking_number'] },
};

const ORDER_RESULT = '{"status":"shipped","carrier":"UPS","tracking_number":"1Z999"}';
const ESTIMATE_RESULT = '{"arrives":"2026-03-06"}';
const FINAL_ANSWER = 'Your order shipped with UPS and arrives on 6 March.';

function request(messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: 'You are the support assistant of Acme.', messages, documents: [], tools: [], fallback: 'Sorry.', ...extra };
}

const QUESTION: ModelMessage = { role: 'user', content: 'Where is order 12345 and when will it arrive?' };

/**
 * Drives a tool loop the way an agent does: call the model, run the tools it asks for (here:
 * canned results), append the call and the results, and call it again until it answers.
 */
async function toolLoop(chat: (request: ModelRequest) => Promise<ModelReply>): Promise<{ reply: ModelReply; messages: ModelMessage[] }> {
  const results: Record<string, string> = { get_order_status: ORDER_RESULT, get_delivery_estimate: ESTIMATE_RESULT };
  const messages: ModelMessage[] = [QUESTION];
  for (let step = 0; step < 5; step += 1) {
    const reply = await chat(request(messages, { tools: [ORDER_STATUS, DELIVERY_ESTIMATE] }));
    if (reply.toolCalls.length === 0) return { reply, messages };
    messages.push({ role: 'assistant', content: reply.text, tool_calls: reply.toolCalls });
    for (const call of reply.toolCalls) messages.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: results[call.name] ?? '{}' });
  }
  throw new Error('the model kept calling tools');
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  tool_plan?: string;
}

const unavailableAnswer: Answer = { status: 503, body: { message: 'overloaded', error: { message: 'overloaded' } } };

// ---------------------------------------------------------------------------------------------
// Cohere's v2 chat wire format (https://docs.cohere.com/reference/chat, chat-stream)

const COHERE_USAGE = { billed_units: { input_tokens: 90, output_tokens: 12 }, tokens: { input_tokens: 210, output_tokens: 14 } };

function cohereText(text: string, citations: unknown[] = []): Answer {
  return { status: 200, body: { id: 'chat-1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }], citations }, usage: COHERE_USAGE } };
}

function cohereToolCall(id: string, name: string, args: Record<string, unknown>): Answer {
  return {
    status: 200,
    body: {
      id: 'chat-2',
      finish_reason: 'TOOL_CALL',
      message: { role: 'assistant', tool_plan: `I will call ${name}.`, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
      usage: COHERE_USAGE,
    },
  };
}

function cohereCitation(start: number, text: string, ...ids: string[]): unknown {
  return { start, end: start + text.length, text, type: 'TEXT_CONTENT', sources: ids.map((id) => ({ type: 'document', id, document: { id, text: '…' } })) };
}

function cohereStream(events: Array<Record<string, unknown>>): StreamedAnswer {
  const all = [
    { type: 'message-start', id: 'chat-3', delta: { message: { role: 'assistant' } } },
    ...events,
    { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: COHERE_USAGE } },
  ];
  return { status: 200, events: all.map((data): SseEvent => ({ event: data.type as string, data })) };
}

function cohereDelta(text: string): Record<string, unknown> {
  return { type: 'content-delta', index: 0, delta: { message: { content: { text } } } };
}

describe('cohere language model (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('sends passages as documents and tools in v2 format, and cites the documents Cohere cites', async () => {
    const text = 'Refunds are possible within 30 days [of delivery].';
    server = await fakeStreamingProvider(() => cohereText(text, [cohereCitation(0, 'Refunds', 'chunk-refunds'), cohereCitation(20, '30 days', 'chunk-refunds', 'not-a-passage')]));
    const cohere = modelsFor({ COHERE_API_KEY: 'test-cohere-key', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    expect(cohere.model).to.equal('cohere/command-a-03-2025');

    const reply = await cohere.chat(request([{ role: 'user', content: 'Can I get a refund?' }], { documents: [REFUNDS, SHIPPING], tools: [ORDER_STATUS] }));
    expect(reply).to.deep.equal({ text, toolCalls: [], citations: ['chunk-refunds'], usage: { tokens_in: 210, tokens_out: 14 } });

    const [received] = server.received;
    expect([received?.method, received?.path]).to.deep.equal(['POST', '/v2/chat']);
    expect(received?.headers.authorization).to.equal('Bearer test-cohere-key');
    expect(received?.body.model).to.equal('command-a-03-2025');
    expect(received?.body.messages).to.deep.equal([
      { role: 'system', content: 'You are the support assistant of Acme.' },
      { role: 'user', content: 'Can I get a refund?' },
    ]);
    expect(received?.body.documents).to.deep.equal([
      { id: 'chunk-refunds', data: { title: 'refunds.md', text: REFUNDS.text } },
      { id: 'chunk-shipping', data: { title: 'shipping.md', text: SHIPPING.text } },
    ]);
    expect(received?.body.tools).to.deep.equal([{ type: 'function', function: { name: ORDER_STATUS.name, description: ORDER_STATUS.description, parameters: ORDER_STATUS.parameters } }]);
  });

  it('runs a multi-step tool loop, sending each call and its result back in Cohere\'s format', async () => {
    server = await fakeStreamingProvider((_request, count) => {
      if (count === 1) return cohereToolCall('get_order_status_a1', 'get_order_status', { order_id: '12345' });
      if (count === 2) return cohereToolCall('get_delivery_estimate_b2', 'get_delivery_estimate', { carrier: 'UPS', tracking_number: '1Z999' });
      return cohereText(FINAL_ANSWER);
    });
    const cohere = modelsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-r-08-2024');
    const { reply, messages } = await toolLoop((r) => cohere.chat(r));

    expect(reply.text).to.equal(FINAL_ANSWER);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => (m.role === 'assistant' ? [m.content, m.tool_calls] : null))).to.deep.equal([
      ['', [{ id: 'get_order_status_a1', name: 'get_order_status', arguments: { order_id: '12345' } }]],
      ['', [{ id: 'get_delivery_estimate_b2', name: 'get_delivery_estimate', arguments: { carrier: 'UPS', tracking_number: '1Z999' } }]],
    ]);
    expect(server.received).to.have.length(3);
    const third = server.received[2]?.body.messages as WireMessage[];
    expect(third.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(third[2]).to.deep.equal({
      role: 'assistant',
      tool_calls: [{ id: 'get_order_status_a1', type: 'function', function: { name: 'get_order_status', arguments: '{"order_id":"12345"}' } }],
    });
    expect(third[3]).to.deep.equal({
      role: 'tool',
      tool_call_id: 'get_order_status_a1',
      content: [{ type: 'document', document: { data: { status: 'shipped', carrier: 'UPS', tracking_number: '1Z999' } } }],
    });
    expect(third[5]).to.deep.equal({ role: 'tool', tool_call_id: 'get_delivery_estimate_b2', content: [{ type: 'document', document: { data: { arrives: '2026-03-06' } } }] });
    // the second request already carried the first result
    expect((server.received[1]?.body.messages as WireMessage[]).map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool']);
  });

  it('sends a text tool result as {result} and an assistant note next to tool calls as the tool plan', async () => {
    server = await fakeStreamingProvider(() => cohereText('Done.'));
    const cohere = modelsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    await cohere.chat(
      request([
        QUESTION,
        { role: 'assistant', content: 'Let me look that up.', tool_calls: [{ id: 't1', name: 'get_order_status', arguments: { order_id: '12345' } }] },
        { role: 'tool', tool_call_id: 't1', name: 'get_order_status', content: 'not found' },
      ]),
    );
    const messages = server.received[0]?.body.messages as WireMessage[];
    expect(messages[2]?.tool_plan).to.equal('Let me look that up.');
    expect(messages[3]?.content).to.deep.equal([{ type: 'document', document: { data: { result: 'not found' } } }]);
  });

  it('streams the answer to onText, with its citations and usage', async () => {
    server = await fakeStreamingProvider(() =>
      cohereStream([
        { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
        cohereDelta('Refunds are possible '),
        cohereDelta('within 30 days.'),
        { type: 'citation-start', index: 0, delta: { message: { citations: cohereCitation(22, 'within 30 days', 'chunk-refunds') } } },
        { type: 'citation-end', index: 0 },
        { type: 'content-end', index: 0 },
      ]),
    );
    const cohere = modelsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    const pieces: string[] = [];
    const reply = await cohere.chat(request([{ role: 'user', content: 'Refunds?' }], { documents: [REFUNDS] }), { onText: (d) => pieces.push(d) });
    expect(pieces).to.deep.equal(['Refunds are possible ', 'within 30 days.']);
    expect(reply).to.deep.equal({ text: 'Refunds are possible within 30 days.', toolCalls: [], citations: ['chunk-refunds'], usage: { tokens_in: 210, tokens_out: 14 } });
    expect(server.received[0]?.body.stream).to.equal(true);
  });

  it('streams a tool call without calling onText', async () => {
    server = await fakeStreamingProvider(() =>
      cohereStream([
        { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will look up the order.' } } },
        { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: 'call_x', type: 'function', function: { name: 'get_order_status', arguments: '' } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '{"order_' } } } } },
        { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: 'id": "12345"}' } } } } },
        { type: 'tool-call-end', index: 0 },
      ]),
    );
    const cohere = modelsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    const pieces: string[] = [];
    const reply = await cohere.chat(request([QUESTION], { tools: [ORDER_STATUS] }), { onText: (d) => pieces.push(d) });
    expect(reply.toolCalls).to.deep.equal([{ id: 'call_x', name: 'get_order_status', arguments: { order_id: '12345' } }]);
    expect([reply.text, pieces]).to.deep.equal(['', []]);
  });

  it('is unavailable (503) while Cohere answers 503 or nothing answers, and passes on a 400 as model_input_rejected', async () => {
    server = await fakeStreamingProvider(() => unavailableAnswer);
    const env = { COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url };
    const busy = await rejection(modelsFor(env, { maxRetries: 0 }).get('cohere/command-a-03-2025').chat(request([QUESTION])));
    expect([busy.status, busy.code]).to.deep.equal([503, 'service_unavailable']);
    const busyStream = await rejection(modelsFor(env, { maxRetries: 0 }).get('cohere/command-a-03-2025').chat(request([QUESTION]), { onText: () => undefined }));
    expect(busyStream.status).to.equal(503);
    await server.close();

    const unreachable = await rejection(modelsFor(env, { maxRetries: 0 }).get('cohere/command-a-03-2025').chat(request([QUESTION])));
    expect(unreachable.status).to.equal(503);

    server = await fakeStreamingProvider(() => ({ status: 400, body: { message: "invalid request: model 'command-x' not found" } }));
    const rejected = await rejection(modelsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-x').chat(request([QUESTION])));
    expect([rejected.status, rejected.code]).to.deep.equal([400, 'model_input_rejected']);
    expect(rejected.detail).to.include('not found');
  });
});

// ---------------------------------------------------------------------------------------------
// OpenAI's chat completions wire format (https://platform.openai.com/docs/api-reference/chat)

const OPENAI_USAGE = { prompt_tokens: 150, completion_tokens: 30, total_tokens: 180 };

const openaiMessage = (message: Record<string, unknown>, finishReason = 'stop'): Answer => openaiChatAnswer(message, { finishReason });

function openaiText(content: string): Answer {
  return openaiMessage({ content });
}

function openaiToolCall(id: string, name: string, args: Record<string, unknown>): Answer {
  return openaiMessage({ content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, 'tool_calls');
}

function openaiStream(deltas: Array<Record<string, unknown>>, finishReason = 'stop'): StreamedAnswer {
  const chunk = (choices: unknown[], usage: unknown = null): SseEvent => ({
    data: { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'gpt-4o-mini', choices, usage },
  });
  return {
    status: 200,
    events: [
      ...deltas.map((delta) => chunk([{ index: 0, delta, finish_reason: null }])),
      chunk([{ index: 0, delta: {}, finish_reason: finishReason }]),
      chunk([], OPENAI_USAGE),
      { data: '[DONE]' },
    ],
  };
}

describe('openai-compatible language model (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('puts the passages in the system message as a numbered list, and cites the passages whose [n] the answer holds', async () => {
    const text = 'Standard shipping takes 3 to 5 business days [2]. Refunds: 30 days [1][2]; see also [7].';
    server = await fakeStreamingProvider(() => openaiText(text));
    const openai = modelsFor({ OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'test-openai-key' }).get('openai/gpt-4o-mini');
    expect(openai.model).to.equal('openai/gpt-4o-mini');

    const reply = await openai.chat(request([{ role: 'user', content: 'How long is shipping?' }], { documents: [REFUNDS, SHIPPING], tools: [ORDER_STATUS] }));
    expect(reply).to.deep.equal({ text, toolCalls: [], citations: ['chunk-shipping', 'chunk-refunds'], usage: { tokens_in: 150, tokens_out: 30 } });

    const [received] = server.received;
    expect([received?.method, received?.path]).to.deep.equal(['POST', '/v1/chat/completions']);
    expect(received?.headers.authorization).to.equal('Bearer test-openai-key');
    expect(received?.body.model).to.equal('gpt-4o-mini');
    expect(received?.body).to.not.have.property('temperature');
    const messages = received?.body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    expect(messages[0]?.content).to.match(/^You are the support assistant of Acme\.\n\n/);
    expect(messages[0]?.content).to.include(`[1] (refunds.md) ${REFUNDS.text}\n\n[2] (shipping.md) ${SHIPPING.text}`);
    expect(messages[0]?.content).to.include('[1] or [1][3]');
    expect(received?.body.tools).to.deep.equal([{ type: 'function', function: { name: ORDER_STATUS.name, description: ORDER_STATUS.description, parameters: ORDER_STATUS.parameters } }]);
  });

  it('sends no system message and no tools when there is nothing to put in them', async () => {
    server = await fakeStreamingProvider(() => openaiText('Hello!'));
    const openai = modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/llama3.1:8b');
    const reply = await openai.chat({ ...request([{ role: 'user', content: 'Hi' }]), instructions: '' });
    expect([reply.text, reply.citations]).to.deep.equal(['Hello!', []]);
    expect(server.received[0]?.body.messages).to.deep.equal([{ role: 'user', content: 'Hi' }]);
    expect(server.received[0]?.body).to.not.have.property('tools');
    expect(server.received[0]?.headers.authorization).to.equal('Bearer unused');
  });

  it('runs a multi-step tool loop, sending each call and its result back as tool_calls and tool messages', async () => {
    server = await fakeStreamingProvider((_request, count) => {
      if (count === 1) return openaiToolCall('call_a1', 'get_order_status', { order_id: '12345' });
      if (count === 2) return openaiToolCall('call_b2', 'get_delivery_estimate', { carrier: 'UPS', tracking_number: '1Z999' });
      return openaiText(FINAL_ANSWER);
    });
    const openai = modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/gpt-4o-mini');
    const { reply, messages } = await toolLoop((r) => openai.chat(r));

    expect(reply).to.deep.include({ text: FINAL_ANSWER, toolCalls: [] });
    expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(server.received).to.have.length(3);
    const third = server.received[2]?.body.messages as WireMessage[];
    expect(third.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(third[2]).to.deep.equal({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_a1', type: 'function', function: { name: 'get_order_status', arguments: '{"order_id":"12345"}' } }],
    });
    expect(third[3]).to.deep.equal({ role: 'tool', tool_call_id: 'call_a1', content: ORDER_RESULT });
    expect(third[4]?.tool_calls?.[0]?.function).to.deep.equal({ name: 'get_delivery_estimate', arguments: '{"carrier":"UPS","tracking_number":"1Z999"}' });
    expect(third[5]).to.deep.equal({ role: 'tool', tool_call_id: 'call_b2', content: ESTIMATE_RESULT });
    expect((server.received[1]?.body.messages as WireMessage[]).map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool']);
  });

  it('streams the answer to onText and reads the usage of the last chunk', async () => {
    server = await fakeStreamingProvider(() => openaiStream([{ role: 'assistant', content: '' }, { content: 'Refunds take ' }, { content: '30 days [1].' }]));
    const openai = modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/gpt-4o-mini');
    const pieces: string[] = [];
    const reply = await openai.chat(request([{ role: 'user', content: 'Refunds?' }], { documents: [REFUNDS] }), { onText: (d) => pieces.push(d) });
    expect(pieces).to.deep.equal(['Refunds take ', '30 days [1].']);
    expect(reply).to.deep.equal({ text: 'Refunds take 30 days [1].', toolCalls: [], citations: ['chunk-refunds'], usage: { tokens_in: 150, tokens_out: 30 } });
    expect(server.received[0]?.body).to.deep.include({ stream: true, stream_options: { include_usage: true } });
  });

  it('joins streamed tool-call deltas by index, without calling onText', async () => {
    server = await fakeStreamingProvider(() =>
      openaiStream(
        [
          { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_s1', type: 'function', function: { name: 'get_order_status', arguments: '' } }] },
          { tool_calls: [{ index: 1, id: 'call_s2', type: 'function', function: { name: 'get_delivery_estimate', arguments: '{"carrier":' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '{"order_id":' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '"12345"}' } }] },
          { tool_calls: [{ index: 1, function: { arguments: '"UPS","tracking_number":"1Z999"}' } }] },
        ],
        'tool_calls',
      ),
    );
    const openai = modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/gpt-4o-mini');
    const pieces: string[] = [];
    const reply = await openai.chat(request([QUESTION], { tools: [ORDER_STATUS, DELIVERY_ESTIMATE] }), { onText: (d) => pieces.push(d) });
    expect(reply.toolCalls).to.deep.equal([
      { id: 'call_s1', name: 'get_order_status', arguments: { order_id: '12345' } },
      { id: 'call_s2', name: 'get_delivery_estimate', arguments: { carrier: 'UPS', tracking_number: '1Z999' } },
    ]);
    expect([reply.text, pieces]).to.deep.equal(['', []]);
  });

  it('takes unparsable tool arguments as {}', async () => {
    server = await fakeStreamingProvider(() => openaiMessage({ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_order_status', arguments: '{"order_id": 12' } }] }, 'tool_calls'));
    const reply = await modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').chat(request([QUESTION], { tools: [ORDER_STATUS] }));
    expect(reply.toolCalls).to.deep.equal([{ id: 'c1', name: 'get_order_status', arguments: {} }]);
  });

  it('is unavailable (503) while the server answers 503, without a choice, or not at all, and passes on a 400 as model_input_rejected', async () => {
    server = await fakeStreamingProvider(() => unavailableAnswer);
    const env = { OPENAI_BASE_URL: server.url };
    const busy = await rejection(modelsFor(env, { maxRetries: 0 }).get('openai/m').chat(request([QUESTION])));
    expect([busy.status, busy.code]).to.deep.equal([503, 'service_unavailable']);
    const busyStream = await rejection(modelsFor(env, { maxRetries: 0 }).get('openai/m').chat(request([QUESTION]), { onText: () => undefined }));
    expect(busyStream.status).to.equal(503);
    await server.close();

    const unreachable = await rejection(modelsFor(env, { maxRetries: 0 }).get('openai/m').chat(request([QUESTION])));
    expect(unreachable.status).to.equal(503);

    server = await fakeStreamingProvider(() => ({ status: 200, body: { id: 'x', object: 'chat.completion', choices: [], usage: {} } }));
    expect((await rejection(modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').chat(request([QUESTION])))).status).to.equal(503);
    await server.close();

    server = await fakeStreamingProvider(() => ({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error' } } }));
    const rejected = await rejection(modelsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').chat(request([QUESTION])));
    expect([rejected.status, rejected.code]).to.deep.equal([400, 'model_input_rejected']);
    expect(rejected.detail).to.include('maximum context length');
  });
});

describe('language model names', () => {
  it('accepts local, cohere/<model> and openai/<model> in any provider case, and shares one model per name', () => {
    const models = modelsFor({ COHERE_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(models.validate(' LOCAL ')).to.equal('local');
    expect(models.validate('Cohere/command-a-03-2025')).to.equal('cohere/command-a-03-2025');
    expect(models.validate('OPENAI/llama3.1:8b')).to.equal('openai/llama3.1:8b');
    expect(models.get('Local')).to.equal(models.get());
    expect(models.get('local').model).to.equal('local');
    expect(models.get('COHERE/command-r').model).to.equal('cohere/command-r');
  });

  it('refuses unknown names (400 unknown_model) and unconfigured providers (400 model_unavailable)', () => {
    const models = modelsFor({});
    for (const name of ['gpt-4o', 'anthropic/claude', 'local/tiny', 'cohere/', 'openai/two words']) {
      const error = (() => {
        try {
          models.validate(name);
        } catch (err) {
          return err as { status: number; code: string };
        }
        return expect.fail(`${name} was accepted`);
      })();
      expect([error.status, error.code], name).to.deep.equal([400, 'unknown_model']);
    }
    expect(() => models.get('cohere/command-a-03-2025')).to.throw().with.property('code', 'model_unavailable');
    expect(() => models.validate('openai/gpt-4o-mini')).to.throw(/OPENAI_BASE_URL/).with.property('status', 400);
  });
});
