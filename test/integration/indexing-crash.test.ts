import { expect } from 'chai';
import type supertest from 'supertest';
import { isProduction, newProject, PROFILE, profileEnv, startJobProcess, startRuntime, token, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

// A process that dies while it indexes a large write leaves the rest to the next one: every
// acknowledged memory ends indexed, its vector stored once, and search finds it. Production: the
// jobs the killed worker held come back to the queue when their lock expires (BullMQ's stalled-job
// recovery). Embedded: the outbox entries of the jobs that had not finished are still there, and
// the restarted process runs them again.

/** Typed records, sent as two bulk writes of 500. */
const RECORDS = 1000;
/** mem0 conversations of `MESSAGES` messages each, sent as one bulk add. */
const CONVERSATIONS = 20;
const MESSAGES = 10;
const TOTAL = RECORDS + CONVERSATIONS * MESSAGES;

const pick = (words: string[], n: number): string => words[n % words.length] as string;
const THINGS = 'boiler printer skylight forklift freezer elevator turnstile projector generator awning kiln conveyor'.split(' ');
const FAULTS = 'rattles overheats leaks flickers jams squeaks sparks stalls drips hums'.split(' ');
const PLACES = 'loading bay|north stairwell|staff kitchen|server room|east car park|rooftop garden|paint shop|archive vault|reception|cold store|workshop'.split('|');
const TOPICS = 'sourdough baking|marathon training|learning the cello|keeping bees|restoring a sailboat|growing chillies|birdwatching|chess openings|pottery|hiking in the Alps'.split('|');
const DETAILS = 'on Sunday mornings|since last spring|with my sister|twice a week|after work|in the garage|at the community hall|every winter|with an old friend|on holiday'.split('|');

/** The note of record `i`: its own number, and words that vary with it. */
const note = (i: number): string => `Ticket ${i}: the ${pick(THINGS, i)} ${pick(FAULTS, i * 7 + 3)} near the ${pick(PLACES, i * 5 + 1)}`;
/** Message `j` of conversation `c`. */
const message = (c: number, j: number): string => `Fact ${j} of chat ${c}: I have been into ${pick(TOPICS, c + j * 3)} ${pick(DETAILS, c * 3 + j * 7)}`;

interface Written {
  id: string;
  text: string;
  userId: string;
}

describe(`memory indexing: a worker killed mid-batch (${PROFILE})`, function () {
  this.timeout(600_000); // a ceiling for a loaded machine: the test waits on conditions
  const procs: CairnProcess[] = [];
  let inspector: TestRuntime | null = null;
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.kill('SIGKILL');
    await inspector?.close();
    inspector = null;
  });

  it('indexes every acknowledged memory exactly once after the process that was indexing them is killed', async () => {
    // A reconciliation pass would also queue lost work again, but only after its grace: the queue
    // alone must finish the batch here. `info`: the processes announce `cairn started` at that level.
    const env = profileEnv({ JOB_LOCK_MS: '2000', RECONCILE_GRACE_MS: '600000', LOG_LEVEL: 'info' });
    // The test's own view of the database and the vector store, running no jobs. On production it
    // is also the API (its relay hands the jobs to Redis); on embedded it reads the DATA_DIR that
    // the `start.ts` processes own, and is not started.
    inspector = await startRuntime({ role: isProduction ? 'api' : 'all', env: { ...env, LOG_LEVEL: 'silent' }, start: isProduction });
    const { db, vectors, memoryIndexer } = inspector.runtime;
    const { key, projectId } = await newProject(inspector);
    const auth = token(key);

    let http: supertest.Agent = inspector.http;
    // embedded: API and worker are one process, restarted on the same DATA_DIR
    const startWorker = async (): Promise<CairnProcess> => {
      const { proc, api } = await startJobProcess(env);
      procs.push(proc);
      if (api) http = api;
      return proc;
    };
    const statuses = async (): Promise<Record<string, number>> => {
      const rows = (await db('memories').where({ project_id: projectId }).select('embedding_status').count({ n: '*' }).groupBy('embedding_status')) as Array<{ embedding_status: string; n: number | string }>;
      return Object.fromEntries(rows.map((r) => [r.embedding_status, Number(r.n)]));
    };

    const worker = await startWorker();
    const started = Date.now();

    const schema = unique('ticket').toLowerCase();
    const created = await http.post('/v1/schemas').set('Authorization', auth).send({
      name: schema,
      json_schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
      embed_template: '{{note}}',
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const user = unique('importer');
    const acknowledged: Written[] = [];
    for (let from = 0; from < RECORDS; from += 500) {
      const notes = Array.from({ length: 500 }, (_, i) => note(from + i));
      const res = await http
        .post(`/v1/records/${schema}/batch`)
        .set('Authorization', auth)
        .send({ records: notes.map((text) => ({ record: { note: text }, user_id: user })) });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).to.equal(201);
      acknowledged.push(...(res.body.records as Array<{ id: string; record: { note: string } }>).map((r) => ({ id: r.id, text: r.record.note, userId: user })));
    }
    const conversations = Array.from({ length: CONVERSATIONS }, (_, c) => ({
      messages: Array.from({ length: MESSAGES }, (_, j) => ({ role: 'user', content: message(c, j) })),
      user_id: `${user}-chat${c}`,
      infer: false,
    }));
    const added = await http.post('/v1/batch/').set('Authorization', auth).send({ memories: conversations });
    expect(added.status, JSON.stringify(added.body).slice(0, 500)).to.equal(201);
    acknowledged.push(...(added.body.results as Array<{ id: string; memory: string; user_id: string }>).map((m) => ({ id: m.id, text: m.memory, userId: m.user_id })));
    expect(new Set(acknowledged.map((w) => w.id)).size, 'acknowledged memories').to.equal(TOTAL);

    // Killed once indexing is well under way and much of the write is still to do.
    const atKill = await waitFor(
      async () => {
        const s = await statuses();
        return (s.indexed ?? 0) >= TOTAL / 10 || (s.pending ?? 0) < TOTAL / 4 ? s : null;
      },
      { timeoutMs: 90_000, intervalMs: 25, message: 'the first memories indexed' },
    );
    await worker.kill('SIGKILL');
    procs.splice(procs.indexOf(worker), 1);
    expect(atKill.pending ?? 0, `still pending when the worker was killed (${JSON.stringify(atKill)})`).to.be.at.least(TOTAL / 4);
    const killedAt = Date.now();

    await startWorker();
    // on a timeout the assertion below shows how many memories were left, and in which state
    let last: Record<string, number> = {};
    const settled = await waitFor(
      async () => {
        last = await statuses();
        return last.indexed === TOTAL || (last.failed ?? 0) > 0 ? last : null;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    ).catch(() => last);
    const catchUp = (Date.now() - killedAt) / 1000;
    expect(settled, 'memories by embedding status').to.deep.equal({ indexed: TOTAL });
    const stored = (await db('memories').where({ project_id: projectId }).pluck('id')) as string[];
    expect(stored.sort()).to.deep.equal(acknowledged.map((w) => w.id).sort());

    // Each memory's vector is in the store once, and the store holds no other: as many vectors as
    // rows, and every row's id among them, leaves no room for a duplicate or a stray.
    const spec = await memoryIndexer.collection(projectId);
    expect(await vectors.count(spec, projectId), 'vectors in the memories collection').to.equal(TOTAL);
    expect((await vectors.existing(spec, projectId, stored)).size, 'memories with a vector').to.equal(TOTAL);

    // Search finds what was written first, in the middle and last, by its meaning alone.
    const samples = [acknowledged[0], acknowledged[499], acknowledged[RECORDS - 1], acknowledged[RECORDS + 95], acknowledged[TOTAL - 1]] as Written[];
    for (const sample of samples) {
      const res = await http.post('/v3/memories/search/').set('Authorization', auth).send({ query: sample.text, filters: { user_id: sample.userId }, mode: 'dense', top_k: 3 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const ids = (res.body.results as Array<{ id: string }>).map((r) => r.id);
      expect(ids[0], `first hit for "${sample.text}"`).to.equal(sample.id);
      expect(new Set(ids).size, 'hits are distinct memories').to.equal(ids.length);
    }
    process.stdout.write(
      `      killed at ${atKill.indexed} of ${TOTAL} indexed, ${((killedAt - started) / 1000).toFixed(1)} s after the first write; ` +
        `all indexed ${catchUp.toFixed(1)} s after the kill\n`,
    );
  });
});
