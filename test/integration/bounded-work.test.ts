import { expect } from 'chai';
import { isProduction, newProject, p99, probeHealth, PROFILE, spawnCairn, startRuntime, token, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

// Work whose cost grows with its input is bounded: a schema over the extraction bounds is refused
// at the request, and the local language model works on threads of its own under a deadline, so a
// costly schema never freezes the process that answers /healthz (and every other project), and a
// job past its deadline ends failed with its reason instead of running again.

/** A JSON Schema of `fields` string enums of `members` members each. */
function enumSchema(fields: number, members: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let f = 0; f < fields; f += 1) {
    properties[`field_${f}`] = { type: 'string', enum: Array.from({ length: members }, (_, i) => `value ${f} ${i} option${i}`) };
  }
  return { type: 'object', properties };
}

/** A POST with a project key. */
const postAs = (runtime: TestRuntime, path: string, body: Record<string, unknown>, as: string) => runtime.http.post(path).set('Authorization', token(as)).send(body);

/** Stores `count` memories of `user` as given (memory `i` saying `note(i)`), in adds of 100. */
async function remember(
  runtime: TestRuntime,
  user: string,
  count: number,
  as: string,
  note = (i: number): string => `Note ${i}: the value ${i % 7} option${i % 13} came up in the meeting about project ${i}.`,
): Promise<void> {
  for (let from = 0; from < count; from += 100) {
    const messages = Array.from({ length: Math.min(100, count - from) }, (_, j) => ({ role: 'user', content: note(from + j) }));
    const res = await postAs(runtime, '/v3/memories/add/', { messages, user_id: user, infer: false }, as);
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.be.oneOf([200, 201]);
  }
}


