import { expect } from 'chai';
import { buildDist, newProject, startRuntime, token, unique, type TestRuntime } from '../helpers.js';
import { ConsoleBrowser } from '../console-browser.js';

// The console's knowledge and agent pages as a person uses them, in Debian's Chromium: a document
// uploaded through the file input, seen uploaded and then ready, searched; an agent answering from
// it with a citation that opens the cited chunk, the turn's trace and its run; an invalid edit of
// the agent refused at the field it names. Every page is checked for console errors, failed
// requests and (axe-core) serious accessibility faults, light and dark, and saved as a screenshot.

const HANDBOOK = `# Returns

Refunds are issued within 14 days of purchase. To ask for a refund, write to support with your order number.

# Shipping

Orders ship within two business days. Express delivery costs 9 euros and arrives the next day.
`;

describe('console: knowledge and agents in a browser', function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let web: ConsoleBrowser;
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
    web = await ConsoleBrowser.serve(t);
  });

  after(async () => {
    await web?.close();
    await t?.close();
  });

  it('uploads a document, follows it to ready, searches it, and an agent cites it: the citation opens its chunk', async () => {
    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, project.key);
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { name: 'Knowledge bases' }).waitFor();
    await page.getByRole('link', { name: kb }).waitFor();
    await web.checkPage(visit, 'knowledge-bases');

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
    await web.checkPage(visit, 'knowledge-base-pending');
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
    await web.checkPage(visit, 'knowledge-base');

    await page.getByRole('region', { name: 'hybrid' }).getByRole('link', { name: 'handbook.md' }).first().click();
    await page.getByRole('heading', { name: 'Document handbook.md' }).waitFor();
    await page.locator('li.cited').getByText('Refunds are issued within 14 days').waitFor();
    await web.checkPage(visit, 'document');

    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: agent }).click();
    await page.getByRole('heading', { name: `Agent ${agent}` }).waitFor();
    await page.getByText('No runs yet.').waitFor();
    await web.checkPage(visit, 'agent');

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
    await web.checkPage(visit, 'agent-chat');

    await citation.click();
    await page.getByRole('heading', { name: 'Document handbook.md' }).waitFor();
    expect(page.url()).to.include('?chunk=');
    await page.locator('li.cited[aria-current="true"]').getByText('Refunds are issued within 14 days').waitFor();
    await web.checkPage(visit, 'document-cited');

    await page.goBack();
    await page.getByRole('heading', { name: `Agent ${agent}` }).waitFor();
    await page.locator('section[aria-labelledby="runs"]').getByRole('link').first().click();
    await page.getByRole('heading', { name: `Run of ${agent}` }).waitFor();
    await page.getByText('How long do refunds take?').waitFor();
    await page.getByRole('heading', { name: 'Input guardrails' }).waitFor();
    await page.locator('.trace .citations').getByRole('link', { name: `handbook.md (${kb})` }).first().waitFor();
    await web.checkPage(visit, 'run');
  });

  it('refuses an invalid agent edit at the field it names and changes nothing; pages clean in dark mode', async () => {
    const auth = token(project.key);
    const before = (await t.http.get(`/v1/agents/${agent}`).set('Authorization', auth)).body as { updated_at: string; stream_mode: string };
    const visit = await web.browser({ colorScheme: 'dark' });
    const { page } = visit;
    await web.signIn(page, project.key);
    await page.goto(`${web.base}/console/agents`);
    await page.getByRole('link', { name: agent }).waitFor();
    await web.checkPage(visit, 'agents-dark');
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
    await web.checkPage(visit, 'agent-invalid-dark');

    const after = (await t.http.get(`/v1/agents/${agent}`).set('Authorization', auth)).body as { updated_at: string; stream_mode: string; instructions: string };
    expect(after).to.include({ updated_at: before.updated_at, stream_mode: before.stream_mode, instructions: 'Answer from the handbook.' });
    await page.reload();
    expect(JSON.parse(await page.getByLabel('Definition (JSON)').inputValue())).to.include({ stream_mode: before.stream_mode, instructions: 'Answer from the handbook.' });

    await page.goto(`${web.base}/console/knowledge/${kb}`);
    await page.getByRole('row').filter({ hasText: 'handbook.md' }).getByText('ready', { exact: true }).waitFor();
    await web.checkPage(visit, 'knowledge-base-dark');
  });
});
