import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { failure, mem0Client } from '../mem0-client.js';
import { fakeProvider } from '../provider-server.js';

// mem0's memory exports: a Pydantic JSON Schema filled from an entity's memories by the local
// extraction model in the background, through mem0's own JavaScript client (which turns the
// answer's keys into camelCase) and raw HTTP for what the client cannot send.

interface ExportStatus {
  id: string;
  status: string;
  memoryCount: number | null;
  unsupportedFields: Array<{ field: string; reason: string }>;
  error: string | null;
}
type Exported = Record<string, unknown> & { memoryExport: ExportStatus };
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<unknown>;
  createMemoryExport(data: { schema: Record<string, unknown>; filters: Record<string, unknown>; exportInstructions?: string }): Promise<{ message: string; id: string }>;
  getMemoryExport(data: { memoryExportId?: string; filters?: Record<string, unknown> }): Promise<Exported>;
}

/** A Pydantic model's `model_json_schema()`: Optional fields, an enum and a nested model under $defs, a list of models. */
const NURSE_PROFILE = {
  $defs: {
    Address: { properties: { street: { title: 'Street', type: 'string' } }, required: ['street'], title: 'Address', type: 'object' },
    Job: { properties: { title: { title: 'Title', type: 'string' } }, required: ['title'], title: 'Job', type: 'object' },
    Shift: { enum: ['day', 'night'], title: 'Shift', type: 'string' },
  },
  properties: {
    full_name: { anyOf: [{ maxLength: 100, minLength: 2, type: 'string' }, { type: 'null' }], default: null, description: "The person's full name", title: 'Full Name' },
    occupation: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'Current job or occupation', title: 'Occupation' },
    employer: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Employer' },
    city: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'City where the person lives', title: 'City' },
    shift: { anyOf: [{ $ref: '#/$defs/Shift' }, { type: 'null' }], default: null },
    home_address: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
    previous_jobs: { items: { $ref: '#/$defs/Job' }, title: 'Previous Jobs', type: 'array' },
  },
  title: 'NurseProfile',
  type: 'object',
};

