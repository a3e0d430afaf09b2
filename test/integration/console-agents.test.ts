import { expect } from 'chai';
import { buildDist, newProject, startRuntime, token, unique, type TestRuntime } from '../helpers.js';
import { ConsoleBrowser } from '../console-browser.js';

// An agent's whole definition edited in the console, in Debian's Chromium: the agent created from
// the list page, a rule added (seen listed, and stored), an invalid tool refused at the field it
// names with nothing stored, the rule deleted after a confirm step. Each state is checked for
// console errors, failed requests and (axe-core) serious accessibility faults.

describe('console: editing an agent in a browser', function () {
  this.timeout(90_000);
  let t: TestRuntime;
  let web: ConsoleBrowser;
  let project: { key: string; projectId: string; name: string };
  const agent = unique('concierge');

  before(async () => {
    await buildDist();
    t = await startRuntime({ start: false });
    project = await newProject(t);
    web = await ConsoleBrowser.serve(t);
  });

  after(async () => {
    await web?.close();
    await t?.close();
  });

  it('creates an agent, adds a rule, refuses an invalid tool at /http/url, deletes the rule', async () => {
    const auth = token(project.key);
    const stored = async () =>
      (await t.http.get(`/v1/agents/${agent}`).set('Authorization', auth)).body as { instructions?: string; rules: Array<{ id: string; action: string }>; tools: unknown[] };
    const visit = await web.browser();
    const { page } = visit;
    await web.signIn(page, project.key, '/console/agents');
    await page.getByRole('heading', { name: 'New agent' }).waitFor();
    await web.checkPage(visit, 'agents-new');

    // a name the API refuses: its message shown at the name field, nothing created
    await page.getByLabel('Name').fill('not a name!');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.locator('#new-agent-name-faults').waitFor();
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).to.equal('true');
    expect(visit.faults.length).to.be.within(1, 2);
    for (const fault of visit.faults) expect(fault).to.match(/400/);
    visit.faults.length = 0;
    await web.checkPage(visit, 'agents-new-invalid');
    expect((await t.http.get('/v1/agents').set('Authorization', auth)).body).to.deep.include({ agents: [] });

    await page.getByLabel('Name').fill(agent);
    await page.getByLabel('Instructions (optional)').fill('Greet every guest.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: `Agent ${agent}` }).waitFor();
    await page.getByText('No rules.').waitFor();
    expect((await stored()).instructions).to.equal('Greet every guest.');

    // a rule, from the README's example the editor starts with
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const newRule = page.getByLabel('New rule (JSON)');
    expect(JSON.parse(await newRule.inputValue())).to.include({ rule_type: 'escalation' });
    await web.checkPage(visit, 'agent-rule-new');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const rules = page.locator('section[aria-labelledby="rules"]');
    await rules.getByText('A person will take over.').waitFor();
    const afterRule = await stored();
    expect(afterRule.rules).to.have.length(1);
    expect(afterRule.rules[0]?.action).to.equal('A person will take over.');
    await web.checkPage(visit, 'agent-rule-added');

    // a tool whose URL is not http(s): refused at /http/url, nothing stored
    await page.getByRole('button', { name: 'Add a tool' }).click();
    const newTool = page.getByLabel('New tool (JSON)');
    const tool = JSON.parse(await newTool.inputValue()) as Record<string, unknown>;
    await newTool.fill(JSON.stringify({ ...tool, http: { url: 'ftp://x', method: 'GET' } }, null, 2));
    await page.getByRole('button', { name: 'Add tool' }).click();
    await page.getByRole('list', { name: 'Fields at fault in New tool' }).getByText('/http/url').waitFor();
    expect(await newTool.getAttribute('aria-invalid')).to.equal('true');
    expect(visit.faults.length).to.be.within(1, 2);
    for (const fault of visit.faults) expect(fault).to.match(/400/);
    visit.faults.length = 0;
    await web.checkPage(visit, 'agent-tool-invalid');
    expect((await stored()).tools).to.deep.equal([]);
    await page.getByRole('button', { name: 'Cancel' }).click();

    // edited as the API shows it, saved with its PATCH
    await rules.getByRole('button', { name: /^Edit the rule/ }).click();
    const editor = rules.getByLabel(/^The rule .* \(JSON\)$/);
    const rule = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    expect(rule).to.include({ rule_type: 'escalation', action: 'A person will take over.', priority: 10 });
    await editor.fill(JSON.stringify({ ...rule, action: 'Someone will be with you shortly.' }, null, 2));
    await rules.getByRole('button', { name: 'Save' }).click();
    await rules.getByText('Someone will be with you shortly.').waitFor();
    expect((await stored()).rules[0]?.action).to.equal('Someone will be with you shortly.');

    // deleted only once confirmed
    await rules.getByRole('button', { name: /^Delete the rule/ }).click();
    await rules.getByRole('button', { name: 'Delete rule for good' }).waitFor();
    await web.checkPage(visit, 'agent-rule-confirm');
    await rules.getByRole('button', { name: 'Delete rule for good' }).click();
    await rules.getByText('No rules.').waitFor();
    expect((await stored()).rules).to.deep.equal([]);
    await web.checkPage(visit, 'agent-rule-deleted');
  });
});
