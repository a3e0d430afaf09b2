import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, type TestRuntime } from '../helpers.js';

const CONTACT = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Full name' },
    email: { type: 'string' },
    stage: { type: 'string', enum: ['new', 'won'] },
  },
  required: ['name'],
};

describe(`record schema API (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  let projectId: string;
  const post = (path: string, body: unknown, as = auth) => t.http.post(path).set('Authorization', as).send(body as object);
  const get = (path: string, as = auth) => t.http.get(path).set('Authorization', as);
  const name = () => unique('s').toLowerCase();

  before(async () => {
    t = await startRuntime({ start: false });
    const project = await newProject(t);
    auth = token(project.key);
    projectId = project.projectId;
  });
  after(() => t.close());

  async function register(body: Record<string, unknown> = {}, as = auth): Promise<string> {
    const n = name();
    const res = await post('/v1/schemas', { name: n, json_schema: CONTACT, ...body }, as);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return n;
  }

  it('registers version 1 with the default template, and reads it back', async () => {
    const n = name();
    const res = await post('/v1/schemas', { name: n, json_schema: CONTACT, description: 'People we talk to' });
    expect(res.status).to.equal(201);
    expect(res.body).to.deep.include({
      name: n,
      version: 1,
      json_schema: CONTACT,
      embed_template: 'name: {{name}}\nemail: {{email}}\nstage: {{stage}}',
      retention: null,
      description: 'People we talk to',
    });
    expect(res.body.created_at).to.match(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(Object.keys(res.body).sort()).to.deep.equal(['created_at', 'description', 'embed_template', 'json_schema', 'name', 'retention', 'version']);
    expect((await get(`/v1/schemas/${n}`)).body).to.deep.equal(res.body);
    expect((await get(`/v1/schemas/${n}/`)).body).to.deep.equal(res.body);
    expect((await get(`/v1/schemas/${n}?version=1`)).body).to.deep.equal(res.body);
  });

  it('refuses a taken name with 409, and bad names and unknown fields with 400', async () => {
    const n = await register();
    const again = await post('/v1/schemas', { name: n, json_schema: CONTACT });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('schema_exists');
    for (const bad of ['Contacts', '1x', '-x', 'a'.repeat(65), 'a b']) {
      const res = await post('/v1/schemas', { name: bad, json_schema: CONTACT });
      expect(res.status, bad).to.equal(400);
      expect(res.body.errors.map((e: { path: string }) => e.path), bad).to.include('/name');
    }
    const extra = await post('/v1/schemas', { name: name(), json_schema: CONTACT, version: 2 });
    expect(extra.status).to.equal(400);
    expect(extra.body.errors).to.deep.include({ path: '/version', message: 'is not a known field' });
  });

  it('answers 400 invalid_schema listing every violation of the subset and template', async () => {
    const res = await post('/v1/schemas', {
      name: name(),
      json_schema: {
        type: 'object',
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        properties: {
          url: { type: 'string', format: 'uri' },
          address: { type: 'object', properties: { city: { type: 'string' } } },
          Score: { type: 'number' },
          tags: { type: 'array', items: { type: 'integer' } },
        },
        required: ['url', 'phone'],
      },
      embed_template: '{{url}} {{phone}}',
    });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_schema');
    expect(res.body.detail).to.match(/and \d+ more/);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).to.include.members([
      '/json_schema/$schema',
      '/json_schema/properties/url/format',
      '/json_schema/properties/address/type',
      '/json_schema/properties/Score',
      '/json_schema/properties/tags/items',
      '/json_schema/required/1',
      '/embed_template',
    ]);
    expect(res.body.errors.find((e: { path: string }) => e.path === '/embed_template').message).to.match(/\{\{phone\}\}/);
  });

  it('refuses a 33rd property and validates retention', async () => {
    const properties = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, { type: 'string' }]));
    const res = await post('/v1/schemas', { name: name(), json_schema: { type: 'object', properties } });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0].path).to.equal('/json_schema/properties');
    for (const retention of [{}, { max_count: 0 }, { keep: 1 }]) {
      expect((await post('/v1/schemas', { name: name(), json_schema: CONTACT, retention })).status, JSON.stringify(retention)).to.equal(400);
    }
    const kept = await post('/v1/schemas', { name: name(), json_schema: CONTACT, retention: { max_age_days: 30, max_count: 100 } });
    expect(kept.body.retention).to.deep.equal({ max_age_days: 30, max_count: 100 });
  });

  it('publishes N+1, carrying over template, retention and description; reads any version', async () => {
    const n = await register({ embed_template: 'Contact {{name}}', retention: { max_count: 5 }, description: 'v1 text' });
    const v2schema = { ...CONTACT, properties: { ...CONTACT.properties, phone: { type: 'string' } } };
    const v2 = await post(`/v1/schemas/${n}`, { json_schema: v2schema });
    expect(v2.status).to.equal(201);
    expect(v2.body).to.deep.include({ name: n, version: 2, json_schema: v2schema, embed_template: 'Contact {{name}}', retention: { max_count: 5 }, description: 'v1 text' });

    const v3 = await post(`/v1/schemas/${n}`, { json_schema: v2schema, embed_template: null, retention: null, description: 'v3 text' });
    expect(v3.body).to.deep.include({ version: 3, retention: null, description: 'v3 text' });
    expect(v3.body.embed_template).to.equal('name: {{name}}\nemail: {{email}}\nstage: {{stage}}\nphone: {{phone}}');

    expect((await get(`/v1/schemas/${n}`)).body.version).to.equal(3);
    expect((await get(`/v1/schemas/${n}?version=2`)).body).to.deep.equal(v2.body);
    expect((await get(`/v1/schemas/${n}?version=1`)).body.json_schema).to.deep.equal(CONTACT);

    const versions = await get(`/v1/schemas/${n}/versions`);
    expect(versions.status).to.equal(200);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).to.deep.equal([3, 2, 1]);
    expect((await get(`/v1/schemas/${n}/versions?limit=1&offset=1`)).body.versions.map((v: { version: number }) => v.version)).to.deep.equal([2]);
  });

  it('refuses a publish whose carried-over template names a removed property', async () => {
    const n = await register({ embed_template: '{{name}} <{{email}}>' });
    const res = await post(`/v1/schemas/${n}`, { json_schema: { type: 'object', properties: { name: { type: 'string' } } } });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_schema');
    expect(res.body.errors).to.have.length(1);
    expect(res.body.errors[0].path).to.equal('/embed_template');
    expect(res.body.errors[0].message).to.match(/\{\{email\}\}.*carried over from version 1/);
    expect((await get(`/v1/schemas/${n}`)).body.version).to.equal(1);
  });

  it('answers 404 for unknown schemas and versions', async () => {
    const n = await register();
    const missing = name();
    for (const res of [
      await get(`/v1/schemas/${missing}`),
      await get(`/v1/schemas/${missing}/versions`),
      await post(`/v1/schemas/${missing}`, { json_schema: CONTACT }),
    ]) {
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('schema_not_found');
      expect(res.body.detail).to.include(missing);
    }
    const noVersion = await get(`/v1/schemas/${n}?version=9`);
    expect(noVersion.status).to.equal(404);
    expect(noVersion.body.code).to.equal('schema_version_not_found');
    expect((await get(`/v1/schemas/${n}?version=0`)).status).to.equal(400);
    expect((await get(`/v1/schemas/${n}?version=two`)).status).to.equal(400);
    expect((await get(`/v1/schemas/${n}?v=1`)).status).to.equal(400);
  });

  it('lists the latest version of each schema, newest first, with paging', async () => {
    const project = token((await newProject(t)).key);
    const first = await register({}, project);
    const second = await register({}, project);
    await post(`/v1/schemas/${first}`, { json_schema: CONTACT }, project);
    const list = await get('/v1/schemas', project);
    expect(list.status).to.equal(200);
    expect(list.body.schemas.map((s: { name: string; version: number }) => [s.name, s.version])).to.deep.equal([
      [second, 1],
      [first, 2],
    ]);
    expect((await get('/v1/schemas?limit=1&offset=1', project)).body.schemas.map((s: { name: string }) => s.name)).to.deep.equal([first]);
    expect((await get('/v1/schemas?limit=101', project)).status).to.equal(400);
  });

  it('refuses a 33rd schema in a project with 400, also under concurrent registrations', async () => {
    const project = token((await newProject(t)).key);
    await Promise.all(Array.from({ length: 30 }, () => register({}, project)));
    const racing = await Promise.all(Array.from({ length: 4 }, () => post('/v1/schemas', { name: name(), json_schema: CONTACT }, project)));
    expect(racing.map((r) => r.status).sort()).to.deep.equal([201, 201, 400, 400]);
    const res = await post('/v1/schemas', { name: name(), json_schema: CONTACT }, project);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('too_many_schemas');
    expect(res.body.detail).to.match(/32/);
    expect((await get('/v1/schemas?limit=100', project)).body.schemas).to.have.length(32);
    // Publishing a new version is still allowed at the limit.
    const existing = (await get('/v1/schemas?limit=1', project)).body.schemas[0].name as string;
    expect((await post(`/v1/schemas/${existing}`, { json_schema: CONTACT }, project)).status).to.equal(201);
  });

  it('serves five presets, each adoptable unchanged', async () => {
    const res = await get('/v1/schema-presets');
    expect(res.status).to.equal(200);
    expect(res.body.presets.map((p: { name: string }) => p.name)).to.deep.equal(['link', 'observation', 'action-item', 'decision', 'lead-profile']);
    const project = token((await newProject(t)).key);
    for (const preset of res.body.presets as Array<Record<string, unknown>>) {
      expect(Object.keys(preset).sort()).to.deep.equal(['description', 'embed_template', 'json_schema', 'name']);
      const adopted = await post('/v1/schemas', preset, project);
      expect(adopted.status, `${String(preset.name)}: ${JSON.stringify(adopted.body)}`).to.equal(201);
      expect(adopted.body).to.deep.include({ name: preset.name, version: 1, json_schema: preset.json_schema, embed_template: preset.embed_template });
    }
    expect((await get('/v1/schemas', project)).body.schemas).to.have.length(5);
  });

  it("keeps one project's schemas from another", async () => {
    const n = await register();
    const other = token((await newProject(t)).key);
    expect((await get(`/v1/schemas/${n}`, other)).status).to.equal(404);
    expect((await get(`/v1/schemas/${n}/versions`, other)).status).to.equal(404);
    expect((await post(`/v1/schemas/${n}`, { json_schema: CONTACT }, other)).status).to.equal(404);
    expect((await get('/v1/schemas', other)).body.schemas).to.deep.equal([]);
    // The same name is free in the other project, and versions there are independent.
    const theirs = await post('/v1/schemas', { name: n, json_schema: { type: 'object', properties: { x: { type: 'integer' } } } }, other);
    expect(theirs.status).to.equal(201);
    expect((await get(`/v1/schemas/${n}`)).body.json_schema).to.deep.equal(CONTACT);
    expect((await get(`/v1/schemas/${n}`, other)).body.json_schema.properties).to.have.keys('x');
  });

  it('gives concurrent publishes distinct consecutive versions', async () => {
    const n = await register();
    const results = await Promise.all(Array.from({ length: 8 }, () => post(`/v1/schemas/${n}`, { json_schema: CONTACT })));
    expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(201));
    expect(results.map((r) => r.body.version as number).sort((a, b) => a - b)).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9]);
    const versions = await get(`/v1/schemas/${n}/versions`);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect((await get(`/v1/schemas/${n}`)).body.version).to.equal(9);
  });

  it('resolves pinned versions by schema id for records', async () => {
    const n = await register();
    await post(`/v1/schemas/${n}`, { json_schema: { ...CONTACT, required: ['name', 'email'] } });
    const latest = await t.runtime.schemas.get(projectId, n);
    expect(latest.version).to.equal(2);
    const pinned = await t.runtime.schemas.getVersion(latest.project_id, latest.schema_id, 1);
    expect(pinned).to.deep.include({ name: n, version: 1, schema_id: latest.schema_id });
    expect(pinned.json_schema.required).to.deep.equal(['name']);
  });
});