describe(`mem0 memory exports (${PROFILE})`, function () {
  this.timeout(90_000);
  let t: TestRuntime;
  let key: string;
  let projectId: string;
  let otherKey: string;
  let client: Mem0Client;
  let stopServing: () => Promise<void>;

  before(async () => {
    t = await startRuntime();
    ({ key, projectId } = await newProject(t));
    otherKey = (await newProject(t)).key;
    ({ client, close: stopServing } = await mem0Client<Mem0Client>(t, key));
  });
  after(async () => {
    await stopServing();
    await t.close();
  });

  const post = (path: string, body: Record<string, unknown>, as = key) => t.http.post(path).set('Authorization', token(as)).send(body);

  /** Reads the export through the client until it is settled (the job runs in the background). */
  const settled = (memoryExportId: string): Promise<Exported> =>
    waitFor(
      async () => {
        const got = await client.getMemoryExport({ memoryExportId });
        return ['completed', 'failed'].includes(got.memoryExport.status) && got;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: `export ${memoryExportId} settled` },
    );

  async function remember(user: string, texts: string[]): Promise<void> {
    for (const content of texts) await client.add([{ role: 'user', content }], { userId: user, infer: false });
  }

  it("fills a Pydantic schema from the user's memories: every field present, the ones it cannot fill null and listed", async () => {
    const ana = unique('ana');
    await remember(ana, ['My name is Ana Lopez.', 'I work as a nurse at Hospital Santo Antonio.', 'My city is Porto.', 'I work the night shift.']);
    await remember(unique('bo'), ['My name is Bo Berg.']);

    const created = await client.createMemoryExport({ schema: NURSE_PROFILE, filters: { user_id: ana }, exportInstructions: 'Prefer recent facts.' });
    expect(created.message).to.be.a('string');
    expect(created.id).to.be.a('string');

    const exported = await settled(created.id);
    const { memoryExport, ...fields } = exported;
    expect(memoryExport).to.include({ id: created.id, status: 'completed', memoryCount: 4, error: null });
    expect(fields).to.deep.equal({ fullName: 'Ana Lopez', occupation: 'nurse', employer: 'Hospital Santo Antonio', city: 'Porto', shift: 'night', homeAddress: null, previousJobs: null });
    expect(memoryExport.unsupportedFields).to.deep.equal([
      { field: 'home_address', reason: 'a nested object' },
      { field: 'previous_jobs', reason: 'a list of values other than strings' },
    ]);

    // the latest export of the user, by filters (the client) or a top-level id (raw, snake_case as sent)
    expect((await client.getMemoryExport({ filters: { user_id: ana } })).memoryExport.id).to.equal(created.id);
    const raw = await post('/v1/exports/get/', { user_id: ana, project_id: projectId, org_id: projectId });
    expect(raw.status, JSON.stringify(raw.body)).to.equal(200);
    expect(raw.body).to.include({ full_name: 'Ana Lopez', home_address: null });
  });

  it('takes the schema as a JSON string, entity ids at the top level, and exports nothing found as nulls', async () => {
    const nobody = unique('nobody');
    const res = await post('/v1/exports/', { schema: JSON.stringify(NURSE_PROFILE), user_id: nobody });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const { memoryExport, ...fields } = await settled(res.body.id);
    expect(memoryExport).to.include({ status: 'completed', memoryCount: 0 });
    expect(Object.values(fields)).to.deep.equal([null, null, null, null, null, null, null]);
  });

  it('refuses bad input with a 400 and stores nothing', async () => {
    const user = unique('bad');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ schema: NURSE_PROFILE, filters: { user_id: user }, colour: 'blue' }, 'validation_failed'],
      [{ schema: '{"properties": ', filters: { user_id: user } }, 'invalid_schema'],
      [{ schema: [1, 2], filters: { user_id: user } }, 'validation_failed'],
      [{ schema: { type: 'object', properties: { home: { $ref: '#/$defs/Address' } }, $defs: NURSE_PROFILE.$defs }, filters: { user_id: user } }, 'invalid_schema'],
      [{ schema: { type: 'string' }, filters: { user_id: user } }, 'invalid_schema'],
      [{ schema: NURSE_PROFILE, filters: { created_at: { gte: '2024-01-01' } } }, 'entity_required'],
      [{ schema: NURSE_PROFILE }, 'entity_required'],
      [{ schema: NURSE_PROFILE, filters: { user_id: user }, user_id: `${user}-other` }, 'validation_failed'],
    ];
    for (const [body, code] of cases) {
      const res = await post('/v1/exports/', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code, JSON.stringify(res.body)).to.equal(code);
    }
    const none = await post('/v1/exports/get/', { user_id: user });
    expect(none.status).to.equal(404);
    expect(none.body.code).to.equal('export_not_found');

    // mem0's client surfaces the 400 as its ValidationError
    const thrown = await failure(client.createMemoryExport({ schema: { type: 'object', properties: {} }, filters: { user_id: user } }));
    expect(thrown.name).to.equal('ValidationError');
    const unknown = await post('/v1/exports/get/', { memory_export_id: 'x', colour: 'blue' });
    expect(unknown.status).to.equal(400);
    const unnamed = await post('/v1/exports/get/', {});
    expect(unnamed.status).to.equal(400);
    const dated = await post('/v1/exports/get/', { filters: { AND: [{ user_id: user }, { created_at: { gte: '2024-01-01' } }] } });
    expect(dated.status).to.equal(400);
    expect(dated.body.code).to.equal('invalid_filter');
  });

  it("another project's export, an unknown id and another project's id are 404", async () => {
    const user = unique('cross');
    await remember(user, ['My name is Cy Cross.']);
    const { id } = await client.createMemoryExport({ schema: NURSE_PROFILE, filters: { user_id: user } });
    await settled(id);

    const other = await post('/v1/exports/get/', { memory_export_id: id }, otherKey);
    expect(other.status).to.equal(404);
    expect(other.body.code).to.equal('export_not_found');
    expect((await post('/v1/exports/get/', { user_id: user }, otherKey)).status).to.equal(404);
    expect((await post('/v1/exports/get/', { memory_export_id: 'no-such-export' })).status).to.equal(404);
    // the id and the entity must both match
    expect((await post('/v1/exports/get/', { memory_export_id: id, user_id: `${user}-other` })).status).to.equal(404);
    const thrown = await failure(client.getMemoryExport({ memoryExportId: 'no-such-export' }));
    expect(thrown.name).to.equal('MemoryNotFoundError');

    const elsewhere = await post('/v1/exports/', { schema: NURSE_PROFILE, filters: { user_id: user }, project_id: 'another-project' });
    expect(elsewhere.status).to.equal(404);
    expect(elsewhere.body.code).to.equal('project_not_found');
    expect((await post('/v1/exports/get/', { user_id: user, org_id: 'another-org' })).status).to.equal(404);
    // the refused create stored nothing: the user's latest export is still the first
    expect((await client.getMemoryExport({ filters: { user_id: user } })).memoryExport.id).to.equal(id);
  });

});

