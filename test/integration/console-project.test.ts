import { expect } from 'chai';
import { buildDist, newProject, startRuntime, token, unique, type TestRuntime } from '../helpers.js';
import { ConsoleBrowser } from '../console-browser.js';

// The console's project pages (API keys, embedding model, MCP, usage; webhooks; vector indexes)
// and its operations page, as a person uses them in Chromium: every page free of console errors
// and failed requests, checked by axe-core in light and dark, saved as a screenshot; a new key
// shown once, another revoked; the operations counts those of GET /v1/operations; and a key of
// one project seeing nothing of another's. Workers are not started: memories stay pending.

describe('console: project and operations pages', function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let web: ConsoleBrowser;
  let a: { key: string; projectId: string; name: string };
  let b: { key: string; projectId: string; name: string };
  const index = unique('ix');
  const hook = unique('hook');
  const pendingText = `${unique('bob')} keeps bees`;
  const failedText = `${unique('bob')} sails on Sundays`;
  const failure = 'the embedding model answered 503';
  const adminToken = `admin-${unique('token')}`;

  before(async () => {
    await buildDist();
    t = await startRuntime({ start: false, env: { TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1', ADMIN_TOKEN: adminToken } });
    a = await newProject(t);
    b = await newProject(t);
    const asA = token(a.key);
    for (const text of [pendingText, failedText]) {
      const added = await t.http.post('/v3/memories/add').set('Authorization', asA).send({ messages: [{ role: 'user', content: text }], user_id: 'bob', infer: false });
      expect(added.status).to.equal(200);
    }
    await t.runtime.db('memories').where({ project_id: a.projectId, memory: failedText }).update({ embedding_status: 'failed', embedding_error: failure });
    expect((await t.http.post('/v1/indexes').set('Authorization', asA).send({ name: index, dimension: 3, metric: 'cosine' })).status).to.equal(201);
    const upsert = await t.http
      .post(`/v1/indexes/${index}/vectors/upsert`)
      .set('Authorization', asA)
      .send({ vectors: [{ id: 'north', values: [0, 1, 0], metadata: { place: 'north' } }, { id: 'east', values: [1, 0, 0] }] });
    expect(upsert.status).to.equal(200);
    const created = await t.http.post(`/api/v1/webhooks/projects/${a.projectId}`).set('Authorization', asA).send({ name: hook, url: 'http://127.0.0.1:9/hook', event_types: ['memory_add'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    web = await ConsoleBrowser.serve(t);
  });

  after(async () => {
    await web?.close();
    await t?.close();
  });

  it("answers GET /v1/operations with the caller's pending and failed rows and their reasons", async () => {
    const ofA = await t.http.get('/v1/operations').set('Authorization', token(a.key));
    expect(ofA.status).to.equal(200);
    expect(ofA.body.memories).to.deep.equal({ pending: 1, indexed: 0, failed: 1 });
    expect(ofA.body.documents).to.deep.equal({ uploaded: 0, processing: 0, ready: 0, failed: 0 });
    expect(ofA.body.pending.map((r: { label: string }) => r.label)).to.deep.equal([pendingText]);
    expect(ofA.body.failed).to.have.length(1);
    expect(ofA.body.failed[0]).to.include({ kind: 'memory', label: failedText, status: 'failed', error: failure, knowledge_base: null });
    expect(ofA.body.queues.map((q: { queue: string }) => q.queue)).to.include('embedding');

    const ofB = await t.http.get('/v1/operations').set('Authorization', token(b.key));
    expect(ofB.body.memories).to.deep.equal({ pending: 0, indexed: 0, failed: 0 });
    expect(ofB.body.pending).to.deep.equal([]);
    expect(ofB.body.failed).to.deep.equal([]);
    expect((await t.http.get('/v1/operations')).status).to.equal(401);
  });

  it('creates a key shown once, revokes another after asking, and never shows a secret again', async () => {
    const old = await t.http.post('/v1/api-keys').set('Authorization', token(a.key)).send({ name: 'old laptop' });
    expect(old.status).to.equal(201);
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, a.key);
    await page.getByRole('link', { name: 'Project' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'old laptop' }).waitFor();
    await page.getByText(`${web.base}/mcp`).first().waitFor();
    await web.checkPage(visit, 'project');

    await page.getByLabel('Name').fill('deploy bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('The new key');
    await shown.waitFor();
    const secret = await shown.inputValue();
    expect(secret).to.match(/^cairn_/);
    await page.getByText('it will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    await page.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    await web.checkPage(visit, 'project-new-key');
    // the new key works, and belongs to this project
    expect((await t.http.get('/v1/ping').set('Authorization', token(secret))).body.project_id).to.equal(a.projectId);

    // revoke another key: it asks first
    const row = page.getByRole('row').filter({ hasText: 'old laptop' });
    await row.getByRole('button', { name: 'Revoke old laptop' }).click();
    await row.getByRole('button', { name: 'Revoke for good' }).waitFor();
    await web.checkPage(visit, 'project-revoke-confirm');
    await row.getByRole('button', { name: 'Revoke for good' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await t.http.get('/v1/ping').set('Authorization', token(old.body.key))).status).to.equal(401);

    // done, or the page loaded again: the secret is gone for good
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    const html = await page.content();
    for (const key of [secret, a.key, old.body.key as string]) expect(html).not.to.include(key);
    expect(html).not.to.include(secret.slice(0, 20));
    expect(visit.faults).to.deep.equal([]);

    const dark = await web.browser({ clipboard: true, colorScheme: 'dark' });
    await web.signIn(dark.page, a.key);
    await dark.page.goto(`${web.base}/console/project`);
    await dark.page.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    await web.checkPage(dark, 'project-dark');
  });

  it('shows the operations counts the API answers, with the failure reason, and a chart that fills', async () => {
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, a.key);
    await page.getByRole('link', { name: 'Operations' }).click();
    const api = (await t.http.get('/v1/operations').set('Authorization', token(a.key))).body;
    const count = (label: string) => page.locator('.count').filter({ hasText: label }).locator('.count-value');
    await count('Memories pending').getByText(String(api.memories.pending), { exact: true }).waitFor();
    expect(await count('Memories failed').innerText()).to.equal(String(api.memories.failed));
    expect(await count('Documents pending').innerText()).to.equal(String(api.documents.uploaded + api.documents.processing));
    const failedRow = page.getByRole('region', { name: 'Failed' }).getByRole('row').filter({ hasText: failedText });
    await failedRow.getByText(failure).waitFor();
    await page.getByRole('region', { name: 'Pending' }).getByRole('link', { name: pendingText }).waitFor();
    expect(await page.getByRole('link', { name: 'queue board' }).getAttribute('href')).to.equal('/admin/queues');
    // a second look draws the line
    await page.locator('svg polyline').first().waitFor({ state: 'attached' });
    expect(await page.getByRole('img', { name: /^Jobs in the queues: now \d+ jobs/ }).count()).to.equal(1);
    await web.checkPage(visit, 'operations');

    const dark = await web.browser({ clipboard: true, colorScheme: 'dark' });
    await web.signIn(dark.page, a.key);
    await dark.page.goto(`${web.base}/console/operations`);
    await dark.page.getByText(failure).waitFor();
    await web.checkPage(dark, 'operations-dark');
  });

  it("lists the project's webhooks with their delivery log, and its indexes with a query playground", async () => {
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, a.key);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const row = page.getByRole('row').filter({ hasText: hook });
    await row.getByText('http://127.0.0.1:9/hook').waitFor();
    await row.getByRole('button', { name: `Deliveries of ${hook}` }).click();
    await page.getByRole('heading', { name: `Deliveries of ${hook}` }).waitFor();
    await page.getByText('Nothing sent yet.').waitFor();
    await web.checkPage(visit, 'webhooks');

    await page.getByRole('link', { name: 'Indexes' }).click();
    await page.getByRole('link', { name: index }).click();
    await page.getByRole('heading', { name: `Index ${index}` }).waitFor();
    await page.locator('.facts').getByText('raw vectors').waitFor();
    await page.getByLabel(/^Vector/).fill('[0.1, 0.9, 0]');
    await page.getByLabel('Top k').fill('1');
    await page.getByRole('button', { name: 'Query' }).click();
    const match = page.getByRole('row').filter({ hasText: 'north' });
    await match.waitFor();
    expect(await match.locator('.score').innerText()).to.match(/^0\.99\d{2}$/);
    expect(await page.getByRole('row').filter({ hasText: 'east' }).count()).to.equal(0);
    await web.checkPage(visit, 'index');
    await page.getByLabel(/^Vector/).fill('not json');
    await page.getByRole('button', { name: 'Query' }).click();
    await page.getByRole('alert').getByText('not JSON').waitFor();

    const dark = await web.browser({ clipboard: true, colorScheme: 'dark' });
    await web.signIn(dark.page, a.key);
    await dark.page.goto(`${web.base}/console/indexes`);
    await dark.page.getByRole('link', { name: index }).waitFor();
    await web.checkPage(dark, 'indexes-dark');
    await dark.page.goto(`${web.base}/console/webhooks`);
    await dark.page.getByRole('row').filter({ hasText: hook }).waitFor();
    await web.checkPage(dark, 'webhooks-dark');
  });

  it("shows a key of project B none of project A's keys, webhooks, indexes or operations", async () => {
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, b.key);
    await page.goto(`${web.base}/console/project`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('table').first().innerText()).not.to.match(/deploy bot|old laptop/);
    await page.goto(`${web.base}/console/webhooks`);
    await page.getByText('No webhooks yet.').waitFor();
    await page.goto(`${web.base}/console/indexes`);
    await page.getByText('No indexes yet').waitFor();
    await page.goto(`${web.base}/console/operations`);
    await page.getByText('Nothing has failed.').waitFor();
    await page.getByText('Nothing is waiting.').waitFor();
    const body = await page.locator('body').innerText();
    expect(body).not.to.include(failedText).and.not.to.include(pendingText);
    expect(visit.faults).to.deep.equal([]);
    // another project's index by its address: not found, nothing of it shown
    await page.goto(`${web.base}/console/indexes/${index}`);
    await page.getByRole('alert').waitFor();
    expect(await page.locator('.facts').count()).to.equal(0);

    // B's session cookie, asked straight for A's webhooks: 404
    const signIn2 = await t.http.post('/console/api/session').send({ key: b.key });
    const cookie = (signIn2.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
    const asB = (req: ReturnType<TestRuntime['http']['get']>) => req.set('Cookie', cookie).set('X-Cairn-Console', '1');
    expect((await asB(t.http.get(`/api/v1/webhooks/projects/${a.projectId}`))).status).to.equal(404);
    expect((await asB(t.http.get(`/v1/indexes/${index}`))).status).to.equal(404);
    expect((await asB(t.http.get('/v1/api-keys'))).body.api_keys.map((k: { name: string }) => k.name)).not.to.include('deploy bot');
  });

  it("lets the operator's ADMIN_TOKEN switch between every project, which a project key's session cannot", async () => {
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, adminToken);
    const projectField = page.getByLabel('Project', { exact: true });
    await projectField.locator('option', { hasText: a.name }).waitFor({ state: 'attached' });
    expect(await page.getByRole('link', { name: 'Queue board' }).getAttribute('href')).to.equal('/admin/queues');
    await web.checkPage(visit, 'operator');

    await projectField.selectOption(a.name);
    await page.getByRole('button', { name: 'Switch' }).click();
    await page.getByRole('link', { name: 'Project', exact: true }).click();
    await page.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('row').filter({ hasText: hook }).waitFor();
    await projectField.selectOption(b.name);
    await page.getByRole('button', { name: 'Switch' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByRole('link', { name: 'Project', exact: true }).click();
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('table').first().innerText()).not.to.include('deploy bot');
    expect(visit.faults).to.deep.equal([]);

    const cookieOf = async (key: string) => {
      const res = await t.http.post('/console/api/session').send({ key });
      expect(res.status).to.equal(201);
      return { cookie: (res.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; '), body: res.body };
    };
    const asConsole = (req: ReturnType<TestRuntime['http']['get']>, cookie: string) => req.set('Cookie', cookie).set('X-Cairn-Console', '1');
    // a project key's session stays in its project
    const ofA = await cookieOf(a.key);
    expect(ofA.body.operator).to.equal(false);
    expect((await asConsole(t.http.get('/console/api/projects'), ofA.cookie)).status).to.equal(403);
    expect((await asConsole(t.http.put('/console/api/session/project'), ofA.cookie).send({ project: b.name })).status).to.equal(403);
    // the operator's session acts in the project it switched to; one sign-out ends both cookies
    const operator = await cookieOf(adminToken);
    expect(operator.body).to.include({ operator: true, key_id: 'operator' });
    expect((await t.http.put('/console/api/session/project').set('Cookie', operator.cookie).send({ project: a.name })).status).to.equal(403);
    const moved = await asConsole(t.http.put('/console/api/session/project'), operator.cookie).send({ project: a.name });
    expect(moved.status).to.equal(200);
    const inA = (moved.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
    expect((await asConsole(t.http.get('/v1/ping'), inA)).body.project_id).to.equal(a.projectId);
    expect((await asConsole(t.http.put('/console/api/session/project'), inA).send({ project: unique('none') })).status).to.equal(404);
    expect((await t.http.delete('/console/api/session').set('Cookie', inA)).status).to.equal(204);
    expect((await asConsole(t.http.get('/v1/ping'), inA)).status).to.equal(401);
    expect((await asConsole(t.http.get('/v1/ping'), operator.cookie)).status).to.equal(401);
  });

  it('signs out when the key the session uses is revoked from the console', async () => {
    const own = await t.http.post('/v1/api-keys').set('Authorization', token(a.key)).send({ name: 'short lived' });
    const visit = await web.browser({ clipboard: true });
    const { page } = visit;
    await web.signIn(page, own.body.key);
    await page.goto(`${web.base}/console/project`);
    const row = page.getByRole('row').filter({ hasText: 'short lived' });
    await row.getByText('(this session)').waitFor();
    await row.getByRole('button', { name: 'Revoke short lived' }).click();
    await row.getByText('Revoke the key this session uses, and sign out?').waitFor();
    await row.getByRole('button', { name: 'Revoke for good' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(visit.faults).to.deep.equal([]);
    expect((await t.http.get('/v1/ping').set('Authorization', token(own.body.key))).status).to.equal(401);
  });
});
