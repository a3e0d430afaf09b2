import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { serve, type Seen, type TestServer } from '../http-server.js';
import { mem0Client } from '../mem0-client.js';

// mem0's webhooks through mem0's own JavaScript client, delivered to a real local receiver
// (127.0.0.1, which the operator allows here as for agents' tools: TOOL_ALLOW_PRIVATE_HOSTS).

interface Webhook {
  webhookId: string;
  name: string;
  url: string;
  project: string;
  eventTypes: string[];
  isActive: boolean;
  secret?: string;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Array<{ id: string; memory: string }> }>;
  update(id: string, options: Record<string, unknown>): Promise<{ memory: string }>;
  delete(id: string): Promise<{ message: string }>;
  ping(): Promise<void>;
  getWebhooks(data?: { projectId?: string }): Promise<Webhook[]>;
  createWebhook(webhook: { name: string; url: string; eventTypes: string[] }): Promise<Webhook>;
  updateWebhook(webhook: { webhookId: string; name?: string; url?: string; eventTypes?: string[] }): Promise<{ message: string }>;
  deleteWebhook(data: { webhookId: string }): Promise<{ message: string }>;
}
interface Delivery {
  id: string;
  event: string;
  memory_id: string;
  status: string;
  attempts: number;
  status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
}
interface Body {
  event: string;
  event_details: { id: string; event: string; data: { memory: string; previous_memory?: string; user_id: string | null } };
}

const ALL_EVENTS = ['memory_add', 'memory_update', 'memory_delete'];

