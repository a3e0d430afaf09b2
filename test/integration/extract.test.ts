import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';

describe(`record extraction endpoint (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  let lead: string;
  const post = (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object);

  before(async () => {
    t = await startRuntime();
    auth = token((await newProject(t)).key);
    // adopt the lead-profile preset unchanged, as a user would
    const presets = await t.http.get('/v1/schema-presets').set('Authorization', auth);
    const preset = presets.body.presets.find((p: { name: string }) => p.name === 'lead-profile');
    lead = unique('lead').toLowerCase();
    const created = await post('/v1/schemas', { ...preset, name: lead });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
  });
  after(() => t.close());

  it('stores a record extracted from a plain sentence, through the queue, metered like a write', async () => {
    const res = await post(`/v1/records/${lead}/extract`, {
      text: "Hi, I'm Jane Doe, CTO at Acme Corp. Reach me at jane@acme.com. Our budget is $50,000.",
      user_id: 'sales-1',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.stored).to.equal(true);
    expect(res.body.record.record).to.deep.equal({ name: 'Jane Doe', email: 'jane@acme.com', company: 'Acme Corp', role: 'CTO', budget: 50000 });
    expect(res.body.record).to.include({ schema: lead, schema_version: 1, user_id: 'sales-1' });
    const stored = await t.http.get(`/v1/records/${lead}/${res.body.record.id}`).set('Authorization', auth);
    expect(stored.status).to.equal(200);
    const usage = await t.http.get('/v1/usage').set('Authorization', auth);
    expect(usage.body.totals['memory.add']).to.equal(1);
  });

  it('answers stored: false with the values found and what is missing, or null when nothing is stated', async () => {
    const partial = await post(`/v1/records/${lead}/extract`, { text: 'Reach me at jane@acme.com.', user_id: 'sales-1' });
    expect(partial.status).to.equal(200);
    expect(partial.body).to.deep.equal({ stored: false, record: { email: 'jane@acme.com' }, missing: ['name'] });
    const nothing = await post(`/v1/records/${lead}/extract`, { messages: [{ role: 'user', content: 'The weather is nice today.' }], user_id: 'sales-1' });
    expect(nothing.status).to.equal(200);
    expect(nothing.body).to.deep.equal({ stored: false, record: null, missing: ['name'] });
    const records = await t.http.get(`/v1/records/${lead}?user_id=sales-1`).set('Authorization', auth);
    expect(records.body.records).to.have.length(1);
  });

  it('refuses bad requests with 4xx before any work is queued', async () => {
    expect((await post(`/v1/records/${lead}/extract`, { user_id: 'x' })).status).to.equal(400);
    expect((await post(`/v1/records/${lead}/extract`, { text: 'a', messages: [{ role: 'user', content: 'b' }] })).status).to.equal(400);
    expect((await post('/v1/records/no-such-schema/extract', { text: 'a' })).status).to.equal(404);
    const model = await post(`/v1/records/${lead}/extract`, { text: 'a', model: 'cohere/command-a-03-2025' });
    expect(model.status).to.equal(400);
    expect(model.body.detail).to.match(/COHERE_API_KEY/);
  });
});
