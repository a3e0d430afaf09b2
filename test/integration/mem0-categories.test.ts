import { expect } from 'chai';
import { PROFILE, startRuntime, unique, waitFor, type TestRuntime } from '../helpers.js';
import { mem0Tenant } from '../mem0-client.js';

// mem0's categories through its own JavaScript client: each memory is given the categories of its
// catalogue (mem0's default 15, or its add's custom_categories) closest to it when it is indexed,
// shown wherever the memory is, and read options and filters keep the memories of a category.

interface Mem0Memory {
  id: string;
  memory: string;
  categories: string[];
  embeddingStatus?: string;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
  getAll(options: Record<string, unknown>): Promise<{ count: number; results: Mem0Memory[] }>;
  search(query: string, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
}

describe(`mem0 categories (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let auth: string;
  let client: Mem0Client;
  let other: { auth: string; client: Mem0Client; close(): Promise<void> };
  let close: () => Promise<void>;

  before(async () => {
    t = await startRuntime();
    ({ auth, client, close } = await mem0Tenant<Mem0Client>(t));
    other = await mem0Tenant<Mem0Client>(t);
  });
  after(async () => {
    await close?.();
    await other?.close();
    await t?.close();
  });

  const says = (texts: string[]) => texts.map((content) => ({ role: 'user', content }));

  /** The memories once every one of them is indexed (and so categorized), by text. */
  async function categorized(c: Mem0Client, ids: string[]): Promise<Map<string, string[]>> {
    const shown = await waitFor(
      async () => {
        const all = await Promise.all(ids.map((id) => c.get(id)));
        return all.every((m) => m.embeddingStatus === 'indexed') && all;
      },
      { timeoutMs: 60_000, message: 'the memories were not indexed' },
    );
    return new Map(shown.map((m) => [m.memory, m.categories]));
  }

  it("gives each memory the closest of mem0's default categories, shown by get, lists and search", async () => {
    const user = unique('cat');
    const { results } = await client.add(says(['I drink green tea every morning.', 'We are flying to Tokyo next month.', 'I love jazz, especially Coltrane.']), { userId: user, infer: false });
    const categories = await categorized(client, results.map((m) => m.id));
    expect(categories.get('I drink green tea every morning.')).to.include('food');
    expect(categories.get('We are flying to Tokyo next month.')).to.include('travel');
    expect(categories.get('I love jazz, especially Coltrane.')).to.include('music');

    const listed = await client.getAll({ filters: { user_id: user } });
    expect(new Map(listed.results.map((m) => [m.memory, m.categories]))).to.deep.equal(categories);
    const found = await client.search('what does the user drink?', { filters: { user_id: user } });
    expect(found.results[0]?.memory).to.equal('I drink green tea every morning.');
    expect(found.results[0]?.categories).to.include('food');
  });

  it('keeps the memories of the named categories: the categories option and categories filters, in lists and search', async () => {
    const user = unique('cat-read');
    const { results } = await client.add(says(['I drink green tea every morning.', 'We are flying to Tokyo next month.', 'I love jazz, especially Coltrane.']), { userId: user, infer: false });
    await categorized(client, results.map((m) => m.id));

    const texts = (ms: Mem0Memory[]) => ms.map((m) => m.memory).sort();
    expect(texts((await client.getAll({ filters: { user_id: user }, categories: ['travel'] })).results)).to.deep.equal(['We are flying to Tokyo next month.']);
    expect(texts((await client.search('my plans and habits', { filters: { user_id: user }, categories: ['food', 'music'] })).results)).to.deep.equal([
      'I drink green tea every morning.',
      'I love jazz, especially Coltrane.',
    ]);
    const filtered = await client.search('my plans and habits', { filters: { AND: [{ user_id: user }, { categories: { contains: 'music' } }] } });
    expect(texts(filtered.results)).to.deep.equal(['I love jazz, especially Coltrane.']);
    const notTravel = await client.getAll({ filters: { AND: [{ user_id: user }, { NOT: { categories: { in: ['travel'] } } }] } });
    expect(texts(notTravel.results)).to.deep.equal(['I drink green tea every morning.', 'I love jazz, especially Coltrane.']);
    // every mode filters the same way
    for (const mode of ['hybrid', 'dense', 'keyword']) {
      const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send({ query: 'Tokyo jazz tea', mode, filters: { user_id: user, categories: 'travel' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(texts(res.body.results), mode).to.deep.equal(['We are flying to Tokyo next month.']);
    }
    // another project sees none of it
    expect((await other.client.getAll({ filters: { user_id: user }, categories: ['travel'] })).results).to.deep.equal([]);
  });

  it("categorizes an add's memories by its own custom_categories, with infer false and true", async () => {
    const user = unique('cat-own');
    const catalogue = [{ beekeeping: 'bees, hives and honey' }, { boats: 'sailing, boats and the sea' }];
    const stated = await client.add(says(['I keep bees on the roof.']), { userId: user, infer: false, customCategories: catalogue });
    const inferred = await client.add(says(['I restore old sailboats.']), { userId: user, customCategories: catalogue });
    const plain = await client.add(says(['I drink green tea every morning.']), { userId: user, infer: false });
    const categories = await categorized(client, [...stated.results, ...inferred.results, ...plain.results].map((m) => m.id));
    expect(categories.get('I keep bees on the roof.')).to.deep.equal(['beekeeping']);
    expect(categories.get('I restore old sailboats')).to.deep.equal(['boats']);
    expect(categories.get('I drink green tea every morning.')).to.include('food');
    expect((await client.getAll({ filters: { user_id: user }, categories: ['boats'] })).results.map((m) => m.memory)).to.deep.equal(['I restore old sailboats']);
  });

  it('refuses malformed categories with a 400 naming them, and stores nothing', async () => {
    const user = unique('cat-bad');
    const add = (extra: Record<string, unknown>) =>
      t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: says(['I like tea.']), user_id: user, infer: false, ...extra });
    for (const custom_categories of [[], [{}], [{ food: 5 }], [{ 'bad\nname': 'x' }], [{ a: 'x' }, 'a'], Array.from({ length: 51 }, (_, i) => `c${i}`), Array.from({ length: 50 }, (_, i) => ({ [`a${i}`]: 'x', [`b${i}`]: 'y' })), 'food']) {
      const res = await add({ custom_categories });
      expect(res.status, JSON.stringify(custom_categories)).to.equal(400);
      expect(res.body.detail).to.match(/custom_categories/);
    }
    const list = (body: Record<string, unknown>) => t.http.post('/v3/memories/').set('Authorization', auth).send(body);
    for (const body of [{ filters: { user_id: user }, categories: [] }, { filters: { user_id: user, categories: 5 } }, { filters: { user_id: user, categories: { gt: 'a' } } }]) {
      const res = await list(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.detail).to.match(/categories/);
    }
    expect((await list({ filters: { user_id: user } })).body.count).to.equal(0);
  });
});
