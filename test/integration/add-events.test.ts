import { expect } from 'chai';
import type { Extractor } from '../../providers/extractor.js';
import type { MemoryView } from '../../core/memory/memories.js';
import { MemoryDecisions } from '../../core/memory/decisions.js';
import { createLogger } from '../../lib/logger.js';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Client } from '../mem0-client.js';
import { fakeProvider, type Answer, type Received } from '../provider-server.js';

// mem0's add with infer: each new fact becomes ADD, UPDATE, DELETE or NOOP against what the
// entity already remembers — by rules with the local model, decided by a remote model otherwise —
// through HTTP and through mem0's own JavaScript client.

interface Result {
  id: string;
  memory: string;
  event: string;
  created_at: string;
  previous_memory?: string;
}
interface ClientResult {
  id: string;
  memory: string;
  event: string;
  previousMemory?: string;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: ClientResult[] }>;
  getAll(options: Record<string, unknown>): Promise<{ count: number; results: ClientResult[] }>;
  history(id: string): Promise<Array<{ event: string; oldMemory: string | null; newMemory: string | null }>>;
}

const events = (results: Array<{ event: string; memory: string }>): string[][] => results.map((r) => [r.event, r.memory]);

/** A remote model's reply to a chat call, in its provider's wire format. */
type Reply = (content: string) => Answer;

