import { expect } from 'chai';
import type { ModelMessage, ModelReply, ModelRequest, Passage, ToolSpec } from '../../providers/language-model.js';
import { LocalLanguageModel } from '../../providers/local/local.model.js';

const model = new LocalLanguageModel();
const FALLBACK = "Sorry, I don't know that yet.";

const REFUNDS: Passage = {
  id: 'chunk-refunds',
  document_id: 'doc-1',
  filename: 'refunds.md',
  score: 0.82,
  text: '# Refund policy\nWe refund any order within 30 days of delivery. Refunds are paid to the original payment method within 5 business days. Items marked final sale cannot be returned.',
};
const SHIPPING: Passage = {
  id: 'chunk-shipping',
  document_id: 'doc-2',
  filename: 'shipping.md',
  score: 0.75,
  text: 'Standard shipping takes 3 to 5 business days. Express shipping arrives the next business day when ordered before 2 pm. We ship to the EU, the UK and Switzerland.',
};
const ACCOUNT: Passage = {
  id: 'chunk-account',
  document_id: 'doc-3',
  filename: 'account.md',
  score: 0.6,
  text: 'To reset your password, open Settings and choose Security. A reset link is emailed to you and expires after one hour.',
};
const PASSAGES = [REFUNDS, SHIPPING, ACCOUNT];

const ORDER_STATUS: ToolSpec = {
  name: 'get_order_status',
  description: 'Look up the status and tracking of a customer order by its order id.',
  parameters: { type: 'object', properties: { order_id: { type: 'string', description: 'The order number.' } }, required: ['order_id'] },
};
const WEATHER: ToolSpec = {
  name: 'getWeather',
  description: 'The current weather forecast for a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, units: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
};
const TICKET_PRIORITY: ToolSpec = {
  name: 'set_ticket_priority',
  description: 'Change the priority of a support ticket.',
  parameters: {
    type: 'object',
    properties: { ticket_id: { type: 'integer' }, priority: { type: 'string', enum: ['low', 'normal', 'urgent'] } },
    required: ['ticket_id', 'priority'],
  },
};
const TOOLS = [ORDER_STATUS, WEATHER, TICKET_PRIORITY];

function request(message: string | ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  const messages: ModelMessage[] = typeof message === 'string' ? [{ role: 'user', content: message }] : message;
  return { instructions: 'You are the support assistant of Acme.', messages, documents: [], tools: [], fallback: FALLBACK, ...extra };
}

/** Every sentence of the answer is one of the passages' sentences, word for word. */
function quotesPassages(reply: ModelReply, passages: Passage[]): void {
  const text = passages.map((p) => p.text).join(' ');
  for (const sentence of reply.text.split(/(?<=\.)\s+/)) expect(text).to.include(sentence);
}

