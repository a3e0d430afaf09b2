import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { buildDist, CHROMIUM, newProject, PROFILE, repoRoot, startRuntime, tempDir, token, unique, type TestRuntime } from '../helpers.js';

// The console's knowledge and agent pages as a person uses them, in Debian's Chromium: a document
// uploaded through the file input, seen uploaded and then ready, searched; an agent answering from
// it with a citation that opens the cited chunk, the turn's trace and its run; an invalid edit of
// the agent refused at the field it names. Every page is checked for console errors, failed
// requests and (axe-core) serious accessibility faults, light and dark, and saved as a screenshot.

const SCREENSHOTS = path.join(repoRoot, '.cache', 'console-screenshots');
const AXE = fs.readFileSync(path.join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

const HANDBOOK = `# Returns

Refunds are issued within 14 days of purchase. To ask for a refund, write to support with your order number.

# Shipping

Orders ship within two business days. Express delivery costs 9 euros and arrives the next day.
`;

interface PageGlobals {
  document: unknown;
  axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> };
}
interface Visit {
  page: Page;
  /** Console errors, uncaught exceptions, failed requests and error answers since the browser opened. */
  faults: string[];
}

describe('console: knowledge and agents in a browser', function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let server: http.Server;
  let base: string;
  const open: BrowserContext[] = [];
  let project: { key: string; projectId: string; name: string };
  const kb = unique('handbook');
  const agent = unique('helper');

  before(async () => {
    await buildDist();
    // not started yet: no worker processes a document until the test starts it, so "uploaded" is seen for sure
    t = await startRuntime({ start: false });
    project = await newProject(t);
    const auth = token(project.key);
    expect((await t.http.post('/v1/knowledge').set('Authorization', auth).send({ name: kb })).status).to.equal(201);
    const created = await t.http.post('/v1/agents').set('Authorization', auth).send({ name: agent, knowledge: [kb], instructions: 'Answer from the handbook.' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    server = http.createServer(t.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await Promise.all(open.map((c) => c.close()));
    server?.closeAllConnections();
    if (server) await new Promise((resolve) => server.close(resolve));
    await t?.close();
  });

  async function browser(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<Visit> {
    const context = await chromium.launchPersistentContext(tempDir('cairn-chromium-'), { ...CHROMIUM, bypassCSP: true, viewport: { width: 1200, height: 800 }, ...options });
    open.push(context);
    const page = context.pages()[0] ?? (await context.newPage());
    const faults: string[] = [];
    page.on('console', (m) => m.type() === 'error' && faults.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => faults.push(`exception: ${e.message}`));
    page.on('requestfailed', (r) => faults.push(`failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('response', (r) => r.status() >= 400 && faults.push(`${r.status()}: ${r.request().method()} ${r.url()}`));
    page.on('request', (r) => new URL(r.url()).host !== new URL(base).host && faults.push(`another host: ${r.url()}`));
    return { page, faults };
  }

  async function axeFaults(page: Page): Promise<string[]> {
    await page.addScriptTag({ content: AXE });
    const found = await page.evaluate(async () => {
      const g = globalThis as unknown as PageGlobals;
      const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3) }));
    });
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id} at ${v.targets.join(', ')}`);
  }

  async function checkPage(visit: Visit, name: string): Promise<void> {
    expect(visit.faults, `faults on ${name}`).to.deep.equal([]);
    expect(await axeFaults(visit.page), `axe on ${name}`).to.deep.equal([]);
    await visit.page.screenshot({ path: path.join(SCREENSHOTS, `${PROFILE}-${name}.png`), fullPage: true });
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}/console`);
    await page.getByLabel('API key').fill(project.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // the first page has its answer: a page opened next cannot abort its request
    await page.getByText('Loading…').waitFor({ state: 'hidden' });
  }

  it('uploads a document, follows it to ready, searches it, and an agent cites it: the citation opens its chunk', async () => {
    const visit = await browser();
    const { page } = visit;
    await signIn(page);
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { name: 'Knowledge bases' }).waitFor();
    await page.getByRole('link', { name: kb }).waitFor();
    await checkPage(visit, 'knowledge-bases');

    await page.getByRole('link', { name: kb }).click();
    await page.getByRole('heading', { name: `Knowledge base ${kb}` }).waitFor();
    await page.getByText('No documents yet.').waitFor();
    // the drop area is a file input too: Tab reaches it from the link before it
    await page.getByRole('link', { name: 'All knowledge bases' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id)).to.equal('document-files');
    const input = page.getByLabel('Upload documents');
    await input.setInputFiles({ name: 'handbook.md', mimeType: 'text/markdown', buffer: Buffer.from(HANDBOOK) });
    await page.getByRole('status').getByText('Uploaded handbook.md.').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'handbook.md' });
    await row.getByText('uploaded', { exact: true }).waitFor();
    await checkPage(visit, 'knowledge-base-pending');
    // workers start: the page, which looks again while a document is unfinished, shows it ready
    await t.runtime.start();
    await row.getByText('ready', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await row.getByRole('cell').nth(2).innerText()).to.match(/^[1-9]\d*$/);

    await page.getByLabel('Query').fill('refunds within 14 days');
    await page.getByRole('button', { name: 'Search' }).click();
    for (const mode of ['hybrid', 'dense', 'keyword']) {
      const section = page.getByRole('region', { name: mode });
      await section.getByText('Refunds are issued within 14 days').first().waitFor();
      expect(await section.locator('.score').first().innerText()).to.match(/\b\d+\.\d{4}$/);
    }
    expect(await page.getByRole('region', { name: 'hybrid' }).locator('.signal').first().innerText()).to.equal('found by dense and keyword');
    await checkPage(visit, 'knowledge-base');

    await page.getByRole('region', { name: 'hybrid' }).getByRole('link', { name: 'handbook.md' }).first().click();
    await page.getByRole('heading', { name: 'Document handbook.md' }).waitFor();
    await page.locator('li.cited').getByText('Refunds are issued within 14 days').waitFor();
    await checkPage(visit, 'document');

    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: agent }).click();
    await page.getByRole('heading', { name: `Agent ${agent}` }).waitFor();
    await page.getByText('No runs yet.').waitFor();
    await checkPage(visit, 'agent');

    // the answer streamed as server-sent events, then its citations and trace
    await page.getByLabel('Message').fill('How long do refunds take?');
    await page.getByLabel('Stream the answer').check();
    await page.getByRole('button', { name: 'Send' }).click();
    const citation = page.locator('.turn .citations').first().getByRole('link', { name: `handbook.md (${kb})` }).first();
    await citation.waitFor({ timeout: 90_000 });
    expect((await page.locator('.turn .answer').innerText()).trim()).not.to.equal('');
    await page.getByText('Trace of this turn').click();
    await page.getByRole('heading', { name: 'Input guardrails' }).waitFor();
    expect(await page.locator('.trace').innerText()).to.match(/\d+ in, \d+ out/);
    await page.locator('section[aria-labelledby="runs"]').getByRole('cell', { name: 'ok', exact: true }).waitFor();
    await checkPage(visit, 'agent-chat');

    await citation.click();
    await page.getByRole('heading', { name: 'Document handbook.md' }).waitFor();
    expect(page.url()).to.include('?chunk=');
    await page.locator('li.cited[aria-current="true"]').getByText('Refunds are issued within 14 days').waitFor();
    await checkPage(visit, 'document-cited');

    await page.goBack();
    await page.getByRole('heading', { name: `Agent ${agent}` }).waitFor();
    await page.locator('section[aria-labelledby="runs"]').getByRole('link').first().click();
    await page.getByRole('heading', { name: `Run of ${agent}` }).waitFor();
    await page.getByText('How long do refunds take?').waitFor();
    await page.getByRole('heading', { name: 'Input guardrails' }).waitFor();
    await page.locator('.trace .citations').getByRole('link', { name: `handbook.md (${kb})` }).first().waitFor();
    await checkPage(visit, 'run');
  });

  it('refuses an invalid agent edit at the field it names and changes nothing; pages clean in dark mode', async () => {
    const auth = token(project.key);
    const before = (await t.http.get(`/v1/agents/${agent}`).set('Authorization', auth)).body as { updated_at: string; stream_mode: string };
    const visit = await browser({ colorScheme: 'dark' });
    const { page } = visit;
    await signIn(page);
    await page.goto(`${base}/console/agents`);
    await page.getByRole('link', { name: agent }).waitFor();
    await checkPage(visit, 'agents-dark');
    await page.getByRole('link', { name: agent }).click();
    const editor = page.getByLabel('Definition (JSON)');
    const definition = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    expect(definition).to.include({ name: agent, stream_mode: before.stream_mode });
    await editor.fill(JSON.stringify({ ...definition, stream_mode: 'carrier-pigeon', instructions: 'Changed?' }, null, 2));
    // saved from the keyboard
    await page.getByRole('button', { name: 'Save' }).focus();
    await page.keyboard.press('Enter');
    const faults = page.getByRole('list', { name: 'Fields at fault' });
    await faults.getByText('/stream_mode').waitFor();
    expect(await editor.getAttribute('aria-invalid')).to.equal('true');
    // the refusal is the one error answer (and its console line) the page saw
    expect(visit.faults.length).to.be.within(1, 2);
    for (const fault of visit.faults) expect(fault).to.match(/400/);
    visit.faults.length = 0;
    await checkPage(visit, 'agent-invalid-dark');

    const after = (await t.http.get(`/v1/agents/${agent}`).set('Authorization', auth)).body as { updated_at: string; stream_mode: string; instructions: string };
    expect(after).to.include({ updated_at: before.updated_at, stream_mode: before.stream_mode, instructions: 'Answer from the handbook.' });
    await page.reload();
    expect(JSON.parse(await page.getByLabel('Definition (JSON)').inputValue())).to.include({ stream_mode: before.stream_mode, instructions: 'Answer from the handbook.' });

    await page.goto(`${base}/console/knowledge/${kb}`);
    await page.getByRole('row').filter({ hasText: 'handbook.md' }).getByText('ready', { exact: true }).waitFor();
    await checkPage(visit, 'knowledge-base-dark');
  });
});