const openaiReply: Reply = (content) => ({
  status: 200,
  body: { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] },
});
const cohereReply: Reply = (text) => ({
  status: 200,
  body: { id: 'chat-1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }] }, usage: { billed_units: { input_tokens: 1, output_tokens: 1 } } },
});

/** What the decision call showed the model: memories under short ids, numbered facts. */
interface Shown {
  memories: Array<{ id: string; text: string }>;
  facts: Array<{ fact: number; text: string }>;
  user: string;
}

/**
 * A language model server: the facts call answers `facts()`; the decision call (told to keep the
 * memory up to date) answers `decide(shown)`, a JSON value or raw text, or an `Answer` as is.
 */
function languageModel(reply: Reply, facts: () => string[], decide: (shown: Shown) => unknown) {
  return fakeProvider((request: Received) => {
    const [system, user] = (request.body.messages as Array<{ content: string }>).map((m) => m.content);
    if (!system?.includes('memory up to date')) return reply(JSON.stringify({ facts: facts() }));
    const [memories, newFacts] = (user ?? '').split('\n\n').map((part) => part.slice(part.indexOf('\n') + 1));
    const answer = decide({ memories: JSON.parse(memories ?? '[]') as Shown['memories'], facts: JSON.parse(newFacts ?? '[]') as Shown['facts'], user: user ?? '' });
    if (typeof answer === 'object' && answer !== null && 'status' in answer) return answer as Answer;
    return reply(typeof answer === 'string' ? answer : JSON.stringify(answer));
  });
}

describe(`mem0 add events (${PROFILE})`, function () {
  this.timeout(90_000);

  describe('with the local model (rules)', () => {
    let t: TestRuntime;
    let stopServing: () => Promise<void>;
    let key: string;
    let projectId: string;
    let client: Mem0Client;

    before(async () => {
      t = await startRuntime();
      ({ key, projectId } = await newProject(t));
      ({ client, close: stopServing } = await mem0Client<Mem0Client>(t, key));
    });
    after(async () => {
      await stopServing();
      await t.close();
    });

    it("through mem0's client: ADD, NOOP for a paraphrase, UPDATE with its history, DELETE on a retraction", async () => {
      const userId = unique('lena');
      const added = await client.add([{ role: 'user', content: 'Hi! I live in Lisbon. I prefer salty food. I play chess.' }], { userId });
      expect(events(added.results)).to.deep.equal([
        ['ADD', 'I live in Lisbon'],
        ['ADD', 'I prefer salty food'],
        ['ADD', 'I play chess'],
      ]);
      const [lisbon, salty, chess] = added.results as [ClientResult, ClientResult, ClientResult];
      // compared through search from here on
      await waitFor(async () => (await t.http.post('/v3/memories/search/').set('Authorization', token(key)).send({ query: 'x', filters: { user_id: userId } })).body.results?.length === 3, {
        timeoutMs: 30_000,
        message: 'memories searchable',
      });

      const repeated = await client.add([{ role: 'user', content: 'I like salty food.' }], { userId });
      expect(repeated.results.map((r) => [r.event, r.id])).to.deep.equal([['NOOP', salty.id]]);

      const moved = await client.add([{ role: 'user', content: 'I moved to Porto last year.' }], { userId });
      expect(moved.results).to.have.length(1);
      expect(moved.results[0]).to.include({ event: 'UPDATE', id: lisbon.id, memory: 'I moved to Porto last year', previousMemory: 'I live in Lisbon' });
      const history = await client.history(lisbon.id);
      expect(history.map((h) => [h.event, h.oldMemory, h.newMemory])).to.deep.equal([
        ['ADD', null, 'I live in Lisbon'],
        ['UPDATE', 'I live in Lisbon', 'I moved to Porto last year'],
      ]);

      const quit = await client.add([{ role: 'user', content: "I don't play chess anymore." }], { userId });
      expect(quit.results.map((r) => [r.event, r.id, r.memory])).to.deep.equal([['DELETE', chess.id, 'I play chess']]);
      expect((await client.history(chess.id)).map((h) => h.event)).to.deep.equal(['ADD', 'DELETE']);

      const all = await client.getAll({ filters: { user_id: userId } });
      expect(all.results.map((r) => r.memory).sort()).to.deep.equal(['I moved to Porto last year', 'I prefer salty food']);
    });

    it('through HTTP, without waiting for indexing: a new favourite supersedes the old, forget deletes, infer: false stays as given', async () => {
      const auth = token(key);
      const user_id = unique('omar');
      const add = async (content: string, extra: Record<string, unknown> = {}) => {
        const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content }], user_id, ...extra });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body.results as Result[];
      };
      const [blue, tennis] = (await add('My favourite colour is blue. I play tennis on Sundays.', { timestamp: 1_700_000_000 })) as [Result, Result];
      expect(blue.created_at, "mem0's timestamp is the event time of what the add stores").to.equal(new Date(1_700_000_000_000).toISOString());
      const green = await add('My favourite colour is green!');
      expect(green.map((r) => [r.event, r.id, r.memory, r.previous_memory])).to.deep.equal([['UPDATE', blue.id, 'My favourite colour is green', 'My favourite colour is blue']]);
      expect(events(await add('My favourite colour is green.'))).to.deep.equal([['NOOP', 'My favourite colour is green']]);

      const forgotten = await add('Please forget that I play tennis on Sundays.');
      expect(forgotten.map((r) => [r.event, r.id])).to.deep.equal([['DELETE', tennis.id]]);
      expect((await t.http.get(`/v1/memories/${tennis.id}/`).set('Authorization', auth)).status).to.equal(404);
      expect(await add('Forget that I play golf.'), 'nothing to forget').to.deep.equal([]);

      const verbatim = await add('My favourite colour is green.', { infer: false });
      expect(events(verbatim), 'infer: false stores every message as given').to.deep.equal([['ADD', 'My favourite colour is green.']]);
      const history = await t.http.get(`/v1/memories/${blue.id}/history/`).set('Authorization', auth);
      expect(history.body.map((h: { event: string; old_memory: string | null; new_memory: string }) => [h.event, h.old_memory, h.new_memory])).to.deep.equal([
        ['ADD', null, 'My favourite colour is blue'],
        ['UPDATE', 'My favourite colour is blue', 'My favourite colour is green'],
      ]);
    });

    it('adds the fact when the memory an UPDATE or DELETE names changed or went while the decision was made', async () => {
      const memories = t.runtime.memories;
      const user_id = unique('ada');
      const [lisbon, chess] = (await memories.add(projectId, { user_id }, ['I live in Lisbon', 'I play chess'])) as [MemoryView, MemoryView];
      // a decision step slow enough for another writer to change both memories first
      const racing: Extractor = {
        model: 'racing',
        extract: () => Promise.resolve({}),
        facts: () => Promise.resolve([]),
        async decide() {
          await memories.update(projectId, lisbon.id, { text: 'I live in Faro' });
          await memories.delete(projectId, chess.id);
          return [
            { event: 'UPDATE', targetId: lisbon.id, text: 'I moved to Porto' },
            { event: 'DELETE', targetId: chess.id },
          ];
        },
      };
      const decisions = new MemoryDecisions(memories, t.runtime.embedders, createLogger('silent'));
      const results = await decisions.remember(projectId, { user_id }, ['I moved to Porto', "I don't play chess anymore"], racing);
      expect(events(results)).to.deep.equal([
        ['ADD', 'I moved to Porto'],
        ['ADD', "I don't play chess anymore"],
      ]);
      expect((await memories.get(projectId, lisbon.id)).memory, 'the other writer keeps its change').to.equal('I live in Faro');
    });
  });

  it('a remote model decides (OpenAI wire format): memories shown under short ids, its UPDATE, DELETE, NONE and ADD written with history', async () => {
    let facts: string[] = [];
    let shown: Shown | undefined;
    const model = await languageModel(
      openaiReply,
      () => facts,
      (s) => {
        shown = s;
        const id = (text: string) => s.memories.find((m) => m.text === text)?.id;
        return {
          memory: [
            { fact: 0, event: 'UPDATE', id: id('Lives in Lisbon'), text: 'Lives in Porto', old_memory: 'Lives in Lisbon' },
            { fact: 1, event: 'DELETE', id: id('Plays chess'), text: 'Plays chess' },
            { fact: 2, event: 'NONE', id: id('Likes jazz'), text: 'Likes jazz' },
            { fact: 3, event: 'ADD', text: 'Has a cat named Miso' },
          ],
        };
      },
    );
    const t = await startRuntime({ env: { MEMORY_MODEL: 'openai/decider', OPENAI_BASE_URL: model.url } });
    try {
      const auth = token((await newProject(t)).key);
      const user_id = unique('ines');
      const seeded = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: ['Lives in Lisbon', 'Plays chess', 'Likes jazz'].map((content) => ({ role: 'user', content })), user_id, infer: false });
      const [lisbon, chess, jazz] = seeded.body.results as [Result, Result, Result];
      await waitFor(async () => (await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query: 'x', filters: { user_id } })).body.results?.length === 3, {
        timeoutMs: 30_000,
      });

      facts = ['Moved to Porto', 'No longer plays chess', 'Loves jazz', 'Has a cat named Miso'];
      const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I moved to Porto, quit chess, still love jazz and got a cat, Miso.' }], user_id });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const results = res.body.results as Result[];
      expect(results.map((r) => [r.event, r.id, r.memory])).to.deep.equal([
        ['UPDATE', lisbon.id, 'Lives in Porto'],
        ['DELETE', chess.id, 'Plays chess'],
        ['NOOP', jazz.id, 'Likes jazz'],
        ['ADD', (results[3] as Result).id, 'Has a cat named Miso'],
      ]);
      expect(results[0]?.previous_memory).to.equal('Lives in Lisbon');

      const decisionCall = model.received.find((r) => JSON.stringify(r.body).includes('memory up to date'));
      expect(decisionCall?.body.model).to.equal('decider');
      expect((decisionCall?.body.response_format as { json_schema: { name: string } }).json_schema.name).to.equal('memory_events');
      expect(shown?.memories.map((m) => m.id).sort()).to.deep.equal(['0', '1', '2']);
      expect(shown?.facts).to.deep.equal(facts.map((text, fact) => ({ fact, text })));
      expect(shown?.user, 'real ids never reach the model').not.to.include(lisbon.id);

      const history = await t.http.get(`/v1/memories/${lisbon.id}/history/`).set('Authorization', auth);
      expect(history.body.map((h: { event: string; old_memory: string | null; new_memory: string }) => [h.event, h.old_memory, h.new_memory])).to.deep.equal([
        ['ADD', null, 'Lives in Lisbon'],
        ['UPDATE', 'Lives in Lisbon', 'Lives in Porto'],
      ]);
      const left = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id } });
      expect(left.body.results.map((r: Result) => r.memory).sort()).to.deep.equal(['Has a cat named Miso', 'Likes jazz', 'Lives in Porto']);
    } finally {
      await t.close();
      await model.close();
    }
  });

  it("hands mem0's custom_instructions to the model picking the facts, and agent_custom_instructions only for an agent's memories", async () => {
    const model = await languageModel(openaiReply, () => ['Keeps bees'], () => ({ memory: [{ fact: 0, event: 'ADD', text: 'Keeps bees' }] }));
    const t = await startRuntime({ env: { MEMORY_MODEL: 'openai/picker', OPENAI_BASE_URL: model.url } });
    try {
      const auth = token((await newProject(t)).key);
      const factCalls = () => model.received.filter((r) => !JSON.stringify(r.body).includes('memory up to date'));
      const systemOf = (call: Received | undefined) => (call?.body.messages as Array<{ role: string; content: string }>)[0]?.content ?? '';
      const add = async (body: Record<string, unknown>) => {
        const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I keep bees.' }], ...body });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return systemOf(factCalls().at(-1));
      };
      const plain = await add({ user_id: unique('u') });
      expect(plain).not.to.include('hobbies');
      const forUser = await add({ user_id: unique('u'), custom_instructions: 'Only remember hobbies.', agent_custom_instructions: 'Remember what the agent promised.' });
      expect(forUser.startsWith(plain), 'the rules come first, unchanged').to.equal(true);
      expect(forUser).to.include('Only remember hobbies.');
      expect(forUser).not.to.include('Remember what the agent promised.');
      const forAgent = await add({ agent_id: unique('a'), custom_instructions: 'Only remember hobbies.', agent_custom_instructions: 'Remember what the agent promised.' });
      expect(forAgent).to.include('Only remember hobbies.').and.to.include('Remember what the agent promised.');
    } finally {
      await t.close();
      await model.close();
    }
  });

  it('a remote model decides (Cohere wire format); a garbled answer, ids it made up, or a failed call add the facts, never drop them', async () => {
    let facts: string[] = [];
    let decide: (s: Shown) => unknown = () => ({ memory: [] });
    const model = await languageModel(cohereReply, () => facts, (s) => decide(s));
    const t = await startRuntime({ env: { MEMORY_MODEL: 'cohere/command-a-03-2025', COHERE_API_KEY: 'test-key', COHERE_BASE_URL: model.url } });
    try {
      const auth = token((await newProject(t)).key);
      const user_id = unique('rui');
      const add = async (next: string[]) => {
        facts = next;
        const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: next.join('. ') }], user_id });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body.results as Result[];
      };
      const [lisbon] = (await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'Lives in Lisbon' }], user_id, infer: false })).body
        .results as [Result];

      decide = (s) => ({ memory: [{ fact: 0, event: 'UPDATE', id: s.memories[0]?.id, text: 'Lives in Porto', old_memory: 'Lives in Lisbon' }] });
      const moved = await add(['Moved to Porto']);
      expect(moved.map((r) => [r.event, r.id, r.memory, r.previous_memory])).to.deep.equal([['UPDATE', lisbon.id, 'Lives in Porto', 'Lives in Lisbon']]);
      const decisionCall = model.received.find((r) => JSON.stringify(r.body).includes('memory up to date'));
      expect(decisionCall?.path).to.equal('/v2/chat');
      expect(decisionCall?.body.response_format).to.deep.include({ type: 'json_object' });

      decide = () => 'Sure! I would add that as a new memory.';
      expect(events(await add(['Has a dog'])), 'an answer without JSON').to.deep.equal([['ADD', 'Has a dog']]);

      decide = () => ({
        memory: [
          { fact: 0, event: 'UPDATE', id: lisbon.id, text: 'Lives in Braga' },
          { fact: 1, event: 'DELETE', id: '42' },
          { fact: 1, event: 'SKIP', id: '0' },
        ],
      });
      expect(events(await add(['Moved to Braga', 'Plays golf'])), 'ids never shown to the model').to.deep.equal([
        ['ADD', 'Moved to Braga'],
        ['ADD', 'Plays golf'],
      ]);

      decide = () => ({ status: 400, body: { message: 'invalid request: too many tokens' } });
      expect(events(await add(['Speaks Portuguese'])), 'a failed decision call').to.deep.equal([['ADD', 'Speaks Portuguese']]);

      const all = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id } });
      expect(all.body.results.map((r: Result) => r.memory).sort()).to.deep.equal(['Has a dog', 'Lives in Porto', 'Moved to Braga', 'Plays golf', 'Speaks Portuguese']);
    } finally {
      await t.close();
      await model.close();
    }
  });
});