/** True when the request carries a valid signature of its raw body with `secret`, and a timestamp. */
function signedWith(req: Seen, secret: string): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`;
  const stamp = Number(req.headers['x-cairn-timestamp']);
  return req.headers['x-cairn-signature'] === expected && Math.abs(stamp - Date.now() / 1000) < 300;
}

const bodyOf = (req: Seen): Body => JSON.parse(req.body) as Body;

describe(`mem0 webhooks (${PROFILE})`, function () {
  this.timeout(90_000);
  let t: TestRuntime;
  let key: string;
  let projectId: string;
  let client: Mem0Client;
  let stopServing: () => Promise<void>;
  const servers: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    t = await startRuntime({ env: { TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    ({ key, projectId } = await newProject(t));
    ({ client, close: stopServing } = await mem0Client<Mem0Client>(t, key));
    await client.ping();
  });
  after(async () => {
    for (const s of servers) await s.close();
    await stopServing();
    await t.close();
  });

  async function receiver(handler: (req: Seen, res: http.ServerResponse) => void = (_req, res) => res.end('ok')): Promise<TestServer> {
    const server = await serve(handler);
    servers.push(server);
    return server;
  }

  const deliveries = async (webhookId: string, auth = key): Promise<Delivery[]> => {
    const res = await t.http.get(`/api/v1/webhooks/${webhookId}/deliveries/`).set('Authorization', token(auth)).expect(200);
    return (res.body as { results: Delivery[] }).results;
  };

  it("creates, lists, updates and deletes webhooks through mem0's client; the secret is shown once", async () => {
    const hooks = await receiver();
    const created = await client.createWebhook({ name: 'logger', url: `${hooks.base}/in`, eventTypes: ['memory_add'] });
    expect(created).to.include({ name: 'logger', url: `${hooks.base}/in`, project: projectId, isActive: true });
    expect(created.eventTypes).to.deep.equal(['memory_add']);
    expect(created.secret).to.match(/^whsec_/);

    const listed = await client.getWebhooks();
    const mine = listed.find((w) => w.webhookId === created.webhookId);
    expect(mine).to.include({ name: 'logger', url: `${hooks.base}/in` });
    expect(mine).to.not.have.property('secret');

    const updated = await client.updateWebhook({ webhookId: created.webhookId, name: 'renamed', eventTypes: ['memory_add', 'memory_delete'] });
    expect(updated.message).to.match(/updated/);
    const after = (await client.getWebhooks()).find((w) => w.webhookId === created.webhookId);
    expect(after).to.include({ name: 'renamed', url: `${hooks.base}/in` });
    expect(after?.eventTypes).to.deep.equal(['memory_add', 'memory_delete']);

    expect((await client.deleteWebhook({ webhookId: created.webhookId })).message).to.match(/deleted/);
    expect((await client.getWebhooks()).map((w) => w.webhookId)).to.not.include(created.webhookId);
    await t.http.put(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).send({ name: 'x' }).expect(404);
  });

  it('sends memory_add, memory_update and memory_delete, signed, in mem0\'s payload shape, and logs each delivery', async () => {
    const hooks = await receiver();
    const created = await client.createWebhook({ name: unique('all'), url: `${hooks.base}/events`, eventTypes: ALL_EVENTS });
    const secret = created.secret as string;
    const user = unique('alice');

    const added = await client.add([{ role: 'user', content: 'I keep bees on the roof.' }], { userId: user, infer: false });
    const memoryId = (added.results[0] as { id: string }).id;
    await client.update(memoryId, { text: 'I keep bees in the garden.' });
    await client.delete(memoryId);

    const seen = await waitFor(() => Promise.resolve(hooks.requests.length >= 3 && hooks.requests), { timeoutMs: 30_000, message: 'three events received' });
    const byEvent = new Map(seen.map((r) => [bodyOf(r).event, r]));
    expect([...byEvent.keys()].sort()).to.deep.equal(['memory_add', 'memory_delete', 'memory_update']);
    for (const req of seen) {
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal('/events');
      expect(req.headers['content-type']).to.equal('application/json');
      expect(signedWith(req, secret), 'signature verifies').to.equal(true);
      expect(signedWith(req, 'whsec_wrong'), 'a wrong secret does not verify').to.equal(false);
    }
    const add = bodyOf(byEvent.get('memory_add') as Seen);
    expect(add.event_details).to.deep.include({ id: memoryId, event: 'ADD' });
    expect(add.event_details.data).to.include({ memory: 'I keep bees on the roof.', user_id: user });
    const update = bodyOf(byEvent.get('memory_update') as Seen);
    expect(update.event_details).to.deep.include({ id: memoryId, event: 'UPDATE' });
    expect(update.event_details.data).to.include({ memory: 'I keep bees in the garden.', previous_memory: 'I keep bees on the roof.' });
    const del = bodyOf(byEvent.get('memory_delete') as Seen);
    expect(del.event_details).to.deep.include({ id: memoryId, event: 'DELETE' });
    expect(del.event_details.data.memory).to.equal('I keep bees in the garden.');

    const log = await waitFor(async () => {
      const rows = await deliveries(created.webhookId);
      return rows.length === 3 && rows.every((d) => d.status === 'delivered') && rows;
    });
    for (const d of log) expect(d).to.include({ memory_id: memoryId, attempts: 1, status_code: 200, last_error: null });
  });

  it('sends only the events a webhook subscribed to', async () => {
    const hooks = await receiver();
    const created = await client.createWebhook({ name: unique('deletes'), url: hooks.base, eventTypes: ['memory_delete'] });
    const added = await client.add([{ role: 'user', content: 'I collect stamps.' }], { userId: unique('bob'), infer: false });
    const memoryId = (added.results[0] as { id: string }).id;
    await client.delete(memoryId);
    const log = await waitFor(async () => {
      const rows = await deliveries(created.webhookId);
      return rows.length === 1 && rows[0]?.status === 'delivered' && rows;
    });
    expect(log[0]).to.include({ event: 'memory_delete', memory_id: memoryId });
    expect(hooks.requests.map((r) => bodyOf(r).event)).to.deep.equal(['memory_delete']);
  });

  it('keeps the delivery log bounded: settled deliveries older than WEBHOOK_LOG_DAYS go, pending and recent ones stay', async () => {
    const hooks = await receiver();
    const sent = await client.createWebhook({ name: unique('log'), url: hooks.base, eventTypes: ['memory_add'] });
    // a receiver that never answers keeps its delivery pending
    const silent = await client.createWebhook({ name: unique('log-down'), url: 'http://127.0.0.1:9/hook', eventTypes: ['memory_add'] });
    const user = unique('log-user');
    for (const content of ['I knit.', 'I paint.']) await client.add([{ role: 'user', content }], { userId: user, infer: false });
    const delivered = await waitFor(async () => {
      const rows = await deliveries(sent.webhookId);
      return rows.length === 2 && rows.every((d) => d.status === 'delivered') && rows;
    });
    const pending = await waitFor(async () => {
      const rows = await deliveries(silent.webhookId);
      return rows.length === 2 && rows;
    });
    const [old, recent] = delivered as [Delivery, Delivery];
    const longAgo = Date.now() - 31 * 24 * 3600 * 1000;
    await t.runtime.db('webhook_deliveries').whereIn('id', [old.id, ...pending.map((d) => d.id)]).update({ created_at: longAgo });

    expect(await t.runtime.webhooks.pruneLog(30)).to.be.at.least(1);
    expect((await deliveries(sent.webhookId)).map((d) => d.id)).to.deep.equal([recent.id]);
    expect((await deliveries(silent.webhookId)).map((d) => d.status)).to.deep.equal(['pending', 'pending']);
  });

  it('retries with backoff: a receiver that answers 500 twice, then 200, gets the event', async () => {
    let calls = 0;
    const hooks = await receiver((_req, res) => {
      calls += 1;
      res.writeHead(calls <= 2 ? 500 : 200).end(calls <= 2 ? 'busy' : 'ok');
    });
    const created = await client.createWebhook({ name: unique('flaky'), url: hooks.base, eventTypes: ['memory_add'] });
    await client.add([{ role: 'user', content: 'I play the cello.' }], { userId: unique('carol'), infer: false });

    const [delivery] = await waitFor(
      async () => {
        const rows = await deliveries(created.webhookId);
        return rows[0]?.status === 'delivered' && rows;
      },
      { timeoutMs: 30_000, message: 'delivered after retries' },
    );
    expect(delivery).to.include({ attempts: 3, status_code: 200, last_error: null });
    expect(hooks.requests).to.have.length(3);
    // the same event each time, signed the same way
    expect(new Set(hooks.requests.map((r) => r.body)).size).to.equal(1);
    expect(signedWith(hooks.requests[2] as Seen, created.secret as string)).to.equal(true);
    // exponential backoff: the second retry waited longer than the first
    const times = hooks.requests.map((r) => Number(r.headers['x-cairn-timestamp']));
    expect((times[2] as number) - (times[0] as number)).to.be.at.least(2);
  });

  it('loses no event while a receiver is down: it arrives once the receiver is back', async () => {
    // a port nothing listens on yet
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));

    const created = await client.createWebhook({ name: unique('down'), url: `http://127.0.0.1:${port}/hook`, eventTypes: ['memory_add'] });
    const added = await client.add([{ role: 'user', content: 'I sail on weekends.' }], { userId: unique('dave'), infer: false });
    const memoryId = (added.results[0] as { id: string }).id;

    const failing = await waitFor(async () => {
      const [d] = await deliveries(created.webhookId);
      return d && d.attempts >= 2 && d;
    }, { timeoutMs: 30_000, message: 'two failed attempts' });
    expect(failing).to.include({ status: 'pending', status_code: null, delivered_at: null });
    expect(failing.last_error).to.be.a('string').and.not.equal('');

    const got: string[] = [];
    const back = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push(body);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => back.listen(port, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise<void>((resolve) => { back.closeAllConnections(); back.close(() => resolve()); }) });

    await waitFor(() => Promise.resolve(got.length > 0), { timeoutMs: 30_000, message: 'event delivered after the receiver came back' });
    expect((JSON.parse(got[0] as string) as Body).event_details).to.deep.include({ id: memoryId, event: 'ADD' });
    const [done] = await waitFor(async () => {
      const rows = await deliveries(created.webhookId);
      return rows[0]?.status === 'delivered' && rows;
    });
    expect(done?.attempts).to.be.greaterThan(2);
  });

  it("keeps projects apart: another project's webhook is a 404, its events are not sent", async () => {
    const hooks = await receiver();
    const created = await client.createWebhook({ name: unique('mine'), url: hooks.base, eventTypes: ALL_EVENTS });
    const other = await newProject(t);
    const auth = token(other.key);

    for (const req of [
      t.http.get(`/api/v1/webhooks/${created.webhookId}/`),
      t.http.put(`/api/v1/webhooks/${created.webhookId}/`).send({ name: 'stolen' }),
      t.http.delete(`/api/v1/webhooks/${created.webhookId}/`),
      t.http.get(`/api/v1/webhooks/${created.webhookId}/deliveries/`),
      t.http.get(`/api/v1/webhooks/projects/${projectId}/`),
      t.http.post(`/api/v1/webhooks/projects/${projectId}/`).send({ name: 'x', url: hooks.base, event_types: ['memory_add'] }),
    ]) {
      const res = await req.set('Authorization', auth);
      expect(res.status).to.equal(404);
      expect(res.body.code).to.be.a('string');
    }
    const otherList = await t.http.get(`/api/v1/webhooks/projects/${other.projectId}/`).set('Authorization', auth).expect(200);
    expect(otherList.body).to.deep.equal([]);

    // the other project's memory events never reach this project's webhook
    const res = await t.http.post('/v3/memories/add/').set('Authorization', auth).send({ messages: [{ role: 'user', content: 'I am elsewhere.' }], user_id: 'eve', infer: false }).expect(200);
    expect(res.body.results).to.have.length(1);
    const mine = await t.http.get(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).expect(200);
    expect(mine.body.name).to.equal(created.name);
    expect(await deliveries(created.webhookId)).to.deep.equal([]);
    expect(hooks.requests).to.deep.equal([]);
  });

  it('refuses a bad url, event type or field with a 400 that says why', async () => {
    const hooks = await receiver();
    const path = `/api/v1/webhooks/projects/${projectId}/`;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'a', url: 'not a url', event_types: ['memory_add'] }, /absolute URL/],
      [{ name: 'a', url: 'ftp://example.com/x', event_types: ['memory_add'] }, /http/],
      [{ name: 'a', url: 'http://169.254.169.254/latest/meta-data', event_types: ['memory_add'] }, /metadata/],
      [{ name: 'a', url: 'http://10.1.2.3/hook', event_types: ['memory_add'] }, /private.*TOOL_ALLOW_PRIVATE_HOSTS/],
      [{ name: 'a', url: 'http://localhost.invalid/hook', event_types: ['memory_add'] }, /resolve/],
      [{ name: 'a', url: hooks.base, event_types: ['memory_explode'] }, /event_types|memory_add/],
      [{ name: 'a', url: hooks.base, event_types: [] }, /event_types/],
      [{ name: 'a', url: hooks.base, event_types: ['memory_add'], secret: 'mine' }, /secret/],
      [{ url: hooks.base, event_types: ['memory_add'] }, /name/],
    ];
    for (const [body, why] of cases) {
      const res = await t.http.post(path).set('Authorization', token(key)).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code, JSON.stringify(res.body)).to.be.a('string');
      expect(JSON.stringify(res.body), JSON.stringify(body)).to.match(why);
    }
    const created = await client.createWebhook({ name: unique('ok'), url: hooks.base, eventTypes: ['memory_add'] });
    const res = await t.http.put(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).send({ url: 'http://192.168.0.10/x' });
    expect(res.status).to.equal(400);
    expect(res.body.detail).to.match(/private/);
    const still = await t.http.get(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).expect(200);
    expect(still.body.url).to.equal(hooks.base);
  });

  it('refuses a url on port 0 with a 400 that says so, on create and update; nothing is stored or changed', async () => {
    const hooks = await receiver();
    const path = `/api/v1/webhooks/projects/${projectId}/`;
    const stored = async () => (await client.getWebhooks()).map((w) => `${w.name} ${w.url}`).sort();
    const before = await stored();
    const refusal = {
      detail: 'url is not allowed: port 0 is not a port a server can listen on.',
      code: 'url_not_allowed',
      errors: [{ path: '/url', message: 'port 0 is not a port a server can listen on' }],
    };
    for (const url of ['http://93.184.215.14:0/', 'http://127.0.0.1:0/in', 'https://127.0.0.1:00/in']) {
      const res = await t.http.post(path).set('Authorization', token(key)).send({ name: unique('zero'), url, event_types: ['memory_add'] });
      expect(res.status, url).to.equal(400);
      expect(res.body, url).to.deep.equal(refusal);
    }
    expect(await stored()).to.deep.equal(before);
    const created = await client.createWebhook({ name: unique('port'), url: hooks.base, eventTypes: ['memory_add'] });
    const res = await t.http.put(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).send({ url: 'http://93.184.215.14:0/' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(refusal);
    const still = await t.http.get(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).expect(200);
    expect(still.body.url).to.equal(hooks.base);
  });

  it('refuses a name with control or bidirectional formatting characters with a 400 naming it, on create and update; nothing is stored or changed', async () => {
    const hooks = await receiver();
    const path = `/api/v1/webhooks/projects/${projectId}/`;
    const stored = async () => (await client.getWebhooks()).map((w) => `${w.name} ${w.url}`).sort();
    const before = await stored();
    const hostile = ['nul\u0000name', 'two\nlines', 'tab\there', 'red\u001b[31m', 'del\u007f', 'next\u0085line', 'invoice\u202Efdp.exe', '\u2066isolated\u2069', 'mark\u200F', 'arabic\u061Cmark', 'lrm\u200E'];
    for (const name of hostile) {
      const res = await t.http.post(path).set('Authorization', token(key)).send({ name, url: hooks.base, event_types: ['memory_add'] });
      expect(res.status, JSON.stringify(name)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.detail, JSON.stringify(name)).to.match(/^Invalid request body: \/name must not contain control characters .* or bidirectional formatting characters/);
      expect(res.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/name']);
    }
    expect(await stored()).to.deep.equal(before);

    const created = await client.createWebhook({ name: 'مرحبا 👋 hooks', url: hooks.base, eventTypes: ['memory_add'] });
    expect(created.name).to.equal('مرحبا 👋 hooks');
    const res = await t.http.put(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).send({ name: 'renamed\u202E' });
    expect(res.status).to.equal(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/name']);
    const still = await t.http.get(`/api/v1/webhooks/${created.webhookId}/`).set('Authorization', token(key)).expect(200);
    expect(still.body.name).to.equal('مرحبا 👋 hooks');
  });
});
