import { expect } from 'chai';
import { PROFILE, startRuntime, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Tenant } from '../mem0-client.js';

// Facts that keep what was true when: an update supersedes a memory's text (the old text stays as
// a version, valid until the update's event time), a retraction ends a memory's validity, and
// reads see the facts valid now, valid at `as_of`, or every version — through HTTP and mem0's
// JavaScript client, which passes the new options and fields through unchanged.

interface Hit {
  id: string;
  memory: string;
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
  embedding_status?: string;
}
interface ClientMemory {
  id: string;
  memory: string;
  event?: string;
  validTo?: string | null;
  supersededBy?: string | null;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: ClientMemory[] }>;
  search(query: string, options: Record<string, unknown>): Promise<{ results: ClientMemory[] }>;
  getAll(options: Record<string, unknown>): Promise<{ results: ClientMemory[] }>;
  update(id: string, change: { text?: string; metadata?: Record<string, unknown>; timestamp?: number | string }): Promise<ClientMemory>;
  delete(id: string): Promise<{ message: string }>;
}

const iso = (date: string) => new Date(`${date}T00:00:00Z`).toISOString();
const unix = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

describe(`memory validity: superseded facts and as_of (${PROFILE})`, function () {
  this.timeout(180_000);
  let t: TestRuntime;
  let auth: string;
  let client: Mem0Client;
  let stopServing: () => Promise<void>;

  const post = async (path: string, body: Record<string, unknown>, status = 200) => {
    const res = await t.http.post(path).set('Authorization', auth).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const add = async (user_id: string, content: string, date: string) =>
    (await post('/v3/memories/add/', { messages: [{ role: 'user', content }], user_id, timestamp: unix(date) })).results as Array<Hit & { event: string }>;
  const search = async (user_id: string, query: string, extra: Record<string, unknown> = {}) =>
    (await post('/v3/memories/search/', { query, filters: { user_id }, ...extra })).results as Hit[];
  const list = async (user_id: string, extra: Record<string, unknown> = {}) => (await post('/v3/memories/', { filters: { user_id }, ...extra })).results as Hit[];
  /** Waits until every version of the user's memories is searchable. */
  const indexed = (user_id: string) =>
    waitFor(async () => (await list(user_id, { include_superseded: true })).every((m) => m.embedding_status === 'indexed'), { timeoutMs: 60_000, message: `memories of ${user_id} indexed` });
  const texts = (hits: Hit[]) => hits.map((h) => h.memory);

  before(async () => {
    t = await startRuntime();
    ({ auth, client, close: stopServing } = await mem0Tenant<Mem0Client>(t));
  });
  after(async () => {
    await stopServing();
    await t.close();
  });

  it('an update supersedes: search finds the old fact with as_of and not without, include_superseded ranks it below the new one, and the chain reads back', async () => {
    const user = unique('lena');
    const [lisbon] = (await add(user, 'I live in Lisbon.', '2024-01-10')) as [Hit & { event: string }];
    await add(user, 'I love salty food.', '2024-01-10');
    const moved = await add(user, 'I moved to Porto.', '2024-06-01');
    expect(moved.map((m) => [m.event, m.id, m.memory])).to.deep.equal([['UPDATE', lisbon.id, 'I moved to Porto']]);
    expect(moved[0]).to.include({ valid_from: iso('2024-06-01'), valid_to: null, superseded_by: null });
    await indexed(user);

    // now: the current fact, and nothing of the old one
    const now = await search(user, 'Which city does she live in?');
    expect(texts(now)).to.include('I moved to Porto').and.not.include('I live in Lisbon');
    expect(texts(await list(user)).sort()).to.deep.equal(['I love salty food', 'I moved to Porto']);

    // as of March 2024: what was true then
    const march = await search(user, 'Which city does she live in?', { as_of: '2024-03-01' });
    expect(texts(march)).to.include('I live in Lisbon').and.not.include('I moved to Porto');
    const old = march.find((h) => h.memory === 'I live in Lisbon') as Hit;
    expect(old.id, 'the old text is a version of its own').to.not.equal(lisbon.id);
    expect(old).to.include({ valid_from: iso('2024-01-10'), valid_to: iso('2024-06-01'), superseded_by: lisbon.id });
    expect(texts(await list(user, { as_of: unix('2024-03-01') })).sort()).to.deep.equal(['I live in Lisbon', 'I love salty food']);
    // before anything was said, nothing was true
    expect(await search(user, 'Which city does she live in?', { as_of: '2023-12-31' })).to.deep.equal([]);

    // both, the superseded text after the memory that superseded it
    const both = texts(await search(user, 'Lisbon or Porto: where does she live?', { include_superseded: true }));
    expect(both).to.include('I live in Lisbon');
    expect(both.indexOf('I moved to Porto')).to.be.below(both.indexOf('I live in Lisbon'));

    const chain = (await t.http.get(`/v1/memories/${old.id}/versions/`).set('Authorization', auth)).body as Hit[];
    expect(chain.map((v) => [v.memory, v.valid_from, v.valid_to])).to.deep.equal([
      ['I moved to Porto', iso('2024-06-01'), null],
      ['I live in Lisbon', iso('2024-01-10'), iso('2024-06-01')],
    ]);

    // a version is the memory's past: it cannot be changed, and goes when the memory is deleted
    const change = await t.http.put(`/v1/memories/${old.id}/`).set('Authorization', auth).send({ text: 'I live in Braga' });
    expect(change.status).to.equal(409);
    expect(change.body.code).to.equal('memory_superseded');
    const batch = await t.http.put('/v1/batch/').set('Authorization', auth).send({ memories: [{ memory_id: old.id, text: 'I live in Braga' }] });
    expect(batch.status, 'nor in a batch').to.equal(400);
    expect(batch.body.errors.map((e: { path: string; message: string }) => [e.path, e.message])).to.deep.equal([['/memories/0/memory_id', `is a superseded version of ${lisbon.id}`]]);
    expect((await t.http.get(`/v1/memories/${old.id}/`).set('Authorization', auth)).body.memory).to.equal('I live in Lisbon');
    await client.delete(lisbon.id);
    expect((await t.http.get(`/v1/memories/${old.id}/`).set('Authorization', auth)).status).to.equal(404);
    expect(texts(await list(user, { include_superseded: true }))).to.deep.equal(['I love salty food']);
  });

  it('a fact told a moment ago about the past is superseded by the next one, however many newer memories wait to be indexed', async () => {
    const user = unique('noor');
    const chat = (part: number) => Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: `Chat line ${part}.${i} about the weather and the weekend.` }));
    const memories = [0, 1, 2].map((part) => ({ messages: chat(part), user_id: user, timestamp: unix('2024-09-01') }));
    await post('/v1/batch/', { memories }, 201);
    // years before the chat, and written while the chat lines still wait for their vectors
    const [lisbon] = (await add(user, 'I live in Lisbon.', '2019-02-01')) as [Hit & { event: string }];
    const moved = await add(user, 'I moved to Porto.', '2020-05-01');
    expect(moved.map((m) => [m.event, m.id])).to.deep.equal([['UPDATE', lisbon.id]]);
  });

  it('a retraction ends validity (the fact stays, found as of before it), while "forget" deletes', async () => {
    const user = unique('omar');
    const [chess] = (await add(user, "I play chess.", "2024-02-01")) as [Hit & { event: string }];
    const [tennis] = (await add(user, "I play tennis on Sundays.", "2024-02-01")) as [Hit & { event: string }];
    await indexed(user);

    const quit = await add(user, "I don't play chess anymore.", '2024-09-01');
    expect(quit.map((m) => [m.event, m.id, m.valid_to])).to.deep.equal([['DELETE', chess.id, iso('2024-09-01')]]);
    const ended = (await t.http.get(`/v1/memories/${chess.id}/`).set('Authorization', auth)).body as Hit;
    expect(ended).to.include({ memory: 'I play chess', valid_to: iso('2024-09-01') });
    await indexed(user);
    expect(texts(await search(user, 'What games does he play?'))).to.not.include('I play chess');
    expect(texts(await search(user, 'What games does he play?', { as_of: '2024-05-01' }))).to.include('I play chess');

    const forgotten = await add(user, 'Please forget that I play tennis on Sundays.', '2024-09-02');
    expect(forgotten.map((m) => [m.event, m.id])).to.deep.equal([['DELETE', tennis.id]]);
    expect((await t.http.get(`/v1/memories/${tennis.id}/`).set('Authorization', auth)).status, "a user's request to forget deletes").to.equal(404);
  });

  it("through mem0's client: update supersedes from its timestamp, a metadata change does not, and the options pass through", async () => {
    const user = unique('ida');
    const [job] = (await client.add([{ role: 'user', content: 'I work as a nurse.' }], { userId: user, infer: false, timestamp: unix('2023-03-01') })).results as [ClientMemory];
    await client.update(job.id, { text: 'I work as a midwife.', timestamp: unix('2024-04-01') });
    await client.update(job.id, { metadata: { checked: true } });
    const chain = (await t.http.get(`/v1/memories/${job.id}/versions/`).set('Authorization', auth)).body as Hit[];
    expect(chain.map((v) => [v.memory, v.valid_to])).to.deep.equal([
      ['I work as a midwife.', null],
      ['I work as a nurse.', iso('2024-04-01')],
    ]);
    await indexed(user);
    const then = await client.search('What is her job?', { filters: { user_id: user }, as_of: '2023-12-01' });
    expect(then.results.map((r) => r.memory)).to.deep.equal(['I work as a nurse.']);
    expect(then.results[0]?.supersededBy).to.equal(job.id);
    const every = await client.getAll({ filters: { user_id: user }, include_superseded: true });
    expect(every.results.map((r) => r.memory).sort()).to.deep.equal(['I work as a midwife.', 'I work as a nurse.']);
    expect((await client.getAll({ filters: { user_id: user } })).results.map((r) => r.memory)).to.deep.equal(['I work as a midwife.']);
  });

  it('refuses an as_of that is not a time with a 400, and changes nothing', async () => {
    const user = unique('kai');
    for (const as_of of ['yesterday', -5, '2024-13-01']) {
      const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query: 'x', filters: { user_id: user }, as_of });
      expect(res.status, JSON.stringify(as_of)).to.equal(400);
      expect(res.body.code).to.be.a('string');
    }
  });
});
