import { expect } from 'chai';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Idempotency-Key on mem0 adds: a client retrying (mem0's clients retry 5xx and timeouts) gets the
// first answer and the memories once, even when the first answer was a 503 while the work went on.

const says = (...contents: string[]) => contents.map((content) => ({ role: 'user', content }));

/** An OpenAI-compatible model server that holds every answer until `release`, and counts the calls. */
async function heldModel(answer: Record<string, unknown>): Promise<{ url: string; calls: () => number; release(): void; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let released = false;
  let calls = 0;
  const send = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const message = { role: 'assistant', content: JSON.stringify(answer) };
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message, finish_reason: 'stop' }] }));
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      if (released) send(res);
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    release() {
      released = true;
      for (const res of held.splice(0)) send(res);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe(`Idempotency-Key on mem0 adds (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;

  before(async () => {
    t = await startRuntime();
    auth = token((await newProject(t)).key);
  });
  after(async () => {
    await t.close();
  });

  const memoriesOf = async (rt: TestRuntime, credentials: string, user: string) => {
    const res = await rt.http.post('/v3/memories/').set('Authorization', credentials).send({ filters: { user_id: user } });
    return res.body.results as Array<{ id: string; memory: string; structured_data: unknown }>;
  };

  it('stores an add sent twice with the same key once, and answers both the same', async () => {
    const user = unique('ida');
    const key = unique('key');
    const body = { messages: says('I keep bees.', 'My bees are Italian.'), user_id: user, infer: false };
    const first = await t.http.post('/v3/memories/add/').set('Authorization', auth).set('Idempotency-Key', key).send(body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    // the same JSON with its members in another order is the same request
    const again = await t.http.post('/v3/memories/add/').set('Authorization', auth).set('Idempotency-Key', key).send({ infer: false, user_id: user, messages: body.messages });
    expect(again.status).to.equal(200);
    const stored = await memoriesOf(t, auth, user);
    expect(stored.map((m) => m.id).sort()).to.deep.equal(first.body.results.map((m: { id: string }) => m.id).sort());
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['idempotent-replayed']).to.equal('true');

    // /v1/batch/ too, its 201 replayed as such
    const batch = { memories: [{ messages: says('I sail on Sundays.'), user_id: user }] };
    const batchKey = unique('key');
    const storedBatch = await t.http.post('/v1/batch/').set('Authorization', auth).set('Idempotency-Key', batchKey).send(batch);
    const replayedBatch = await t.http.post('/v1/batch/').set('Authorization', auth).set('Idempotency-Key', batchKey).send(batch);
    expect([storedBatch.status, replayedBatch.status]).to.deep.equal([201, 201]);
    expect(replayedBatch.body).to.deep.equal(storedBatch.body);
    expect(await memoriesOf(t, auth, user)).to.have.length(3);

    // keys are per project: another project's same key is its own
    const other = token((await newProject(t)).key);
    const elsewhere = await t.http.post('/v3/memories/add/').set('Authorization', other).set('Idempotency-Key', key).send(body);
    expect(elsewhere.status).to.equal(200);
    expect(elsewhere.headers['idempotent-replayed']).to.equal(undefined);
    expect(await memoriesOf(t, other, user)).to.have.length(2);
  });

  it('refuses the same key with another body, storing nothing, and a malformed key', async () => {
    const user = unique('idb');
    const key = unique('key');
    const first = await t.http.post('/v3/memories/add/').set('Authorization', auth).set('Idempotency-Key', key).send({ messages: says('I like rye bread.'), user_id: user, infer: false });
    expect(first.status).to.equal(200);
    const other = unique('idb');
    const mismatch = await t.http.post('/v3/memories/add/').set('Authorization', auth).set('Idempotency-Key', key).send({ messages: says('I like spelt.'), user_id: other, infer: false });
    expect(mismatch.status).to.equal(422);
    expect(mismatch.body.code).to.equal('idempotency_key_mismatch');
    expect(mismatch.body.detail).to.include(key).and.match(/another body/);
    // the same key on the other add endpoint is another request too
    const elsewhere = await t.http.post('/v1/batch/').set('Authorization', auth).set('Idempotency-Key', key).send({ memories: [{ messages: says('I like spelt.'), user_id: other }] });
    expect(elsewhere.status).to.equal(422);
    expect(elsewhere.body.detail).to.match(/addMemories/);
    expect(await memoriesOf(t, auth, other)).to.have.length(0);
    expect(await memoriesOf(t, auth, user)).to.have.length(1);

    for (const bad of ['k'.repeat(256), 'caf\u00e9']) {
      const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).set('Idempotency-Key', bad).send({ messages: says('I like oats.'), user_id: other, infer: false });
      expect(res.status, bad).to.equal(400);
      expect(res.body.detail).to.match(/Idempotency-Key/);
    }
    expect(await memoriesOf(t, auth, other)).to.have.length(0);
    const documented = (await t.http.get('/openapi.json')).body.paths['/v3/memories/add'].post.parameters;
    expect(documented.find((p: { name: string }) => p.name === 'Idempotency-Key')).to.include({ in: 'header', required: false });
  });

  it('forgets a key past its 24 hours: the retention sweep deletes it, and it is a new key again', async () => {
    const { projectId, key: apiKey } = await newProject(t);
    const credentials = token(apiKey);
    const key = unique('key');
    const sendAs = (user: string) => t.http.post('/v3/memories/add/').set('Authorization', credentials).set('Idempotency-Key', key).send({ messages: says('I row.'), user_id: user, infer: false });
    expect((await sendAs(unique('idd'))).status).to.equal(200);
    const expire = () => t.runtime.db('idempotency_keys').where({ project_id: projectId, idempotency_key: key }).update({ expires_at: Date.now() - 1 });
    await expire();
    const later = unique('idd');
    const reused = await sendAs(later);
    expect(reused.status, 'an expired key with another body is a new request').to.equal(200);
    expect(await memoriesOf(t, credentials, later)).to.have.length(1);
    await expire();
    expect(await t.runtime.idempotency.sweep()).to.be.at.least(1);
    expect(await t.runtime.db('idempotency_keys').where({ project_id: projectId }).first()).to.equal(undefined);
  });

  it('answers the retry of an add answered 503 with what its job stored, stored once', async () => {
    const model = await heldModel({ city: 'Lisbon' });
    const slow = await startRuntime({ env: { MEMORY_MODEL: 'openai/slow', OPENAI_BASE_URL: model.url, EXTRACT_TIMEOUT_MS: '300' } });
    try {
      const credentials = token((await newProject(slow)).key);
      const user = unique('idc');
      const key = unique('key');
      const body = {
        messages: says('I moved to Lisbon.'),
        user_id: user,
        infer: false,
        structured_data_schema: { type: 'object', properties: { city: { type: 'string' } } },
      };
      const send = () => slow.http.post('/v3/memories/add/').set('Authorization', credentials).set('Idempotency-Key', key).send(body);
      const first = await send();
      expect(first.status, JSON.stringify(first.body)).to.equal(503);
      // the job is still waiting on the model: a retry now waits for it, then is told to retry
      const early = await send();
      model.release();
      const retried = await waitFor(async () => {
        const res = await send();
        return res.status === 200 ? res : null;
      });
      const stored = await memoriesOf(slow, credentials, user);
      expect(stored.map((m) => m.id)).to.deep.equal([retried.body.results[0].id]);
      expect(model.calls(), 'the model was asked once: the retries did not do the work again').to.equal(1);
      expect([early.status, early.body.code]).to.deep.equal([503, 'idempotency_key_in_progress']);
      expect(retried.headers['idempotent-replayed']).to.equal('true');
      expect(retried.body.results.map((m: { memory: string; event: string; structured_data: unknown }) => [m.event, m.memory, m.structured_data])).to.deep.equal([
        ['ADD', 'I moved to Lisbon.', { city: 'Lisbon' }],
      ]);
    } finally {
      model.release();
      await slow.close();
      await model.close();
    }
  });
});