// a suite of its own: on the production profile a second runtime running beside the first (same
// database) could have its export's job dispatched by the first one's outbox relay, to the local model
describe(`mem0 memory exports with a remote model (${PROFILE})`, function () {
  this.timeout(90_000);

  it('MEMORY_MODEL fills the fields: while it is down the export is retried (running, with the error), once it answers it completes; a refused request fails it', async () => {
    let mode: 'down' | 'up' | 'refusing' = 'down';
    const model = await fakeProvider(() => {
      if (mode === 'down') return { status: 503, body: { error: { message: 'overloaded' } } };
      if (mode === 'refusing') return { status: 400, body: { error: { message: 'context too long' } } };
      const content = JSON.stringify({ full_name: 'Ana Lopez', shift: 'night' });
      return { status: 200, body: { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] } };
    });
    const remote = await startRuntime({ env: { MEMORY_MODEL: 'openai/exporter', OPENAI_BASE_URL: model.url } });
    try {
      const auth = token((await newProject(remote)).key);
      const user = unique('remote');
      await remote.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'My name is Ana Lopez.' }], user_id: user, infer: false });
      const read = async (id: string) => (await remote.http.post('/v1/exports/get/').set('Authorization', auth).send({ memory_export_id: id })).body;

      const { id } = (await remote.http.post('/v1/exports/').set('Authorization', auth).send({ schema: NURSE_PROFILE, user_id: user })).body;
      const waiting = await waitFor(async () => {
        const got = await read(id);
        return got.memory_export.error !== null && got;
      }, { timeoutMs: 30_000, message: 'the failed call recorded' });
      expect(waiting.memory_export.status).to.equal('running');
      expect(waiting).not.to.have.property('full_name');

      mode = 'up';
      const done = await waitFor(async () => {
        const got = await read(id);
        return got.memory_export.status === 'completed' && got;
      }, { timeoutMs: 60_000, message: 'completed once the model answers' });
      expect(done).to.include({ full_name: 'Ana Lopez', shift: 'night', occupation: null, home_address: null });
      expect(done.memory_export).to.include({ error: null, memory_count: 1 });
      const asked = model.received.at(-1)?.body as { messages: Array<{ content: string }>; response_format: { json_schema: { schema: { properties: Record<string, unknown> } } } };
      expect(Object.keys(asked.response_format.json_schema.schema.properties)).to.deep.equal(['full_name', 'occupation', 'employer', 'city', 'shift']);
      expect(asked.messages.map((m) => m.content).join('\n')).to.include('My name is Ana Lopez.');

      mode = 'refusing';
      const refused = (await remote.http.post('/v1/exports/').set('Authorization', auth).send({ schema: NURSE_PROFILE, user_id: user })).body;
      const failed = await waitFor(async () => {
        const got = await read(refused.id);
        return got.memory_export.status === 'failed' && got;
      }, { timeoutMs: 30_000, message: 'failed for good' });
      expect(failed.memory_export.error).to.be.a('string').and.not.equal('');
    } finally {
      await remote.close();
      await model.close();
    }
  });
});
