import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Client } from '../mem0-client.js';

// mem0's memory expiration and the rest of its update, get_all and delete options, through mem0's
// own JavaScript client (which turns the answers' keys to camelCase), raw HTTP for bad input.

interface Mem0Memory {
  id: string;
  memory: string;
  expirationDate: string | null;
  createdAt: string;
}
interface Page {
  count: number;
  results: Mem0Memory[];
}
interface Mem0Client {
  ping(): Promise<void>;
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
  getAll(options: Record<string, unknown>): Promise<Page>;
  search(query: string, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  update(id: string, change: { text?: string; timestamp?: number | string; expirationDate?: string | null }): Promise<Mem0Memory>;
  delete(id: string, options?: { deleteLinked?: boolean }): Promise<{ message: string }>;
  deleteUser(data: { entity_type?: string; entity_id: string }): Promise<{ message: string }>;
  history(id: string): Promise<Array<{ event: string }>>;
  createWebhook(webhook: { name: string; url: string; eventTypes: string[] }): Promise<{ webhookId: string }>;
}

const DAY = 24 * 3600 * 1000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY).toISOString().slice(0, 10);

describe(`mem0 memory expiration (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  let client: Mem0Client;
  let stopServing: () => Promise<void>;

  const messages = (texts: string[]) => texts.map((content) => ({ role: 'user', content }));
  const texts = (page: { results: Mem0Memory[] }) => page.results.map((m) => m.memory).sort();
  const getAll = (user: string, options: Record<string, unknown> = {}) => client.getAll({ filters: { user_id: user }, ...options });
  /** Dense search once every memory of `user` is indexed. */
  const search = async (user: string, query: string, options: Record<string, unknown> = {}) => {
    await waitFor(
      async () => {
        const res = await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id: user }, show_expired: true });
        return res.body.results.every((m: { embedding_status: string }) => m.embedding_status === 'indexed') ? true : null;
      },
      { timeoutMs: 60_000, message: `memories of ${user} indexed` },
    );
    return client.search(query, { filters: { user_id: user }, mode: 'dense', ...options });
  };

  before(async () => {
    t = await startRuntime({ env: { TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    const { key } = await newProject(t);
    auth = token(key);
    ({ client, close: stopServing } = await mem0Client<Mem0Client>(t, key));
    await client.ping();
  });
  after(async () => {
    await stopServing();
    await t.close();
  });

  it('hides memories past their date from getAll and search unless showExpired, shows them by id, and brings one back when the date is cleared', async () => {
    const user = unique('ida');
    const past = await client.add(messages(['I lived in Lisbon.']), { userId: user, infer: false, expirationDate: day(-1) });
    const today = await client.add(messages(['I live in Porto this month.']), { userId: user, infer: false, expiration_date: day(0) });
    const future = await client.add(messages(['I live in Madrid next year.']), { userId: user, infer: false, expirationDate: '2999-12-31' });
    const never = await client.add(messages(['I was born in Faro.']), { userId: user, infer: false });
    expect(past.results[0]?.expirationDate).to.equal(day(-1));
    expect(future.results[0]?.expirationDate).to.equal('2999-12-31');
    expect(never.results[0]?.expirationDate).to.equal(null);
    const expired = past.results[0] as Mem0Memory;

    // the last day is included: expiring today is still shown
    expect(texts(await getAll(user))).to.deep.equal(['I live in Madrid next year.', 'I live in Porto this month.', 'I was born in Faro.']);
    expect((await getAll(user, { showExpired: true })).count).to.equal(4);
    expect((await client.get(expired.id)).expirationDate).to.equal(day(-1));
    expect(today.results[0]?.expirationDate).to.equal(day(0));

    const query = 'where does the user live?';
    expect(texts(await search(user, query, { topK: 10 }))).to.not.include('I lived in Lisbon.');
    expect(texts(await search(user, query, { topK: 10, showExpired: true }))).to.include('I lived in Lisbon.');

    await client.update(expired.id, { expirationDate: null });
    expect((await client.get(expired.id)).expirationDate).to.equal(null);
    expect(texts(await getAll(user))).to.include('I lived in Lisbon.');
    expect(texts(await search(user, query, { topK: 10 }))).to.include('I lived in Lisbon.');
    expect((await client.history(expired.id)).map((h) => h.event)).to.deep.equal(['ADD', 'UPDATE']);
  });

  it('infer: the facts an add picks out get its date, and a memory an UPDATE decision rewrites takes the new one', async () => {
    const user = unique('nia');
    const added = await client.add(messages(['My favourite colour is blue. I play tennis on Sundays.']), { userId: user, expirationDate: day(30) });
    expect(added.results.map((m) => [m.memory, m.expirationDate])).to.deep.equal([
      ['My favourite colour is blue', day(30)],
      ['I play tennis on Sundays', day(30)],
    ]);
    const [blue] = added.results as [Mem0Memory];
    const moved = await client.add(messages(['My favourite colour is green!']), { userId: user, expirationDate: '2999-01-01' });
    expect(moved.results.map((m) => [m.id, m.memory, m.expirationDate])).to.deep.equal([[blue.id, 'My favourite colour is green', '2999-01-01']]);
    expect((await client.get(blue.id)).expirationDate).to.equal('2999-01-01');

    // an expired memory is out of the comparison: said again, the fact is stored anew and shown
    const [permit] = (await client.add(messages(['I have a parking permit']), { userId: user, infer: false, expirationDate: day(-1) })).results as [Mem0Memory];
    const again = await client.add(messages(['I have a parking permit.']), { userId: user });
    expect(again.results.map((m) => [m.memory, m.expirationDate])).to.deep.equal([['I have a parking permit', null]]);
    expect(again.results[0]?.id).to.not.equal(permit.id);
    expect(texts(await getAll(user))).to.include('I have a parking permit');
  });

  it('fills top_k from unexpired memories when expired ones rank first', async () => {
    const user = unique('jon');
    const old = ['I play tennis on Mondays.', 'I play tennis on Tuesdays.', 'I play tennis on Wednesdays.', 'I play tennis every weekend.'];
    await client.add(messages(old), { userId: user, infer: false, expirationDate: day(-2) });
    await client.add(messages(['Tennis is a sport I enjoy.', 'I bought a new racket.', 'My favourite food is soup.']), { userId: user, infer: false });
    const found = await search(user, 'when does the user play tennis?', { topK: 3 });
    expect(texts(found)).to.deep.equal(['I bought a new racket.', 'My favourite food is soup.', 'Tennis is a sport I enjoy.']);
    expect(found.results.every((m) => m.expirationDate === null)).to.equal(true);
  });

  it("update's timestamp moves created_at, which created_at filters then see, as a revision with its webhook", async () => {
    const user = unique('kai');
    const hook = await client.createWebhook({ name: 'updates', url: 'http://127.0.0.1:9/hook', eventTypes: ['memory_update'] });
    const [memory] = (await client.add(messages(['I visited Rome.']), { userId: user, infer: false })).results as [Mem0Memory];
    const in2017 = { AND: [{ user_id: user }, { created_at: { gte: '2017-01-01', lt: '2018-01-01' } }] };
    expect((await search(user, 'which city did the user visit?', { filters: in2017 })).results).to.have.length(0);

    const updated = await client.update(memory.id, { timestamp: 1_500_000_000 });
    expect(updated.createdAt).to.equal('2017-07-14T02:40:00.000Z');
    expect(updated.memory).to.equal('I visited Rome.');
    expect((await search(user, 'which city did the user visit?', { filters: in2017 })).results.map((m) => m.id)).to.deep.equal([memory.id]);
    expect((await client.history(memory.id)).map((h) => h.event)).to.deep.equal(['ADD', 'UPDATE']);
    const deliveries = await t.http.get(`/api/v1/webhooks/${hook.webhookId}/deliveries/`).set('Authorization', auth).expect(200);
    expect(deliveries.body.results.map((d: { event: string; memory_id: string }) => [d.event, d.memory_id])).to.deep.equal([['memory_update', memory.id]]);

    // an ISO 8601 string names the event time too (UTC when it names no zone)
    expect((await client.update(memory.id, { timestamp: '2020-02-29T12:00:00' })).createdAt).to.equal('2020-02-29T12:00:00.000Z');
    const window = await getAll(user, { startDate: '2020-02-29', endDate: '2020-02-29' });
    expect(window.results.map((m) => m.id)).to.deep.equal([memory.id]);
    expect((await getAll(user, { startDate: '2020-03-01' })).count).to.equal(0);
    expect((await getAll(user, { endDate: '2020-02-28T23:59:59Z' })).count).to.equal(0);
  });

  it('refuses a date that is not a calendar day or a bad timestamp with a 400 naming the field, and changes nothing', async () => {
    const user = unique('lea');
    for (const expiration_date of ['2030-02-30', '2030-1-5', '31/01/2030', 20300131]) {
      const res = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: [{ role: 'user', content: 'I like figs.' }], user_id: user, infer: false, expiration_date });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.detail).to.include('/expiration_date');
    }
    expect((await getAll(user, { showExpired: true })).count).to.equal(0);

    const [memory] = (await client.add(messages(['I like plums.']), { userId: user, infer: false, expirationDate: '2999-01-01' })).results as [Mem0Memory];
    for (const body of [{ expiration_date: '2031-13-01' }, { timestamp: 'yesterday' }, { timestamp: -5 }, { text: 'I like pears.', expiration_date: 'soon' }]) {
      const res = await t.http.put(`/v1/memories/${memory.id}/`).set('Authorization', auth).send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
    }
    const after = await client.get(memory.id);
    expect([after.memory, after.expirationDate, after.createdAt]).to.deep.equal([memory.memory, '2999-01-01', memory.createdAt]);
    expect((await client.history(memory.id)).map((h) => h.event)).to.deep.equal(['ADD']);
  });

  it('deletes with delete_linked, and deleteUser deletes the entity as deleteUsers does', async () => {
    const user = unique('max');
    const [first, second] = (await client.add(messages(['I own a boat.', 'I fish on Sundays.']), { userId: user, infer: false })).results as [Mem0Memory, Mem0Memory];
    await client.delete(first.id, { deleteLinked: true });
    expect((await t.http.get(`/v1/memories/${first.id}/`).set('Authorization', auth)).status).to.equal(404);
    expect((await client.get(second.id)).memory).to.equal('I fish on Sundays.');

    expect((await client.deleteUser({ entity_type: 'user', entity_id: user })).message).to.match(/deleted/);
    expect((await getAll(user, { showExpired: true })).count).to.equal(0);
    expect((await client.history(second.id)).map((h) => h.event)).to.deep.equal(['ADD', 'DELETE']);
  });
});
