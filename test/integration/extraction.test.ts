import { expect } from 'chai';
import type { ExtractionSchema } from '../../providers/extractor.js';
import type { ProvidersOptions } from '../../providers/provider.js';
import { Providers, type Extractors } from '../../providers/registry.js';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { tempDir } from '../helpers.js';
import { fakeProvider, openaiChatAnswer, rejection, type Answer, type FakeProvider, type Received } from '../provider-server.js';

const log = createLogger('silent');

function extractorsFor(env: Record<string, string>, options?: ProvidersOptions): Extractors {
  return new Providers(loadConfig({ DATA_DIR: tempDir(), ...env }), log, options).extractors;
}


const LEAD: ExtractionSchema = {
  type: 'object',
  title: 'lead profile',
  properties: {
    name: { type: 'string', description: "The lead's full name." },
    email: { type: 'string' },
    seats: { type: 'integer' },
    budget: { type: 'number' },
    stage: { type: 'string', enum: ['new', 'in_progress', 'won'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'email'],
  additionalProperties: false,
};

/** What a model that does not follow the rules might answer: extra keys, wrong types, an enum in another spelling. */
const MODEL_JSON = {
  name: 'Jane Doe',
  email: 'jane@acme.com',
  seats: 2.5,
  budget: 1200,
  stage: 'In Progress',
  tags: ['crm', 7, ''],
  company: 'Acme (not in the schema)',
};
const SANITISED = { name: 'Jane Doe', email: 'jane@acme.com', budget: 1200, stage: 'in_progress', tags: ['crm'] };

/** Cohere's v2 chat response (https://docs.cohere.com/reference/chat). */
function cohereAnswer(text: string): Answer {
  return {
    status: 200,
    body: {
      id: 'chat-1',
      finish_reason: 'COMPLETE',
      message: { role: 'assistant', content: [{ type: 'text', text }] },
      usage: { billed_units: { input_tokens: 120, output_tokens: 30 }, tokens: { input_tokens: 180, output_tokens: 30 } },
    },
  };
}

/** OpenAI's chat completion response with `content`. */
const openaiAnswer = (content: string, model = 'gpt-4o-mini'): Answer => openaiChatAnswer({ content }, { model });

const unavailableAnswer: Answer = { status: 503, body: { message: 'overloaded', error: { message: 'overloaded' } } };
const TEXT = "Hi, I'm Jane Doe (jane@acme.com); our budget is $1,200.";

const CONVERSATION = [
  { role: 'user', content: 'I am allergic to peanuts.' },
  { role: 'assistant', content: 'Noted.' },
];

interface ChatMessage {
  role: string;
  content: string;
}

describe('cohere extractor (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('posts a JSON-mode chat to /v2/chat with the relaxed schema, and keeps only valid values', async () => {
    server = await fakeProvider(() => cohereAnswer(JSON.stringify(MODEL_JSON)));
    const cohere = extractorsFor({ COHERE_API_KEY: 'test-cohere-key', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    expect(cohere.model).to.equal('cohere/command-a-03-2025');

    expect(await cohere.extract(LEAD, { text: TEXT })).to.deep.equal(SANITISED);

    expect(server.received).to.have.length(1);
    const [request] = server.received as [Received];
    expect([request.method, request.path]).to.deep.equal(['POST', '/v2/chat']);
    expect(request.headers.authorization).to.equal('Bearer test-cohere-key');
    expect(request.body).to.include({ model: 'command-a-03-2025', temperature: 0 });
    const format = request.body.response_format as { type: string; json_schema: Record<string, unknown> };
    expect(format.type).to.equal('json_object');
    expect(format.json_schema).to.not.have.property('required');
    expect(format.json_schema).to.include({ type: 'object', additionalProperties: false });
    expect(format.json_schema.properties).to.deep.equal(LEAD.properties);
    const messages = request.body.messages as ChatMessage[];
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    expect(messages[0]?.content).to.include('explicitly stated');
    expect(messages[1]?.content).to.include(TEXT);
  });

  it('sends a conversation as a transcript', async () => {
    server = await fakeProvider(() => cohereAnswer('{}'));
    const cohere = extractorsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-r-08-2024');
    const found = await cohere.extract(LEAD, { messages: [{ role: 'assistant', content: 'Your email?' }, { role: 'user', content: 'jane@acme.com' }] });
    expect(found).to.deep.equal({});
    expect((server.received[0]?.body.messages as ChatMessage[])[1]?.content).to.include('assistant: Your email?\nuser: jane@acme.com');
  });

  it('is unavailable (503) while Cohere answers 503, and rides out a single 503', async () => {
    server = await fakeProvider(() => unavailableAnswer);
    const env = { COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url };
    const error = await rejection(extractorsFor(env, { maxRetries: 0 }).get('cohere/command-a-03-2025').extract(LEAD, { text: TEXT }));
    expect([error.status, error.code]).to.deep.equal([503, 'service_unavailable']);
    expect(error.headers).to.have.property('Retry-After');
    await server.close();

    server = await fakeProvider((_request, count) => (count === 1 ? unavailableAnswer : cohereAnswer('{"name": "Jane Doe"}')));
    const found = await extractorsFor({ ...env, COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025').extract(LEAD, { text: TEXT });
    expect(found).to.deep.equal({ name: 'Jane Doe' });
  });

  it('is unavailable (503) when the key is refused or the answer holds no JSON, and passes on a 400 refusal', async () => {
    server = await fakeProvider(() => ({ status: 401, body: { message: 'invalid api token' } }));
    const refused = await rejection(extractorsFor({ COHERE_API_KEY: 'bad', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025').extract(LEAD, { text: TEXT }));
    expect([refused.status, refused.detail]).to.deep.equal([503, 'Cohere rejected COHERE_API_KEY (401: invalid api token); an operator must fix it.']);
    await server.close();

    server = await fakeProvider(() => cohereAnswer('I cannot help with that.'));
    const garbled = await rejection(extractorsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025').extract(LEAD, { text: TEXT }));
    expect(garbled.status).to.equal(503);
    await server.close();

    server = await fakeProvider(() => ({ status: 400, body: { message: "invalid request: model 'command-x' not found" } }));
    const rejected = await rejection(extractorsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-x').extract(LEAD, { text: TEXT }));
    expect([rejected.status, rejected.code]).to.deep.equal([400, 'extract_input_rejected']);
    expect(rejected.detail).to.include('not found');
  });

  it('asks for the facts of a conversation as {"facts": [string]} and keeps clean, distinct ones', async () => {
    server = await fakeProvider(() => cohereAnswer('{"facts": ["Is allergic to peanuts", "  is allergic to peanuts ", "", "unknown", 7, "Prefers salty snacks"]}'));
    const cohere = extractorsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }).get('cohere/command-a-03-2025');
    const facts = await cohere.facts(CONVERSATION);
    expect(facts).to.deep.equal(['Is allergic to peanuts', 'Prefers salty snacks']);
    const [request] = server.received as [Received];
    expect([request.method, request.path]).to.deep.equal(['POST', '/v2/chat']);
    const format = request.body.response_format as { type: string; json_schema: Record<string, unknown> };
    expect(format).to.deep.equal({ type: 'json_object', json_schema: { type: 'object', properties: { facts: { type: 'array', items: { type: 'string' } } }, required: ['facts'], additionalProperties: false } });
    const messages = request.body.messages as ChatMessage[];
    expect(messages[0]?.content).to.include('worth remembering');
    expect(messages[1]?.content).to.include('user: I am allergic to peanuts.\nassistant: Noted.');
  });

  it('is unavailable (503) when nothing answers at COHERE_BASE_URL', async () => {
    server = await fakeProvider(() => cohereAnswer('{}'));
    await server.close();
    const cohere = extractorsFor({ COHERE_API_KEY: 'k', COHERE_BASE_URL: server.url }, { maxRetries: 0 }).get('cohere/command-a-03-2025');
    expect((await rejection(cohere.extract(LEAD, { text: TEXT }))).status).to.equal(503);
  });
});

describe('openai-compatible extractor (against a local server)', () => {
  let server: FakeProvider;
  afterEach(() => server?.close());

  it('posts a json_schema chat completion to /chat/completions, and keeps only valid values', async () => {
    server = await fakeProvider(() => openaiAnswer(JSON.stringify(MODEL_JSON)));
    const openai = extractorsFor({ OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'test-openai-key' }).get('openai/gpt-4o-mini');
    expect(openai.model).to.equal('openai/gpt-4o-mini');

    expect(await openai.extract(LEAD, { text: TEXT })).to.deep.equal(SANITISED);

    expect(server.received).to.have.length(1);
    const [request] = server.received as [Received];
    expect([request.method, request.path]).to.deep.equal(['POST', '/v1/chat/completions']);
    expect(request.headers.authorization).to.equal('Bearer test-openai-key');
    expect(request.body).to.include({ model: 'gpt-4o-mini', temperature: 0 });
    const format = request.body.response_format as { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
    expect(format.type).to.equal('json_schema');
    expect(format.json_schema).to.include({ name: 'lead_profile', strict: false });
    expect(format.json_schema.schema).to.not.have.property('required');
    expect(format.json_schema.schema.properties).to.deep.equal(LEAD.properties);
    const messages = request.body.messages as ChatMessage[];
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    expect(messages[1]?.content).to.include(TEXT);
  });

  it('reads JSON wrapped in a Markdown fence, from a server that needs no key', async () => {
    server = await fakeProvider((request) => openaiAnswer('```json\n{"name": "Jane Doe", "seats": 3}\n```', request.body.model as string));
    const openai = extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/llama3.1:8b');
    expect(await openai.extract(LEAD, { text: TEXT })).to.deep.equal({ name: 'Jane Doe', seats: 3 });
    expect(server.received[0]?.path).to.equal('/chat/completions');
    expect(server.received[0]?.body.model).to.equal('llama3.1:8b');
    expect(server.received[0]?.headers.authorization).to.equal('Bearer unused');
  });

  it('is unavailable (503) while the server answers 503, and rides out a single 503', async () => {
    server = await fakeProvider(() => unavailableAnswer);
    const error = await rejection(extractorsFor({ OPENAI_BASE_URL: server.url }, { maxRetries: 0 }).get('openai/m').extract(LEAD, { text: TEXT }));
    expect([error.status, error.code]).to.deep.equal([503, 'service_unavailable']);
    await server.close();

    server = await fakeProvider((_request, count) => (count === 1 ? unavailableAnswer : openaiAnswer('{"email": "jane@acme.com"}')));
    expect(await extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').extract(LEAD, { text: TEXT })).to.deep.equal({ email: 'jane@acme.com' });
  });

  it('asks for the facts of a conversation with a json_schema response format', async () => {
    server = await fakeProvider(() => openaiAnswer('{"facts": ["Is allergic to peanuts"], "note": "ignored"}'));
    const openai = extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/gpt-4o-mini');
    expect(await openai.facts(CONVERSATION)).to.deep.equal(['Is allergic to peanuts']);
    const format = server.received[0]?.body.response_format as { type: string; json_schema: { name: string; schema: Record<string, unknown> } };
    expect(format.type).to.equal('json_schema');
    expect(format.json_schema.name).to.equal('facts');
    expect(format.json_schema.schema.required).to.deep.equal(['facts']);
    await server.close();

    server = await fakeProvider(() => openaiAnswer('No facts here.'));
    expect((await rejection(extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').facts(CONVERSATION))).status).to.equal(503);
  });

  it('passes on why the server refused a request as a 400, and a content-less answer is a 503', async () => {
    server = await fakeProvider(() => ({
      status: 400,
      body: { error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", type: 'invalid_request_error' } },
    }));
    const error = await rejection(extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/gpt-3.5-turbo').extract(LEAD, { text: TEXT }));
    expect([error.status, error.code]).to.deep.equal([400, 'extract_input_rejected']);
    expect(error.detail).to.include('json_schema');
    await server.close();

    server = await fakeProvider(() => ({ status: 200, body: { id: 'x', object: 'chat.completion', choices: [], usage: {} } }));
    expect((await rejection(extractorsFor({ OPENAI_BASE_URL: server.url }).get('openai/m').extract(LEAD, { text: TEXT }))).status).to.equal(503);
  });
});