describe('local language model', () => {
  describe('extractive answers', () => {
    it('answers from the passage that holds the answer, verbatim, and cites it', async () => {
      const reply = await model.chat(request('How long does a refund take?', { documents: PASSAGES }));
      expect(reply.text).to.equal('We refund any order within 30 days of delivery. Refunds are paid to the original payment method within 5 business days.');
      expect(reply.citations).to.deep.equal(['chunk-refunds']);
      expect(reply.toolCalls).to.deep.equal([]);
      quotesPassages(reply, PASSAGES);
    });

    it('picks the best sentence by overlap with the question, across passages', async () => {
      const reply = await model.chat(request('Do you ship to Switzerland?', { documents: PASSAGES }));
      expect(reply.text).to.include('We ship to the EU, the UK and Switzerland.');
      expect(reply.citations).to.deep.equal(['chunk-shipping']);
      quotesPassages(reply, PASSAGES);

      const reset = await model.chat(request('How can I reset my password?', { documents: PASSAGES }));
      expect(reset.text).to.include('To reset your password, open Settings and choose Security.');
      expect(reset.citations).to.deep.equal(['chunk-account']);
    });

    it('cites a second passage when it answers as well as the first', async () => {
      const reply = await model.chat(request('Are refunds and express shipping paid within business days?', { documents: PASSAGES }));
      expect(reply.citations).to.have.members(['chunk-refunds', 'chunk-shipping']);
      expect(reply.text).to.include('Refunds are paid to the original payment method within 5 business days.');
      expect(reply.text).to.include('Express shipping arrives the next business day');
      quotesPassages(reply, PASSAGES);
    });

    it('answers with the fallback, citing nothing, when no passage shares a word with the question', async () => {
      const unrelated = await model.chat(request('What is the weather on Mars?', { documents: PASSAGES }));
      expect(unrelated).to.deep.include({ text: FALLBACK, citations: [], toolCalls: [] });
      const noDocuments = await model.chat(request('How long does a refund take?'));
      expect(noDocuments).to.deep.include({ text: FALLBACK, citations: [] });
      const noQuestion = await model.chat(request([], { documents: PASSAGES }));
      expect(noQuestion.text).to.equal(FALLBACK);
    });

    it('answers the latest user message of the conversation', async () => {
      const reply = await model.chat(
        request(
          [
            { role: 'user', content: 'How do I reset my password?' },
            { role: 'assistant', content: 'Open Settings and choose Security.' },
            { role: 'user', content: 'And do you ship to Switzerland?' },
          ],
          { documents: PASSAGES },
        ),
      );
      expect(reply.citations).to.deep.equal(['chunk-shipping']);
    });

    it('is deterministic, counts words as tokens, and streams the answer in pieces', async () => {
      const req = request('How long does a refund take?', { documents: PASSAGES, tools: TOOLS });
      const first = await model.chat(req);
      const pieces: string[] = [];
      const second = await model.chat(req, { onText: (delta) => pieces.push(delta) });
      expect(second).to.deep.equal(first);
      expect(pieces.length).to.be.greaterThan(1);
      expect(pieces.join('')).to.equal(first.text);
      expect(first.usage.tokens_out).to.equal(first.text.split(/\s+/).length);
      expect(first.usage.tokens_in).to.be.greaterThan(60);
    });

    // CPU time, not the clock: a machine busy with other work delays a call without making it cost more
    it('answers 10 passages of 1 000 characters with under 10 ms of CPU a call', async () => {
      const vocabulary = 'invoice billing plan seats upgrade discount annual monthly account admin workspace export report storage limit backup region support'.split(' ');
      const documents: Passage[] = Array.from({ length: 10 }, (_, p) => {
        let text = '';
        for (let s = 0; text.length < 1000; s += 1) {
          const words = Array.from({ length: 12 }, (_, w) => vocabulary[(p * 7 + s * 5 + w * 3) % vocabulary.length] as string);
          text += `${words.join(' ')} ${p}-${s}. `.replace(/^./, (c) => c.toUpperCase());
        }
        return { id: `chunk-${p}`, document_id: `doc-${p}`, filename: `doc-${p}.md`, score: 1 - p / 20, text: text.slice(0, 1000) };
      });
      const req = request('How do I export a billing report for the annual plan?', { documents, tools: TOOLS });
      await model.chat(req);
      const runs = 50;
      const started = process.cpuUsage();
      for (let i = 0; i < runs; i += 1) await model.chat(req);
      const used = process.cpuUsage(started);
      const perCallMs = (used.user + used.system) / 1000 / runs;
      expect(perCallMs).to.be.below(10);
    });
  });

  describe('tool routing', () => {
    it('looks an order up by its id, however the id is written', async () => {
      for (const [message, id] of [
        ['Where is my order #12345?', '12345'],
        ['Can you check order number 98765 for me', '98765'],
        ['order_id: A-778, what is its status?', 'A-778'],
        ['What is the status of ORD-5521?', 'ORD-5521'],
      ] as const) {
        const reply = await model.chat(request(message, { tools: TOOLS, documents: PASSAGES }));
        expect(reply.toolCalls, message).to.deep.equal([{ id: 'call_1', name: 'get_order_status', arguments: { order_id: id } }]);
        expect(reply).to.deep.include({ text: '', citations: [] });
      }
    });

    it('reads a city for the weather, and an enum value when one is written', async () => {
      const paris = await model.chat(request("What's the weather in Paris?", { tools: TOOLS }));
      expect(paris.toolCalls).to.deep.equal([{ id: 'call_1', name: 'getWeather', arguments: { city: 'Paris' } }]);
      const newYork = await model.chat(request('Weather forecast for New York in fahrenheit, please', { tools: TOOLS }));
      expect(newYork.toolCalls[0]?.arguments).to.deep.equal({ city: 'New York', units: 'fahrenheit' });
      const labelled = await model.chat(request('weather, city: São Paulo', { tools: TOOLS }));
      expect(labelled.toolCalls[0]?.arguments).to.deep.equal({ city: 'São Paulo' });
    });

    it('reads an integer and a required enum value', async () => {
      const reply = await model.chat(request('Please make ticket 4411 urgent', { tools: TOOLS }));
      expect(reply.toolCalls).to.deep.equal([{ id: 'call_1', name: 'set_ticket_priority', arguments: { ticket_id: 4411, priority: 'urgent' } }]);
    });

    it('does not call a tool when a required argument is missing', async () => {
      const noId = await model.chat(request('Where is my order?', { tools: TOOLS, documents: PASSAGES }));
      expect(noId.toolCalls).to.deep.equal([]);
      const noCity = await model.chat(request('What is the weather like?', { tools: TOOLS }));
      expect(noCity).to.deep.include({ toolCalls: [], text: FALLBACK });
      const noPriority = await model.chat(request('Change the priority of ticket 4411', { tools: TOOLS }));
      expect(noPriority.toolCalls).to.deep.equal([]);
    });

    it('does not call a tool for an unrelated message, and answers from the passages instead', async () => {
      const reply = await model.chat(request('How long does a refund take?', { tools: TOOLS, documents: PASSAGES }));
      expect(reply.toolCalls).to.deep.equal([]);
      expect(reply.citations).to.deep.equal(['chunk-refunds']);
      const pizza = await model.chat(request('I want to order a pizza in Rome', { tools: TOOLS }));
      expect(pizza.toolCalls).to.deep.equal([]);
    });

    it('numbers its call after the calls earlier in the conversation, and never streams a call', async () => {
      const pieces: string[] = [];
      const reply = await model.chat(
        request(
          [
            { role: 'user', content: 'Where is my order 12345?' },
            { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_order_status', arguments: { order_id: '12345' } }] },
            { role: 'tool', tool_call_id: 'call_1', name: 'get_order_status', content: '{"status":"shipped"}' },
            { role: 'assistant', content: 'get_order_status returned status: shipped.' },
            { role: 'user', content: 'And the weather in Berlin?' },
          ],
          { tools: TOOLS },
        ),
        { onText: (delta) => pieces.push(delta) },
      );
      expect(reply.toolCalls).to.deep.equal([{ id: 'call_2', name: 'getWeather', arguments: { city: 'Berlin' } }]);
      expect(pieces).to.deep.equal([]);
    });
  });

  describe('answers after tool calls', () => {
    const turn = (content: string): ModelMessage[] => [
      { role: 'user', content: 'Where is my order #12345?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_order_status', arguments: { order_id: '12345' } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'get_order_status', content },
    ];

    it("states a JSON result's fields and calls no tool again", async () => {
      const reply = await model.chat(request(turn('{"order_id":"12345","status":"shipped","carrier":"UPS","items":["mug","tea"],"eta":null}'), { tools: TOOLS }));
      expect(reply.toolCalls).to.deep.equal([]);
      expect(reply.text).to.equal('get_order_status returned order_id: 12345, status: shipped, carrier: UPS, items: [mug, tea], eta: none.');
    });

    it('repeats a text result, shortened, and adds what the passages say when they are relevant', async () => {
      const long = `Shipped on Monday. ${'Tracking details follow. '.repeat(40)}`;
      const text = await model.chat(request(turn(long), { tools: TOOLS }));
      expect(text.text.startsWith('get_order_status returned: Shipped on Monday.')).to.equal(true);
      expect(text.text.length).to.be.below(360);

      const messages = turn('{"status":"delivered"}');
      messages[0] = { role: 'user', content: 'Can I get a refund for order 12345 after delivery?' };
      const grounded = await model.chat(request(messages, { tools: TOOLS, documents: PASSAGES }));
      expect(grounded.text).to.match(/^get_order_status returned status: delivered\. We refund any order within 30 days of delivery\./);
      expect(grounded.citations).to.deep.equal(['chunk-refunds']);
    });

    it('states every result of the turn, and an empty one as such', async () => {
      const reply = await model.chat(
        request([
          { role: 'user', content: 'Weather in Oslo and order 777123?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              { id: 'call_1', name: 'getWeather', arguments: { city: 'Oslo' } },
              { id: 'call_2', name: 'get_order_status', arguments: { order_id: '777123' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', name: 'getWeather', content: '{"temperature":-3,"sky":"snow"}' },
          { role: 'tool', tool_call_id: 'call_2', name: 'get_order_status', content: '' },
        ]),
      );
      expect(reply.text).to.equal('getWeather returned temperature: -3, sky: snow. get_order_status returned nothing.');
    });
  });
});
