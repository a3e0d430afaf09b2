import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ConsoleBrowser } from '../console-browser.js';
import { buildDist, newProject, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// The console's typed memory pages (schemas, a schema's versions and their diff, its records, the
// extraction playground, a record), the filters of an entity's memories, and the search
// playground's threshold, filters and request as code, in Chromium as a person uses them: each
// page free of faults, checked by axe-core in light and dark, and saved as a screenshot.

const TEA = 'I drink green tea every morning.';
const TOKYO = 'We are flying to Tokyo next month.';
const JAZZ = 'I love jazz, especially Coltrane.';
const TIRES = 'The car needs new winter tires before December.';
const day = (iso: string) => Math.floor(Date.parse(`${iso}T12:00:00Z`) / 1000);

describe('web console: typed memory, memory filters, search extras', function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let web: ConsoleBrowser;
  let auth: string;
  let key: string;
  const alice = unique('alice');
  const lead = unique('lead').toLowerCase();
  const api = (path: string, body: object) => t.http.post(path).set('Authorization', auth).send(body);
  let working = false;
  /** Starts the workers, once: the first test sees its memories pending before. */
  async function startWorkers(): Promise<void> {
    if (working) return;
    working = true;
    await t.runtime.start();
  }

  before(async () => {
    await buildDist();
    // workers start in the first test, once it has seen memories pending
    t = await startRuntime({ start: false });
    key = (await newProject(t)).key;
    auth = token(key);
    for (const [content, date] of [
      [TEA, '2024-01-10'],
      [TOKYO, '2024-03-05'],
      [JAZZ, '2024-03-20'],
    ] as const) {
      const added = await api('/v3/memories/add', { messages: [{ role: 'user', content }], user_id: alice, infer: false, timestamp: day(date) });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
    }
    web = await ConsoleBrowser.serve(t);
  });

  after(async () => {
    await web?.close();
    await t?.close();
  });

  /** The memories' texts the API lists for alice with these options, in its order. */
  async function listed(options: object): Promise<string[]> {
    const res = await api('/v3/memories?page=1&page_size=20', { filters: { user_id: alice }, ...options });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.results.map((m: { memory: string }) => m.memory);
  }

  /** Waits until the entity page lists exactly `expected` (a list still loading may show the previous filter's answer). */
  async function expectShown(page: Page, expected: string[]): Promise<void> {
    const heading = page.getByRole('heading', { name: `Memories (${expected.length})` });
    const texts = async () => ((await page.getByText('No memories.').count()) > 0 ? [] : page.locator('tbody .memory-text').allInnerTexts());
    let last: string[] = [];
    await waitFor(
      async () => {
        last = await texts();
        return (await heading.count()) === 1 && JSON.stringify(last) === JSON.stringify(expected);
      },
      { timeoutMs: 15_000, message: `the page lists ${JSON.stringify(last)}, not ${JSON.stringify(expected)}` },
    ).catch(() => expect(last, 'the memories the page lists').to.deep.equal(expected));
  }

  it("filters an entity's memories by indexing status, category and event date, as the API does", async () => {
    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, key, `/console/entities/user/${alice}`);
    const all = await listed({});
    expect(all).to.have.members([TEA, TOKYO, JAZZ]);
    await expectShown(page, all);

    // nothing is indexed yet: "indexed" shows none, "pending" all three
    await page.getByLabel('Indexing status').selectOption('indexed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    expect(await listed({ embedding_status: 'indexed' })).to.deep.equal([]);
    await expectShown(page, []);
    await page.getByLabel('Indexing status').selectOption('pending');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    expect(await listed({ embedding_status: 'pending' })).to.deep.equal(all);
    await expectShown(page, all);
    await web.checkPage(visit, 'entity-filtered-pending');

    // indexed, each memory is given its categories
    await startWorkers();
    await waitFor(async () => (await listed({ embedding_status: 'indexed' })).length === 3, { timeoutMs: 60_000, message: 'the memories were not indexed' });
    await page.getByLabel('Indexing status').selectOption('indexed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expectShown(page, await listed({ embedding_status: 'indexed' }));

    await page.getByLabel('Categories (any of, comma-separated)').fill('food');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const food = await listed({ embedding_status: 'indexed', categories: ['food'] });
    expect(food).to.include(TEA).and.not.include(TOKYO);
    await expectShown(page, food);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Event time from').fill('2024-03-01');
    await page.getByLabel('Event time to').fill('2024-03-10');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const march = await listed({ start_date: '2024-03-01', end_date: '2024-03-10' });
    expect(march).to.deep.equal([TOKYO]);
    await expectShown(page, march);
    await web.checkPage(visit, 'entity-filtered');

    const dark = await web.browser({ colorScheme: 'dark' });
    await web.signIn(dark.page, key, `/console/entities/user/${alice}`);
    await dark.page.getByLabel('Indexing status').selectOption('indexed');
    await dark.page.getByRole('button', { name: 'Apply filters' }).click();
    await expectShown(dark.page, await listed({ embedding_status: 'indexed' }));
    await web.checkPage(dark, 'entity-filtered-dark');
  });

  it("shows a schema's versions and their diff, its records, and extracts a record from text", async () => {
    await startWorkers();
    const preset = (await t.http.get('/v1/schema-presets').set('Authorization', auth)).body.presets.find((p: { name: string }) => p.name === 'lead-profile');
    expect((await api('/v1/schemas', { ...preset, name: lead })).status).to.equal(201);
    // version 2: budget becomes an integer, website is added, notes removed
    const properties = { ...preset.json_schema.properties, budget: { type: 'integer', description: 'Budget in whole units.' }, website: { type: 'string' } };
    delete properties.notes;
    const v2 = { ...preset.json_schema, properties };
    const published = await api(`/v1/schemas/${lead}`, { json_schema: v2, embed_template: null, description: 'Budgets in whole units' });
    expect(published.status, JSON.stringify(published.body)).to.equal(201);

    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, key);
    await page.getByRole('link', { name: 'Schemas' }).click();
    const row = page.getByRole('row').filter({ hasText: lead });
    await row.getByRole('cell', { name: '2', exact: true }).waitFor();
    await web.checkPage(visit, 'schemas');

    await row.getByRole('link', { name: lead }).click();
    await page.getByRole('heading', { name: 'Compare versions' }).waitFor();
    const diff = page.locator('table.diff');
    await diff.getByRole('caption').getByText('From version 1 to version 2').waitFor();
    const diffRows = await diff.locator('tbody tr').evaluateAll((rows) =>
      rows.map((r) => Array.from((r as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells, (c) => c.textContent ?? '').join(' | ')),
    );
    expect(diffRows).to.include('budget | changed | description | Stated budget as a plain number in the currency mentioned (e.g. 50000). | Budget in whole units.');
    expect(diffRows).to.include('budget |  | type | number | integer');
    expect(diffRows.find((r) => r.startsWith('website | added | type'))).to.equal('website | added | type | — | string');
    expect(diffRows.find((r) => r.startsWith('notes | removed | description'))).to.match(/\| —$/);
    // the same version on both sides: no difference
    await page.getByLabel('From').selectOption('2');
    await page.getByText('No difference between version 2 and version 2.').waitFor();
    await page.getByLabel('From').selectOption('1');
    await page.getByText('No records.').waitFor();
    await web.checkPage(visit, 'schema');

    // a partial text: the values found and the required field missing, nothing stored
    await page.getByLabel('Text').fill('Reach me at jane@acme.com.');
    await page.getByLabel('Entity id').fill('sales-1');
    await page.getByRole('button', { name: 'Extract' }).click();
    const extracted = page.locator('.extracted');
    await extracted.getByRole('heading', { name: 'Not stored: fields missing' }).waitFor({ timeout: 60_000 });
    expect(await extracted.locator('dt').allInnerTexts()).to.include('email');
    expect(await extracted.locator('dd').allInnerTexts()).to.include('jane@acme.com');
    expect(await extracted.locator('code.missing').allInnerTexts()).to.deep.equal(['name']);
    await web.checkPage(visit, 'schema-extract-missing');

    // a complete one: stored, listed among the records, opened
    await page.getByLabel('Text').fill("Hi, I'm Jane Doe, CTO at Acme Corp. Reach me at jane@acme.com. Our budget is $50,000.");
    await page.getByRole('button', { name: 'Extract' }).click();
    await extracted.getByRole('heading', { name: 'Stored' }).waitFor({ timeout: 60_000 });
    const records = (await t.http.get(`/v1/records/${lead}`).set('Authorization', auth)).body.records;
    expect(records).to.have.length(1);
    expect(records[0].record).to.include({ name: 'Jane Doe', email: 'jane@acme.com', budget: 50000 });
    const recordRow = page.getByRole('row').filter({ hasText: 'name: Jane Doe' });
    await recordRow.getByText('user sales-1').waitFor();
    await recordRow.getByText('indexed', { exact: true }).waitFor({ timeout: 60_000 });
    await web.checkPage(visit, 'schema-extract-stored');
    await recordRow.getByRole('link').click();
    await page.waitForURL(`${web.base}/console/schemas/${lead}/records/${records[0].id}`);
    const fields = page.locator('dl.facts').first();
    await fields.getByText('Jane Doe').waitFor();
    expect(await fields.locator('dt').allInnerTexts()).to.deep.equal(Object.keys(records[0].record));
    await page.getByText(`${lead}, version 2`).waitFor();
    await web.checkPage(visit, 'record');

    const dark = await web.browser({ colorScheme: 'dark' });
    await web.signIn(dark.page, key, `/console/schemas/${lead}`);
    await dark.page.locator('table.diff').waitFor();
    await dark.page.getByRole('row').filter({ hasText: 'name: Jane Doe' }).waitFor();
    await web.checkPage(dark, 'schema-dark');
  });

  it('search playground: a threshold hides low scores, filters are checked by the API, the request as curl, mem0 JS and Python', async () => {
    await startWorkers();
    const added = await api('/v3/memories/add', { messages: [{ role: 'user', content: TIRES }], user_id: alice, infer: false });
    const tiresId = added.body.results[0].id as string;
    await waitFor(async () => (await t.http.get(`/v1/memories/${tiresId}`).set('Authorization', auth)).body.embedding_status === 'indexed', { timeoutMs: 60_000 });

    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, key, `/console/search?type=user&id=${alice}&q=tea`);
    const dense = page.getByRole('region', { name: 'dense' });
    await dense.getByRole('link', { name: TEA }).waitFor();
    await dense.getByRole('link', { name: TIRES }).waitFor();

    await page.getByLabel('Threshold (least cosine, −1 to 1)').fill('0.3');
    await page.getByLabel('Rerank').check();
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/threshold=0.3/);
    // the results without a threshold go, those with it come
    await dense.getByRole('link', { name: TIRES }).waitFor({ state: 'detached' });
    await dense.getByRole('link', { name: TEA }).waitFor();
    expect(await dense.getByRole('link', { name: TIRES }).count(), 'a memory below the threshold is hidden').to.equal(0);
    for (const score of await dense.locator('.score').allInnerTexts()) expect(Number(score.replace('score', '').trim())).to.be.at.least(0.3);
    for (const mode of ['hybrid', 'keyword']) {
      await page.getByRole('region', { name: mode }).getByRole('link', { name: TEA }).waitFor();
      expect(await page.getByRole('region', { name: mode }).getByRole('link', { name: TIRES }).count()).to.equal(0);
    }
    // whether the server's reranker ordered them, as the API answers
    const reranked = await api('/v3/memories/search', { query: 'tea', filters: { user_id: alice }, mode: 'dense', threshold: 0.3, rerank: true });
    await dense.locator('.rerank').getByText(reranked.body.rerank.applied ? 'Reranked by' : 'Not reranked').waitFor();

    const code = page.getByRole('region', { name: 'Request as code' });
    const snippets = await code.locator('pre').allInnerTexts();
    expect(snippets).to.have.length(3);
    const [curl, js, python] = snippets as [string, string, string];
    expect(curl).to.include(`'${web.base}/v3/memories/search/'`).and.include('"query":"tea"').and.include('"threshold":0.3').and.include('"rerank":true');
    expect(js).to.include("import { MemoryClient } from 'mem0ai';").and.include("client.search(\"tea\", {").and.include('"topK": 10').and.include('"threshold": 0.3');
    expect(python).to.include('from mem0 import MemoryClient').and.include('client.search("tea", filters={"user_id": ').and.include('threshold=0.3').and.include('rerank=True');
    for (const snippet of snippets) {
      expect(snippet, 'the key is never shown').not.to.include(key);
      expect(snippet).to.include('CAIRN_API_KEY');
    }
    await code.getByLabel('Mode').selectOption('keyword');
    await code.getByText('"mode":"keyword"').waitFor();
    await web.checkPage(visit, 'search-extras');

    // filters as JSON, joined to the entity; the API's own 400 shown where the results would be
    await page.getByLabel('More filters (JSON, joined to the entity with AND)').fill('{"created_at": {"bogus": 1}}');
    await page.getByRole('button', { name: 'Search' }).click();
    const refused = await api('/v3/memories/search', { query: 'tea', filters: { AND: [{ user_id: alice }, { created_at: { bogus: 1 } }] }, mode: 'dense' });
    expect(refused.status).to.equal(400);
    await dense.getByRole('alert').getByText(refused.body.detail).waitFor();
    const expected = (f: string) => (f.startsWith('400: POST') && f.endsWith('/v3/memories/search')) || f.endsWith('the server responded with a status of 400 (Bad Request)');
    expect(visit.faults.filter((f) => !expected(f)), 'faults but the three 400s').to.deep.equal([]);
    visit.faults.length = 0;
    await page.getByLabel('More filters (JSON, joined to the entity with AND)').fill('{"created_at": {"gte": "2024-01-01", "lte": "2024-01-31"}}');
    await page.getByLabel('Threshold (least cosine, −1 to 1)').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await dense.getByRole('link', { name: TEA }).waitFor();
    expect(await dense.getByRole('listitem').count(), 'only the January memory').to.equal(1);
    // JSON the browser cannot read is refused before any request
    await page.getByLabel('More filters (JSON, joined to the entity with AND)').fill('{"user_id": ');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('alert').getByText('Filters are not JSON').waitFor();
    await web.checkPage(visit, 'search-filters-invalid');

    const dark = await web.browser({ colorScheme: 'dark' });
    await web.signIn(dark.page, key, `/console/search?type=user&id=${alice}&q=tea&threshold=0.3`);
    await dark.page.getByRole('region', { name: 'dense' }).getByRole('link', { name: TEA }).waitFor();
    await web.checkPage(dark, 'search-extras-dark');
  });
});