describe(`bounded work (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let key: string;

  before(async () => {
    t = await startRuntime();
    key = (await newProject(t)).key;
  });
  after(() => t.close());

  const post = (runtime: TestRuntime, path: string, body: Record<string, unknown>, as = key) => postAs(runtime, path, body, as);

  describe('schemas over the extraction bounds are refused with a 400 naming the bound', () => {
    it('an export whose enums have 2 × 2,000 members: 400, and no export is stored', async () => {
      const user = unique('bounded');
      const res = await post(t, '/v1/exports/', { schema: enumSchema(2, 2_000), user_id: user });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('schema_too_large');
      expect(res.body.detail).to.match(/at most 1000/);
      expect((await post(t, '/v1/exports/get/', { user_id: user })).status).to.equal(404);
    });

    it('an export of 30,000 properties, and a schema text over 256 KB: 400', async () => {
      const properties = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
      const wide = await post(t, '/v1/exports/', { schema: { type: 'object', properties }, user_id: unique('bounded') });
      expect(wide.status).to.equal(400);
      expect(wide.body.code).to.equal('schema_too_large');
      const hundred = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, { type: 'string' }]));
      const over = await post(t, '/v1/exports/', { schema: { type: 'object', properties: hundred }, user_id: unique('bounded') });
      expect(over.status).to.equal(400);
      expect(over.body.detail).to.match(/101 properties; at most 100/);
    });

    it('a structured_data_schema over the bounds: 400 before anything is stored', async () => {
      const user = unique('bounded');
      const res = await post(t, '/v3/memories/add/', {
        messages: [{ role: 'user', content: 'I live in Lisbon.' }],
        user_id: user,
        structured_data_schema: enumSchema(3, 400),
      });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('schema_too_large');
      const listed = await post(t, '/v3/memories/', { filters: { user_id: user } });
      expect(listed.status).to.equal(200);
      expect(listed.body.results).to.have.length(0);
    });

    it('a record schema with a 20,000-member enum, or a member over 200 characters: 400 at /properties', async () => {
      const name = unique('huge').replace('-', '_');
      const res = await post(t, '/v1/schemas', { name, json_schema: enumSchema(1, 20_000) });
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body.errors)).to.contain('enum members in all; at most 1000');
      const long = await post(t, '/v1/schemas', { name, json_schema: { type: 'object', properties: { tier: { type: 'string', enum: ['x'.repeat(201)] } } } });
      expect(long.status).to.equal(400);
      expect(JSON.stringify(long.body.errors)).to.contain('at most 200');
      expect((await t.http.get(`/v1/schemas/${name}`).set('Authorization', token(key))).status).to.equal(404);
    });
  });

  it('an export of 2 × 200 enum members over 200 memories is filled off the event loop: /healthz answers within 200 ms meanwhile', async () => {
    const user = unique('bounded');
    await remember(t, user, 200, key);
    const probe = probeHealth(t);
    const created = await post(t, '/v1/exports/', { schema: enumSchema(2, 200), user_id: user });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const settled = await waitFor(
      async () => {
        const got = (await post(t, '/v1/exports/get/', { memory_export_id: created.body.id })).body;
        return ['completed', 'failed'].includes(got.memory_export?.status) && got;
      },
      { timeoutMs: 90_000, intervalMs: 100, message: 'the export settled' },
    );
    const health = await probe.stop();
    expect(settled.memory_export.status, JSON.stringify(settled.memory_export)).to.equal('completed');
    expect(health.length).to.be.greaterThan(5);
    expect(p99(health), `/healthz p99 over ${health.length} probes`).to.be.below(200);
  });
});

// A describe of its own, after the one above has closed its runtime: on the production profile two
// live runtimes share the database's outbox, and the other one's relay could run the export
// under the default deadline.
describe(`bounded work past the local model deadline, LOCAL_MODEL_DEADLINE_MS (${PROFILE})`, function () {
  this.timeout(120_000);
  let quick: TestRuntime;
  let quickKey: string;

  before(async () => {
    quick = await startRuntime({ env: { LOCAL_MODEL_DEADLINE_MS: '1' } });
    quickKey = (await newProject(quick)).key;
  });
  after(() => quick.close());

  it('a record extraction answers 422 with the reason and stores nothing', async () => {
    const name = unique('lead').replace('-', '_');
    // enough work (900 enum members, 60 sentences) that no thread finishes it within 1 ms
    const tiers = Array.from({ length: 900 }, (_, i) => `tier ${i}`);
    const schema = { type: 'object', properties: { email: { type: 'string' }, tier: { type: 'string', enum: tiers } }, required: ['email'] };
    expect((await postAs(quick, '/v1/schemas', { name, json_schema: schema }, quickKey)).status).to.equal(201);
    const user = unique('buyer');
    const text = Array.from({ length: 60 }, (_, i) => `Reach me at jane${i}@acme.com, we are on tier ${i} now.`).join(' ');
    const res = await postAs(quick, `/v1/records/${name}/extract`, { text, user_id: user }, quickKey);
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.code).to.equal('extraction_deadline');
    expect(res.body.detail).to.contain('LOCAL_MODEL_DEADLINE_MS');
    const records = await quick.http.get(`/v1/records/${name}?user_id=${user}`).set('Authorization', token(quickKey));
    expect(records.body.records).to.have.length(0);
  });

  it('an export ends failed with the reason, is not run again after a restart, and the model keeps answering', async () => {
    const user = unique('bounded');
    await remember(quick, user, 20, quickKey);
    const created = await postAs(quick, '/v1/exports/', { schema: enumSchema(2, 400), user_id: user }, quickKey);
    expect(created.status).to.equal(201);
    const failed = await waitFor(
      async () => {
        const got = (await postAs(quick, '/v1/exports/get/', { memory_export_id: created.body.id }, quickKey)).body;
        return got.memory_export?.status === 'failed' && got.memory_export;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: 'the export failed' },
    );
    expect(failed.error).to.contain('did not finish');
    // the same data under the default deadline: the failed export stays as it was
    const env = { ...quick.env };
    delete env.LOCAL_MODEL_DEADLINE_MS;
    await quick.close();
    quick = await startRuntime({ env });
    // a new export completes on the replaced threads; by then the relay has run what it holds
    const again = await postAs(quick, '/v1/exports/', { schema: enumSchema(2, 50), user_id: user }, quickKey);
    await waitFor(async () => (await postAs(quick, '/v1/exports/get/', { memory_export_id: again.body.id }, quickKey)).body.memory_export?.status === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'the second export completed',
    });
    const after = (await postAs(quick, '/v1/exports/get/', { memory_export_id: created.body.id }, quickKey)).body.memory_export;
    expect(after.status).to.equal('failed');
    expect(after.updated_at).to.equal(failed.updated_at);
  });
});

// Production runs the API apart from as many worker processes as the load needs. A job the local
// model cannot finish within its deadline ends failed, in the one worker that took it: it is not
// handed on (its worker's event loop stays free to renew the job's lock), so it never freezes one
// worker after another, and the workers keep indexing other projects' memories meanwhile.
if (isProduction) {
  describe(`bounded work across worker processes, LOCAL_MODEL_DEADLINE_MS (${PROFILE})`, function () {
    this.timeout(240_000); // a ceiling for a loaded machine: the test waits on conditions
    const ADMIN_TOKEN = 'admin-token-for-bounded-work-0123456789';
    let api: TestRuntime;
    const workers: CairnProcess[] = [];

    before(async () => {
      // the test's runtime is the API alone (its relay hands the jobs to Redis); two workers run them
      api = await startRuntime({ role: 'api', env: { ADMIN_TOKEN } });
      // On a fresh model thread the export below takes seconds (1-2 s of the model's work on 2
      // loaded cores): 100 ms is far short of it. A job lock of 2 s: a worker whose event loop
      // stopped for longer while it held the export would lose the job to the other worker
      // (BullMQ's stalled-job recovery), which the queue board would show.
      const env = { ...api.env, LOCAL_MODEL_DEADLINE_MS: '100', JOB_LOCK_MS: '2000', LOG_LEVEL: 'info' };
      workers.push(...(await Promise.all([spawnCairn('start-worker.ts', env), spawnCairn('start-worker.ts', env)])));
      await Promise.all(workers.map((w) => w.waitForOutput(/cairn started/, 90_000)));
    });
    after(async () => {
      for (const worker of workers.splice(0)) await worker.kill('SIGTERM');
      await api.close();
    });

    it("an export past the deadline fails with the reason after one run, while the workers index another project's memories", async () => {
      const exporter = await newProject(api);
      const other = await newProject(api);
      const user = unique('hostile');
      // 200 memories of five clauses, each clause naming "value": the model tries every enum member on each
      await remember(api, user, 200, exporter.key, (i) => `Note ${i}: ${[0, 1, 2, 3].map((j) => `value ${(i + j) % 7} option${(i + j) % 13}`).join('; ')}.`);

      const reader = unique('reader');
      const shelves = ['Andes', 'Alps', 'Atlas mountains', 'Urals'];
      const addShelves = async (from: number): Promise<void> => {
        const messages = Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `Shelf ${from + i} of the reading room holds maps of the ${shelves[i % 4]}.` }));
        const res = await postAs(api, '/v3/memories/add/', { messages, user_id: reader, infer: false }, other.key);
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(200);
      };
      // the other project's memories are written just before and just after the export
      await addShelves(0);
      // at the bound of enum members (1,000 in all)
      const created = await postAs(api, '/v1/exports/', { schema: enumSchema(2, 500), user_id: user }, exporter.key);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await addShelves(20);

      const settled = await waitFor(
        async () => {
          const got = (await postAs(api, '/v1/exports/get/', { memory_export_id: created.body.id }, exporter.key)).body.memory_export;
          return ['completed', 'failed'].includes(got?.status) && got;
        },
        { timeoutMs: 120_000, intervalMs: 100, message: 'the export settled' },
      );
      expect(settled.status, JSON.stringify(settled)).to.equal('failed');
      expect(settled.error).to.contain('did not finish').and.to.contain('LOCAL_MODEL_DEADLINE_MS');

      const indexed = await waitFor(
        async () => {
          const listed = (await postAs(api, '/v3/memories/', { filters: { user_id: reader } }, other.key)).body.results as Array<{ embedding_status: string }>;
          return listed.length === 40 && listed.every((m) => m.embedding_status === 'indexed') && listed;
        },
        { timeoutMs: 120_000, intervalMs: 200, message: "the other project's 40 memories indexed" },
      );
      expect(indexed).to.have.length(40);
      const found = await postAs(api, '/v3/memories/search/', { query: 'maps of the Urals', filters: { user_id: reader }, mode: 'dense' }, other.key);
      expect(found.status).to.equal(200);
      expect(found.body.results[0].memory).to.contain('Urals');

      // what an operator sees on the queue board: the export's job was started once and never stalled
      const board = await api.http
        .get(`/admin/queues/api/queues/extraction/${encodeURIComponent(`memory.export-${created.body.id}`)}`)
        .set('Authorization', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`);
      expect(board.status, JSON.stringify(board.body).slice(0, 300)).to.equal(200);
      // (the job ends normally once it has recorded the export's failure; the board lists
      // attemptsStarted and stalledCounter only when a job was started again after a stall)
      const job = JSON.stringify(board.body).slice(0, 600);
      expect(board.body.status, job).to.equal('completed');
      expect(board.body.job.attempts, job).to.equal(1);
      expect(board.body.job, job).not.to.have.any.keys('attemptsStarted', 'stalledCounter');
      const after = (await postAs(api, '/v1/exports/get/', { memory_export_id: created.body.id }, exporter.key)).body.memory_export;
      expect(after).to.deep.equal(settled);
      for (const worker of workers) expect(worker.child.exitCode, worker.output().slice(-2_000)).to.equal(null);
    });
  });
}
