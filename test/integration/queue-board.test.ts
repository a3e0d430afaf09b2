import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { CHROMIUM, isProduction, startRuntime, tempDir, type TestRuntime } from '../helpers.js';

// The queue dashboard as a person sees it: Debian's Chromium, headless, opening the board through
// the sign-in page and through Basic credentials, with every request it makes on record.

const ADMIN_TOKEN = 'admin-token-for-the-board-0123456789';
/** Jobs waiting in the queue the board is checked on (no worker runs in this process). */
const WAITING = 3;

describe('queue board in a browser', function () {
  this.timeout(90_000);
  let t: TestRuntime;
  let server: http.Server;
  let base: string;
  const open: BrowserContext[] = [];

  before(async () => {
    // not started: no worker takes the queued jobs and no relay adds any, so the counts hold still
    t = await startRuntime({ start: false, env: { ADMIN_TOKEN } });
    if (isProduction) {
      const queue = t.runtime.bullQueues().find((q) => q.name === 'documents');
      for (let i = 0; i < WAITING; i += 1) await queue?.add('document.process', { n: i });
    }
    server = http.createServer(t.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await Promise.all(open.map((c) => c.close()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  /** A fresh Chromium profile; `requests` collects the URL of every request its pages make. */
  async function browser(options: BrowserContextOptions = {}): Promise<{ page: Page; requests: string[] }> {
    const context = await chromium.launchPersistentContext(tempDir('cairn-chromium-'), { ...CHROMIUM, ...options });
    open.push(context);
    const requests: string[] = [];
    context.on('request', (r) => requests.push(r.url()));
    return { page: context.pages()[0] ?? (await context.newPage()), requests };
  }

  async function signIn(page: Page, adminToken: string): Promise<void> {
    await page.goto(`${base}/admin/sign-in`);
    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** What the board shows once its queues have loaded: names and counts, no untranslated labels. */
  async function expectBoard(page: Page): Promise<void> {
    await page.waitForURL((url) => url.pathname === '/admin/queues');
    if (isProduction) {
      await page.getByText(`${WAITING} Jobs`, { exact: true }).waitFor();
      const text = await page.locator('body').innerText();
      for (const name of ['maintenance', 'embedding', 'extraction', 'documents', 'webhooks']) expect(text).to.include(name);
      expect(text).to.match(new RegExp(`documents[^]{0,40}?${WAITING} Jobs`));
      expect(text).not.to.match(/MENU\.|QUEUE\.|STATUS\.|Loading/);
    } else {
      // the embedded profile's queues are in-process: the same path shows their depths, and the way to the console
      await page.getByRole('heading', { name: 'Queues' }).waitFor();
      const table = page.getByRole('table', { name: 'Jobs by queue' });
      for (const name of ['maintenance', 'embedding', 'extraction', 'documents', 'webhooks']) await table.getByRole('rowheader', { name }).waitFor();
      expect(await table.getByRole('columnheader', { name: 'Waiting' }).count()).to.equal(1);
      expect(await page.getByRole('link', { name: "The console's Operations page" }).getAttribute('href')).to.equal('/console/operations');
      // other clients get the same as JSON
      const json = await page.request.get(page.url(), { headers: { accept: 'application/json' } });
      const depths = (await json.json()) as { queues: Array<{ queue: string; waiting: number }> };
      expect(depths.queues.map((q) => q.queue)).to.include.members(['maintenance', 'embedding', 'extraction', 'documents', 'webhooks']);
    }
  }

  const expectOnlyLocal = (requests: string[]) => {
    expect(requests.length).to.be.greaterThan(0);
    expect(requests.filter((url) => new URL(url).hostname !== '127.0.0.1')).to.deep.equal([]);
  };

  it('opens through the sign-in page, asks nothing of other hosts, and signs out', async () => {
    const { page, requests } = await browser();
    await signIn(page, ADMIN_TOKEN);
    await expectBoard(page);
    if (isProduction) await page.screenshot({ path: '/tmp/board.png', fullPage: true });
    expectOnlyLocal(requests);

    if (isProduction) {
      // the board's user menu holds the link
      await page.locator('header button').last().click();
      await page.getByRole('menuitem', { name: 'Sign out' }).click();
      await page.waitForURL(`${base}/admin/sign-in`);
    } else {
      await page.goto(`${base}/admin/sign-out`);
    }
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).to.equal('/admin/sign-in');
  });

  it('opens with Basic credentials, as before', async () => {
    const { page, requests } = await browser({ httpCredentials: { username: 'admin', password: ADMIN_TOKEN } });
    await page.goto(`${base}/admin/sign-in`);
    await page.getByRole('link', { name: "Use the browser's password prompt" }).click();
    await expectBoard(page);
    expectOnlyLocal(requests);
  });

  it('opens with the token in the URL', async () => {
    const { page, requests } = await browser();
    await page.goto(`${base.replace('//', `//admin:${ADMIN_TOKEN}@`)}/admin/sign-in/basic`);
    await expectBoard(page);
    expectOnlyLocal(requests);
  });

  it('shows the form again with an error for a wrong token', async () => {
    const { page } = await browser();
    await signIn(page, 'not-the-admin-token-at-all');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).to.include('not the admin token');
    expect(new URL(page.url()).pathname).to.equal('/admin/sign-in');
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).to.equal('/admin/sign-in');
  });

  it('sends a browser that has not signed in to the sign-in page', async () => {
    const { page } = await browser();
    const response = await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).to.equal('/admin/sign-in');
    expect(response?.status()).to.equal(200);
    await page.getByLabel('Admin token').waitFor();
  });

  it('answers an API client without credentials 401, and one with the cookie or Basic', async () => {
    const api = isProduction ? '/admin/queues/api/queues' : '/admin/queues';
    expect((await t.http.get(api).set('Accept', 'application/json')).status).to.equal(401);
    expect((await t.http.get(api).auth('admin', ADMIN_TOKEN)).status).to.equal(200);

    const wrong = await t.http.post('/admin/sign-in').type('form').send({ token: 'wrong-token-wrong-token' });
    expect(wrong.status).to.equal(401);
    expect(wrong.headers['set-cookie']).to.equal(undefined);

    const signedIn = await t.http.post('/admin/sign-in').type('form').send({ token: ADMIN_TOKEN });
    expect(signedIn.status).to.equal(303);
    const cookies = signedIn.headers['set-cookie'] as unknown as string[];
    expect(cookies.join('\n')).to.match(/cairn_admin=\d+\.[\w-]+; path=\/admin; expires=[^;]+; samesite=strict; httponly/);
    const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await t.http.get(api).set('Cookie', cookie).set('Accept', 'application/json')).status).to.equal(200);
    // a cookie whose value was changed no longer matches its signature
    const forged = cookie.replace(/cairn_admin=\d+/, `cairn_admin=${Date.now() + 1e12}`);
    expect((await t.http.get(api).set('Cookie', forged).set('Accept', 'application/json')).status).to.equal(401);
  });
});
