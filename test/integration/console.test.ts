import { expect } from 'chai';
import { buildDist, newProject, startRuntime, token, unique, type TestRuntime } from '../helpers.js';
import { ConsoleBrowser, type PageGlobals } from '../console-browser.js';

// The web console as a person uses it: Debian's Chromium, headless, signing in with a project's
// API key, walking every page (each checked for console errors, failed requests and, with
// axe-core, serious accessibility faults, and saved as a screenshot), adding, searching and
// changing a memory; and its session's limits: a revoked key, another project, a cookie sent
// without the console's header, wrong keys.

const SIGN_IN_TRIES = 10;

describe('web console in a browser', function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let web: ConsoleBrowser;
  const alice = unique('alice');
  const first = `${alice} prefers green tea in the morning in Lisbon`;
  const changed = `${alice} prefers black coffee in the morning in Lisbon`;
  let a: { key: string; projectId: string; name: string };
  let b: { key: string; projectId: string; name: string };
  let bMemoryId: string;
  let memoryId: string;

  before(async () => {
    await buildDist();
    // not started yet: no worker indexes a memory until the test starts it, so "pending" is seen for sure
    t = await startRuntime({ start: false });
    a = await newProject(t);
    b = await newProject(t);
    const bAdd = await t.http
      .post('/v3/memories/add')
      .set('Authorization', token(b.key))
      .send({ messages: [{ role: 'user', content: `${alice} of project B likes green tea too` }], user_id: alice, infer: false });
    expect(bAdd.status).to.equal(200);
    bMemoryId = bAdd.body.results[0].id;
    web = await ConsoleBrowser.serve(t);
  });

  after(async () => {
    await web?.close();
    await t?.close();
  });

  /** The session cookie the console's sign-in sets for `key`, as a Cookie header. */
  async function sessionCookie(key: string): Promise<string> {
    const res = await t.http.post('/console/api/session').send({ key });
    expect(res.status).to.equal(201);
    const cookies = res.headers['set-cookie'] as unknown as string[];
    expect(cookies.join('\n')).to.match(/cairn_console=[^;]+; path=\/; expires=[^;]+; samesite=strict; httponly/);
    return cookies.map((c) => c.split(';')[0]).join('; ');
  }

  it('signs in by keyboard, and every page loads clean: add, index, search and change a memory', async () => {
    const visit = await web.browser();
    const { page } = visit;
    await page.goto(`${web.base}/console`);
    await page.getByLabel('API key').waitFor();
    await web.checkPage(visit, 'sign-in');
    // the key field has the focus: type, Enter submits
    await page.keyboard.type(a.key);
    await page.keyboard.press('Enter');
    await page.getByText(`Project ${a.name}`).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.cookie), "the session is out of scripts' reach").to.equal('');
    expect(await page.evaluate(() => JSON.stringify({ ...(globalThis as unknown as PageGlobals).localStorage, ...(globalThis as unknown as PageGlobals).sessionStorage }))).to.equal('{}');
    await page.getByText('No memories yet').waitFor();
    await web.checkPage(visit, 'entities-empty');

    // Tab reaches the navigation; Enter follows it
    let onSearch = false;
    for (let i = 0; i < 12 && !onSearch; i += 1) {
      await page.keyboard.press('Tab');
      onSearch = await page.evaluate(() => {
        const active = (globalThis as unknown as PageGlobals).document.activeElement;
        return active?.textContent?.trim() === 'Search' && active.tagName === 'A';
      });
    }
    expect(onSearch, 'the Search link is reachable with Tab').to.equal(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${web.base}/console/search`);
    await page.getByRole('heading', { name: 'Search playground' }).waitFor();

    // an entity with no memories yet, opened from the entities page's form
    await page.getByRole('link', { name: 'Entities' }).click();
    await page.getByLabel('Id').fill(alice);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL(`${web.base}/console/entities/user/${alice}`);
    await page.getByLabel('New memory').fill(first);
    await page.getByRole('button', { name: 'Add memory' }).click();
    const row = page.getByRole('row').filter({ hasText: first });
    await row.getByText('pending', { exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Indexing: 1 pending of 1' }).waitFor();
    await web.checkPage(visit, 'entity-pending');
    // workers start: the page, which looks again while a memory is pending, shows it indexed
    await t.runtime.start();
    await row.getByText('indexed', { exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('status').filter({ hasText: 'All 1 indexed: searchable' }).waitFor({ timeout: 10_000 });
    // the names its memories mention, found as they are indexed
    await page.getByRole('table', { name: `Named entities the memories of user ${alice} mention` }).getByRole('row').filter({ hasText: 'Lisbon' }).waitFor();
    await web.checkPage(visit, 'entity');

    await page.getByRole('link', { name: `Search this user's memories` }).click();
    await page.getByLabel('Query').fill('what does alice drink in the morning');
    await page.getByRole('button', { name: 'Search' }).click();
    for (const mode of ['hybrid', 'dense', 'keyword']) {
      const section = page.getByRole('region', { name: mode });
      await section.getByRole('link', { name: first }).waitFor();
      expect(await section.locator('.score').first().innerText()).to.match(/\b\d+\.\d{4}$/);
    }
    await page.getByRole('region', { name: 'hybrid' }).getByText('Request as curl').click();
    const curl = await page.getByRole('region', { name: 'hybrid' }).locator('pre').innerText();
    expect(curl).to.include(`curl -X POST '${web.base}/v3/memories/search/'`).and.include('"mode":"hybrid"').and.include(`"user_id":"${alice}"`);
    await web.checkPage(visit, 'search');

    await page.getByRole('region', { name: 'dense' }).getByRole('link', { name: first }).click();
    await page.getByRole('heading', { name: 'Memory', exact: true }).waitFor();
    await page.getByText('indexed', { exact: true }).waitFor();
    memoryId = page.url().split('/').pop() as string;
    await web.checkPage(visit, 'memory');
    await page.getByLabel('Text').fill(changed);
    await page.getByRole('button', { name: 'Save' }).click();
    const update = page.getByRole('row').filter({ hasText: 'UPDATE' });
    await update.waitFor();
    expect(await update.locator('td').nth(1).innerText()).to.equal(first);
    expect(await update.locator('td').nth(2).innerText()).to.equal(changed);
    await page.locator('.memory-quote').getByText(changed).waitFor();
    await page.getByText('indexed', { exact: true }).waitFor({ timeout: 30_000 });
    // the text it had stays as a version, with the time each held
    const versions = page.getByRole('table', { name: 'What this memory said and when it held, the current text first' });
    await versions.getByRole('row').filter({ hasText: first }).waitFor();
    expect(await versions.getByRole('row').count(), 'a header and two versions').to.equal(3);
    await web.checkPage(visit, 'memory-updated');

    await page.getByRole('link', { name: 'Entities' }).click();
    await page.getByRole('row').filter({ hasText: alice }).getByRole('cell', { name: '1', exact: true }).waitFor();
    await web.checkPage(visit, 'entities');

    // a page loaded anew (its address typed) in dark mode
    const dark = await web.browser({ colorScheme: 'dark' });
    await web.signIn(dark.page, a.key);
    await dark.page.goto(`${web.base}/console/memories/${memoryId}`);
    await dark.page.locator('.memory-quote').getByText(changed).waitFor();
    await web.checkPage(dark, 'memory-dark');
  });

  it('adds and deletes a memory from its page', async () => {
    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, a.key);
    await page.goto(`${web.base}/console/entities/agent/${alice}-agent`);
    await page.getByLabel('New memory').fill('a memory to delete');
    await page.getByRole('button', { name: 'Add memory' }).click();
    await page.getByRole('link', { name: 'a memory to delete' }).click();
    await page.getByRole('button', { name: 'Delete memory' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.waitForURL(`${web.base}/console/entities/agent/${alice}-agent`);
    await page.getByText('No memories.').waitFor();
    expect(visit.faults).to.deep.equal([]);
  });

  it("shows a project's key nothing of another project, in the browser or through its cookie", async () => {
    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, b.key);
    await page.getByRole('row').filter({ hasText: alice }).getByRole('cell', { name: '1', exact: true }).waitFor();
    await page.goto(`${web.base}/console/memories/${memoryId}`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).to.match(/no memory/i);
    expect(await page.locator('body').innerText()).not.to.include(changed);

    const cookie = await sessionCookie(b.key);
    const asConsole = (req: ReturnType<TestRuntime['http']['get']>) => req.set('Cookie', cookie).set('X-Cairn-Console', '1');
    expect((await asConsole(t.http.get(`/v1/memories/${memoryId}`))).status).to.equal(404);
    expect((await asConsole(t.http.get(`/v1/memories/${bMemoryId}`))).status).to.equal(200);
    const listed = await asConsole(t.http.post('/v3/memories')).send({ filters: { user_id: alice } });
    expect(listed.body.results.map((m: { id: string }) => m.id)).to.deep.equal([bMemoryId]);
    // a cookie of B's session with A's key id in it no longer matches its signature
    const aKeyId = (await t.http.get('/v1/api-keys').set('Authorization', token(a.key))).body.api_keys[0].id as string;
    const forged = cookie.replace(/cairn_console=[^.]+/, `cairn_console=${aKeyId}`);
    expect((await t.http.get('/v1/entities').set('Cookie', forged).set('X-Cairn-Console', '1')).status).to.equal(401);
  });

  it('takes the cookie only with the console header, and ends the session when its key is revoked or it signs out', async () => {
    const created = await t.http.post('/v1/api-keys').set('Authorization', token(a.key)).send({ name: 'console' });
    expect(created.status).to.equal(201);
    const cookie = await sessionCookie(created.body.key);

    const bare = await t.http.get('/v1/entities').set('Cookie', cookie);
    expect(bare.status).to.equal(403);
    expect(bare.body).to.include({ code: 'console_header_required' });
    expect(bare.body.detail).to.be.a('string');
    expect((await t.http.get('/v1/entities').set('Cookie', cookie).set('X-Cairn-Console', '1')).status).to.equal(200);

    const visit = await web.browser();
    await web.signIn(visit.page, created.body.key);
    await visit.page.getByRole('row').filter({ hasText: alice }).first().waitFor();

    const revoked = await t.http.delete(`/v1/api-keys/${created.body.id}`).set('Authorization', token(a.key));
    expect(revoked.status).to.be.oneOf([200, 204]);
    const ended = await t.http.get('/v1/entities').set('Cookie', cookie).set('X-Cairn-Console', '1');
    expect(ended.status).to.equal(401);
    expect(ended.body).to.include({ code: 'console_session_ended' });
    await visit.page.reload();
    await visit.page.getByLabel('API key').waitFor();

    // sign-out ends the session for a copy of the cookie too
    const own = await sessionCookie(a.key);
    expect((await t.http.get('/v1/entities').set('Cookie', own).set('X-Cairn-Console', '1')).status).to.equal(200);
    expect((await t.http.delete('/console/api/session').set('Cookie', own)).status).to.equal(204);
    expect((await t.http.get('/v1/entities').set('Cookie', own).set('X-Cairn-Console', '1')).status).to.equal(401);

    const page = (await web.browser()).page;
    await web.signIn(page, a.key);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.goto(`${web.base}/console/search`);
    await page.getByLabel('API key').waitFor();
  });

  it('answers wrong keys 401, then 429 with Retry-After past the limit', async () => {
    const visit = await web.browser();
    await visit.page.goto(`${web.base}/console`);
    await visit.page.getByLabel('API key').fill('cairn_not-a-key-of-any-project');
    await visit.page.getByRole('button', { name: 'Sign in' }).click();
    await visit.page.getByRole('alert').getByText('not a valid API key').waitFor();

    let last = await t.http.post('/console/api/session').send({ key: 'cairn_wrong' });
    for (let i = 0; i < SIGN_IN_TRIES && last.status === 401; i += 1) {
      expect(last.body).to.include({ code: 'invalid_api_key' });
      last = await t.http.post('/console/api/session').send({ key: `cairn_wrong-${i}` });
    }
    expect(last.status).to.equal(429);
    expect(Number(last.headers['retry-after'])).to.be.within(1, 60);
    expect(last.body).to.include({ code: 'rate_limited' });
    // the right key too, unchecked, until the minute is over
    expect((await t.http.post('/console/api/session').send({ key: a.key })).status).to.equal(429);
  });
});
