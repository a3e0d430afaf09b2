import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { memoriesIndexed, newProject, PROFILE, repoRoot, startRuntime, tempDir, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// mem0's official Python client (PyPI mem0ai, installed by scripts/mem0-python.sh) against a real
// Cairn serving HTTP: MemoryClient and AsyncMemoryClient, one test per method.

const PYTHON = process.env.MEM0_PYTHON ?? path.join(repoRoot, '.cache/mem0-python/bin/python');
const DRIVER = path.join(repoRoot, 'test/mem0_client.py');
/** Yesterday (UTC): a memory expiring then is hidden, and well within the sweep's grace period. */
const YESTERDAY = new Date(Date.now() - 24 * 3600 * 1000).toISOString().slice(0, 10);
/** How long one client call may take (a search embeds its query; nothing else is slow). */
const CALL_TIMEOUT_MS = 30_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface PyError {
  type: string;
  message: string;
  status: number | null;
}
interface Memory {
  id: string;
  memory: string;
  user_id: string | null;
  metadata: Record<string, Json>;
  created_at: string;
  expiration_date?: string | null;
  event?: string;
  score?: number;
}

/** One Python process holding named clients; each call is a JSON line out and one back. */
class PythonClients {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  private stderr = '';
  private exited: string | null = null;

  constructor() {
    this.child = spawn(PYTHON, [DRIVER], {
      // no analytics leave the machine, and the client's config file stays out of $HOME
      env: { PATH: process.env.PATH ?? '', MEM0_TELEMETRY: 'False', MEM0_DIR: tempDir('mem0-py-'), NO_PROXY: '127.0.0.1,localhost', PYTHONUNBUFFERED: '1' },
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      if (this.waiting) this.waiting(line);
      else this.answers.push(line);
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
    this.child.on('exit', (code, signal) => {
      this.exited = `exited (${code ?? signal})`;
      this.waiting?.('');
    });
  }

  /** Calls `method` on client `name`: its result, or the error the client raised. */
  async call<T = Json>(name: string, method: string, args: Json[] = [], kwargs: Record<string, Json> = {}): Promise<{ ok?: T; error?: PyError }> {
    if (this.exited) throw new Error(`the Python driver ${this.exited}: ${this.stderr}`);
    this.child.stdin.write(`${JSON.stringify({ client: name, method, args, kwargs })}\n`);
    const line =
      this.answers.shift() ??
      (await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiting = null;
          this.child.kill();
          reject(new Error(`${method} did not answer within ${CALL_TIMEOUT_MS} ms: ${this.stderr}`));
        }, CALL_TIMEOUT_MS);
        this.waiting = (l) => {
          clearTimeout(timer);
          this.waiting = null;
          resolve(l);
        };
      }));
    if (!line) throw new Error(`the Python driver ${this.exited ?? 'answered nothing'}: ${this.stderr}`);
    return JSON.parse(line) as { ok?: T; error?: PyError };
  }

  /** Like `call`, for a call that must succeed. */
  async ok<T = Json>(name: string, method: string, args: Json[] = [], kwargs: Record<string, Json> = {}): Promise<T> {
    const answer = await this.call<T>(name, method, args, kwargs);
    expect(answer.error, `${method}: ${JSON.stringify(answer.error)}`).to.equal(undefined);
    return answer.ok as T;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill(), 5_000);
    await gone;
    clearTimeout(timer);
  }
}

describe(`mem0 Python client (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let server: Server;
  let host: string;
  let py: PythonClients;
  let projectA: { key: string; projectId: string };
  let projectB: { key: string; projectId: string };

  before(async function () {
    if (!fs.existsSync(PYTHON)) {
      throw new Error(`mem0's Python client is not installed at ${PYTHON}: run scripts/mem0-python.sh (it prints the python to set as MEM0_PYTHON).`);
    }
    // webhooks made in these tests point at this server (127.0.0.1), which the operator allows here as for agents' tools
    t = await startRuntime({ env: { TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    projectA = await newProject(t);
    projectB = await newProject(t);
    py = new PythonClients();
    for (const kind of ['sync', 'async']) {
      await py.ok(kind, 'init', [], { kind, api_key: projectA.key, host });
      await py.ok(`${kind}-b`, 'init', [], { kind, api_key: projectB.key, host });
    }
  });
  after(async () => {
    await py?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await t?.close();
  });

  /** Memories stored as given for `user` in project A, through the HTTP API. */
  async function seed(user: string, texts: string[], extra: Record<string, unknown> = {}): Promise<Memory[]> {
    const res = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', token(projectA.key))
      .send({ messages: texts.map((content) => ({ role: 'user', content })), user_id: user, infer: false, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.results as Memory[];
  }

  async function listed(user: string): Promise<Array<Memory & { embedding_status: string }>> {
    const res = await t.http.post('/v3/memories/').set('Authorization', token(projectA.key)).send({ filters: { user_id: user } });
    return res.body.results;
  }

  async function countOf(user: string, key = projectA.key): Promise<number> {
    const res = await t.http.post('/v3/memories/').set('Authorization', token(key)).send({ filters: { user_id: user } });
    return res.body.count as number;
  }

  for (const kind of ['sync', 'async'] as const) {
    const cls = kind === 'sync' ? 'MemoryClient' : 'AsyncMemoryClient';

    describe(cls, () => {
      it('constructs: the ping names the project as both org and project, so project operations are set up', async () => {
        const made = await py.ok<{ class: string; org_id: string; project_id: string; user_email: null; project: Record<string, string> }>(`${kind}-new`, 'init', [], {
          kind,
          api_key: projectA.key,
          host,
        });
        expect(made).to.deep.equal({
          class: cls,
          org_id: projectA.projectId,
          project_id: projectA.projectId,
          user_email: null,
          project: { org_id: projectA.projectId, project_id: projectA.projectId },
        });
        const refused = await py.call(`${kind}-bad`, 'init', [], { kind, api_key: 'cairn_not_a_key', host });
        expect(refused.error?.type).to.equal('ValueError');
      });

      it('add: filters name the owner, timestamp sets the event time, metadata and expiration_date are kept, the other options are accepted', async () => {
        const user = unique('py-add');
        const timestamp = 1_700_000_000;
        const added = await py.ok<{ results: Memory[] }>(kind, 'add', [[{ role: 'user', content: 'I keep bees on the roof.' }]], {
          filters: { user_id: user },
          infer: false,
          metadata: { source: 'python' },
          timestamp,
          custom_categories: [{ hobbies: 'what the user does for fun' }],
          custom_instructions: 'Keep hobbies.',
          agent_custom_instructions: 'Keep preferences.',
          expiration_date: '2030-01-01',
          structured_data_schema: { type: 'object', properties: { hobby: { type: 'string', description: 'what the user does for fun' } } },
        });
        expect(added.results.map((m) => [m.event, m.memory, m.user_id])).to.deep.equal([['ADD', 'I keep bees on the roof.', user]]);
        const stored = added.results[0] as Memory;
        expect(Date.parse(stored.created_at)).to.equal(timestamp * 1000);
        expect(stored.metadata).to.deep.equal({ source: 'python' });
        expect(Object.keys((stored as Memory & { structured_data: Record<string, Json> }).structured_data)).to.deep.equal(['hobby']);
        expect(stored.expiration_date).to.equal('2030-01-01');
        // a plain string is one user message; infer (the default) keeps the user's statement
        const inferred = await py.ok<{ results: Memory[] }>(kind, 'add', ['I restore old sailboats.'], { filters: { user_id: user } });
        expect(inferred.results.map((m) => [m.event, m.memory])).to.deep.equal([['ADD', 'I restore old sailboats']]);
        expect(await countOf(user)).to.equal(2);
      });

      it("add: custom_categories categorize the memories; get_all and search keep a category's memories", async () => {
        const user = unique('py-cat');
        const added = await py.ok<{ results: Memory[] }>(kind, 'add', [[{ role: 'user', content: 'I keep bees on the roof.' }, { role: 'user', content: 'I restore old sailboats.' }]], {
          filters: { user_id: user },
          infer: false,
          custom_categories: [{ beekeeping: 'bees, hives and honey' }, { boats: 'sailing, boats and the sea' }],
        });
        await seed(user, ['I drink green tea every morning.']);
        await waitFor(async () => (await listed(user)).filter((m) => m.embedding_status === 'indexed').length === 3, { timeoutMs: 60_000, message: 'not indexed' });
        const got = await py.ok<Memory & { categories: string[] }>(kind, 'get', [added.results[0]?.id as string]);
        expect(got.categories).to.deep.equal(['beekeeping']);
        const boats = await py.ok<{ results: Memory[] }>(kind, 'get_all', [], { filters: { user_id: user }, categories: ['boats'] });
        expect(boats.results.map((m) => m.memory)).to.deep.equal(['I restore old sailboats.']);
        const food = await py.ok<{ results: Memory[] }>(kind, 'search', ['what do I do?'], { filters: { user_id: user }, categories: ['food'] });
        expect(food.results.map((m) => m.memory)).to.deep.equal(['I drink green tea every morning.']);
        const refused = await py.call(kind, 'add', ['I like tea.'], { filters: { user_id: user }, infer: false, custom_categories: [{ food: 5 }] });
        expect(refused.error).to.include({ type: 'ValidationError', status: 400 });
        expect(await countOf(user)).to.equal(3);
      });

      it('add: an unknown option is refused with a 400 and nothing is stored', async () => {
        const user = unique('py-unknown');
        const refused = await py.call(kind, 'add', ['I like tea.'], { filters: { user_id: user }, infer: false, colour: 'blue' });
        expect(refused.error).to.include({ type: 'ValidationError', status: 400 });
        expect(refused.error?.message).to.match(/colour/);
        const contradicted = await py.call(kind, 'add', ['I like tea.'], { user_id: user, filters: { user_id: `${user}-other` }, infer: false });
        expect(contradicted.error).to.include({ type: 'ValidationError', status: 400 });
        expect(await countOf(user)).to.equal(0);
      });

      it('search: filters, top_k and threshold bound the results; fields and rerank are taken', async () => {
        const user = unique('py-search');
        const [tea] = await seed(user, ['I drink green tea every morning.', 'My sister lives in Lisbon.']);
        await memoriesIndexed(t, token(projectA.key), { user_id: user }, 2);
        const query = 'what does the user drink in the morning?';
        const both = await waitFor(
          async () => {
            const res = await py.ok<{ results: Memory[] }>(kind, 'search', [query], { filters: { user_id: user } });
            return res.results.length === 2 ? res.results : null;
          },
          { timeoutMs: 30_000, message: 'memories searchable' },
        );
        expect(both[0]?.id).to.equal(tea?.id);
        const top = await py.ok<{ results: Memory[] }>(kind, 'search', [query], { filters: { user_id: user }, top_k: 1, rerank: true });
        expect(top.results.map((m) => m.id)).to.deep.equal([tea?.id]);
        const strict = await py.ok<{ results: Memory[] }>(kind, 'search', [query], { filters: { user_id: user }, threshold: 0.99 });
        expect(strict.results).to.deep.equal([]);
        const slim = await py.ok<{ results: Array<Record<string, Json>> }>(kind, 'search', [query], { filters: { AND: [{ user_id: user }] }, top_k: 1, fields: ['memory', 'score'] });
        expect(Object.keys(slim.results[0] ?? {}).sort()).to.deep.equal(['id', 'memory', 'score']);
      });

      it('get_all: the filtered memories, paged', async () => {
        const user = unique('py-list');
        await seed(user, ['First note.', 'Second note.', 'Third note.']);
        const all = await py.ok<{ count: number; results: Memory[] }>(kind, 'get_all', [], { filters: { user_id: user } });
        expect(all.count).to.equal(3);
        const page = await py.ok<{ count: number; next: string | null; results: Memory[] }>(kind, 'get_all', [], { filters: { user_id: user }, page: 2, page_size: 2 });
        expect(page.results).to.have.length(1);
        expect(page.next).to.equal(null);
      });

      it('get: one memory; an unknown id is a MemoryNotFoundError (404)', async () => {
        const user = unique('py-get');
        const [memory] = await seed(user, ['I work at Acme.'], { metadata: { team: 'red' } });
        const got = await py.ok<Memory>(kind, 'get', [memory?.id as string]);
        expect(got).to.include({ id: memory?.id, memory: 'I work at Acme.', user_id: user });
        expect(got.metadata).to.deep.equal({ team: 'red' });
        const missing = await py.call(kind, 'get', ['0190f5e2-0000-7000-8000-000000000000']);
        expect(missing.error).to.include({ type: 'MemoryNotFoundError', status: 404 });
      });

      it('update: new text', async () => {
        const [memory] = await seed(unique('py-update'), ['I live in Lisbon.']);
        const updated = await py.ok<Memory>(kind, 'update', [memory?.id as string], { text: 'I live in Porto.' });
        expect(updated.memory).to.equal('I live in Porto.');
        expect((await t.http.get(`/v1/memories/${memory?.id}/`).set('Authorization', token(projectA.key))).body.memory).to.equal('I live in Porto.');
      });

      it('update supersedes: search with as_of finds the old text and not the new, include_superseded both, get_all the current one', async () => {
        const user = unique('py-as-of');
        const [memory] = await seed(user, ['I live in Lisbon.'], { timestamp: 1_600_000_000 });
        const id = memory?.id as string;
        await py.ok(kind, 'update', [id], { text: 'I live in Porto.', timestamp: 1_700_000_000 });
        await memoriesIndexed(t, token(projectA.key), { user_id: user });
        const every = await waitFor(
          async () => {
            const res = await py.ok<{ results: Array<Memory & { superseded_by: string | null }> }>(kind, 'search', ['where does the user live?'], { filters: { user_id: user }, include_superseded: true });
            return res.results.length === 2 ? res.results : null;
          },
          { timeoutMs: 30_000, message: 'both versions searchable' },
        );
        expect(every.map((m) => [m.memory, m.superseded_by])).to.deep.equal([
          ['I live in Porto.', null],
          ['I live in Lisbon.', id],
        ]);
        const then = await py.ok<{ results: Memory[] }>(kind, 'search', ['where does the user live?'], { filters: { user_id: user }, as_of: 1_650_000_000 });
        expect(then.results.map((m) => m.memory)).to.deep.equal(['I live in Lisbon.']);
        const now = await py.ok<{ results: Memory[] }>(kind, 'get_all', [], { filters: { user_id: user } });
        expect(now.results.map((m) => m.memory)).to.deep.equal(['I live in Porto.']);
      });

      it('history: every change, oldest first', async () => {
        const [memory] = await seed(unique('py-history'), ['I play chess.']);
        await py.ok(kind, 'update', [memory?.id as string], { text: 'I play go.' });
        const history = await py.ok<Array<{ event: string; old_memory: string | null; new_memory: string | null; memory_id: string }>>(kind, 'history', [memory?.id as string]);
        expect(history.map((h) => [h.event, h.old_memory, h.new_memory])).to.deep.equal([
          ['ADD', null, 'I play chess.'],
          ['UPDATE', 'I play chess.', 'I play go.'],
        ]);
        const missing = await py.call(kind, 'history', ['0190f5e2-0000-7000-8000-000000000000']);
        expect(missing.error).to.include({ type: 'MemoryNotFoundError', status: 404 });
      });

      it('delete: the memory is gone', async () => {
        const user = unique('py-delete');
        const [memory] = await seed(user, ['I own a cat.', 'I own a dog.']);
        expect((await py.ok<{ message: string }>(kind, 'delete', [memory?.id as string])).message).to.match(/deleted/);
        expect((await py.call(kind, 'get', [memory?.id as string])).error).to.include({ type: 'MemoryNotFoundError', status: 404 });
        expect(await countOf(user)).to.equal(1);
      });

      it("delete_all: every memory of the user, and only that user's, named directly or under filters", async () => {
        const user = unique('py-delete-all');
        const other = unique('py-keep');
        await seed(user, ['One.', 'Two.']);
        await seed(other, ['Three.']);
        expect((await py.ok<{ message: string }>(kind, 'delete_all', [], { user_id: user })).message).to.match(/^2 memories deleted/);
        expect(await countOf(user)).to.equal(0);
        expect(await countOf(other)).to.equal(1);
        // the owner under filters, as DeleteAllMemoryOptions documents it; a filter on anything else is a 400
        await seed(user, ['Four.']);
        const refused = await py.call(kind, 'delete_all', [], { filters: { metadata: 'x' } });
        expect(refused.error).to.include({ type: 'ValidationError', status: 400 });
        expect((await py.ok<{ message: string }>(kind, 'delete_all', [], { filters: { user_id: user } })).message).to.match(/^1 memories deleted/);
        expect(await countOf(user)).to.equal(0);
        expect(await countOf(other)).to.equal(1);
      });

      it('add with expiration_date: get_all and search leave expired memories out unless show_expired=True; get returns them', async () => {
        const user = unique('py-expiry');
        const add = (content: string, expiration_date: string) =>
          py.ok<{ results: Memory[] }>(kind, 'add', [content], { filters: { user_id: user }, infer: false, expiration_date });
        const [expired] = (await add('I had a gym membership.', YESTERDAY)).results as [Memory];
        await add('I have a library card.', '2999-12-31');
        const listed = await py.ok<{ count: number; results: Memory[] }>(kind, 'get_all', [], { filters: { user_id: user } });
        expect(listed.results.map((m) => m.memory)).to.deep.equal(['I have a library card.']);
        expect((await py.ok<{ count: number }>(kind, 'get_all', [], { filters: { user_id: user }, show_expired: true })).count).to.equal(2);
        const query = 'which memberships does the user have?';
        const all = await waitFor(
          async () => {
            const res = await py.ok<{ results: Memory[] }>(kind, 'search', [query], { filters: { user_id: user }, show_expired: true });
            return res.results.length === 2 ? res.results : null;
          },
          { timeoutMs: 30_000, message: 'memories searchable' },
        );
        expect(all.map((m) => m.id)).to.include(expired.id);
        const shown = await py.ok<{ results: Memory[] }>(kind, 'search', [query], { filters: { user_id: user } });
        expect(shown.results.map((m) => m.memory)).to.deep.equal(['I have a library card.']);
        expect((await py.ok<Memory>(kind, 'get', [expired.id])).expiration_date).to.equal(YESTERDAY);
        const refused = await py.call(kind, 'add', ['I like kiwis.'], { filters: { user_id: user }, infer: false, expiration_date: '2030-02-30' });
        expect(refused.error).to.include({ type: 'ValidationError', status: 400 });
        expect(refused.error?.message).to.match(/expiration_date/);
        expect((await py.ok<{ count: number }>(kind, 'get_all', [], { filters: { user_id: user }, show_expired: true })).count).to.equal(2);
      });

      it('update: timestamp sets the event time; expiration_date sets the date and None clears it', async () => {
        const user = unique('py-update-more');
        const [memory] = await seed(user, ['I visited Vienna.'], { expiration_date: YESTERDAY });
        const id = memory?.id as string;
        expect(await countOf(user)).to.equal(0);
        const moved = await py.ok<Memory>(kind, 'update', [id], { timestamp: 1_500_000_000 });
        expect(moved.created_at).to.equal('2017-07-14T02:40:00.000Z');
        expect((await py.ok<Memory>(kind, 'update', [id], { timestamp: '2020-02-29T12:00:00+00:00' })).created_at).to.equal('2020-02-29T12:00:00.000Z');
        const cleared = await py.ok<Memory>(kind, 'update', [id], { expiration_date: null });
        expect(cleared.expiration_date).to.equal(null);
        expect(await countOf(user)).to.equal(1);
        expect((await py.ok<Memory>(kind, 'update', [id], { expiration_date: '2999-01-01' })).expiration_date).to.equal('2999-01-01');
        const refused = await py.call(kind, 'update', [id], { expiration_date: 'next week' });
        expect(refused.error).to.include({ type: 'ValidationError', status: 400 });
        const events = await py.ok<Array<{ event: string }>>(kind, 'history', [id]);
        expect(events.map((h) => h.event)).to.deep.equal(['ADD', 'UPDATE', 'UPDATE', 'UPDATE', 'UPDATE']);
        expect((await py.ok<Memory>(kind, 'get', [id])).expiration_date).to.equal('2999-01-01');
      });

      it('delete: delete_linked=True deletes the memory with the text its update superseded', async () => {
        const user = unique('py-delete-linked');
        const [memory] = await seed(user, ['I own a kayak.', 'I own a tent.']);
        await py.ok(kind, 'update', [memory?.id as string], { text: 'I own two kayaks.' });
        expect((await py.ok<{ message: string }>(kind, 'delete', [memory?.id as string], { delete_linked: true })).message).to.match(/deleted/);
        expect((await py.call(kind, 'get', [memory?.id as string])).error).to.include({ type: 'MemoryNotFoundError', status: 404 });
        expect(await countOf(user)).to.equal(1);
        const versions = await t.http.post('/v3/memories/').set('Authorization', token(projectA.key)).send({ filters: { user_id: user }, include_superseded: true });
        expect(versions.body.results.map((m: Memory) => m.memory)).to.deep.equal(['I own a tent.']);
      });

      it('users: the entities that have memories, with their counts', async () => {
        const user = unique('py-users');
        await seed(user, ['I grow tomatoes.', 'I grow basil.']);
        const listed = await py.ok<{ count: number; results: Array<{ name: string; type: string; total_memories: number }> }>(kind, 'users');
        const mine = listed.results.find((e) => e.name === user);
        expect(mine).to.include({ type: 'user', total_memories: 2 });
        expect((await py.ok<{ results: Array<{ name: string }> }>(`${kind}-b`, 'users')).results.map((e) => e.name)).to.not.include(user);
      });

      it("delete_users: one user's memories are gone, another user's stay", async () => {
        const user = unique('py-del-user');
        const other = unique('py-keep-user');
        await seed(user, ['I sing in a choir.', 'I run marathons.']);
        await seed(other, ['I paint.']);
        expect(await py.ok(kind, 'delete_users', [], { user_id: user })).to.deep.equal({ message: 'Entity deleted successfully.' });
        expect(await countOf(user)).to.equal(0);
        expect(await countOf(other)).to.equal(1);
        const listed = await py.ok<{ results: Array<{ name: string }> }>(kind, 'users');
        expect(listed.results.map((e) => e.name)).to.not.include(user);
      });

      it('batch_update: new text and metadata for several memories at once', async () => {
        const [a, b] = await seed(unique('py-batch-update'), ['I live in Lisbon.', 'I work at Acme.']);
        const done = await py.ok<{ message: string }>(kind, 'batch_update', [
          [
            { memory_id: a?.id as string, text: 'I live in Porto.' },
            { memory_id: b?.id as string, metadata: { team: 'blue' } },
          ],
        ]);
        expect(done.message).to.match(/updated 2 memories/);
        expect((await py.ok<Memory>(kind, 'get', [a?.id as string])).memory).to.equal('I live in Porto.');
        expect((await py.ok<Memory>(kind, 'get', [b?.id as string])).metadata).to.deep.equal({ team: 'blue' });
        const unknown = await py.call(kind, 'batch_update', [[{ memory_id: '0190f5e2-0000-7000-8000-000000000000', text: 'x' }]]);
        expect(unknown.error).to.include({ status: 400 });
      });

      it('batch_delete: several memories at once, the others stay', async () => {
        const user = unique('py-batch-delete');
        const [a, b] = await seed(user, ['One.', 'Two.', 'Three.']);
        const done = await py.ok<{ message: string }>(kind, 'batch_delete', [[{ memory_id: a?.id as string }, { memory_id: b?.id as string }]]);
        expect(done.message).to.match(/deleted 2 memories/);
        expect((await py.call(kind, 'get', [a?.id as string])).error).to.include({ type: 'MemoryNotFoundError', status: 404 });
        expect(await countOf(user)).to.equal(1);
      });

      it('feedback: get shows it; None withdraws it', async () => {
        const [memory] = await seed(unique('py-feedback'), ['I live in Lisbon.']);
        const id = memory?.id as string;
        const given = await py.ok<Record<string, Json>>(kind, 'feedback', [id], { feedback: 'negative', feedback_reason: 'I moved to Porto' });
        expect(given).to.include({ feedback: 'NEGATIVE', feedback_reason: 'I moved to Porto' });
        expect(await py.ok<Record<string, Json>>(kind, 'get', [id])).to.include({ memory: 'I live in Lisbon.', feedback: 'NEGATIVE', feedback_reason: 'I moved to Porto' });
        await py.ok(kind, 'feedback', [id]);
        expect(await py.ok<Record<string, Json>>(kind, 'get', [id])).to.include({ feedback: null, feedback_reason: null });
        expect((await py.call(`${kind}-b`, 'feedback', [id], { feedback: 'POSITIVE' })).error).to.include({ status: 404 });
      });

      it("get_summary: the user's memories, newest first", async () => {
        const user = unique('py-summary');
        const now = Math.floor(Date.now() / 1000);
        await seed(user, ['I work at Acme.'], { timestamp: now - 200 });
        await seed(user, ['I moved to Porto.'], { timestamp: now - 100 });
        expect(await py.ok(kind, 'get_summary', [], { filters: { user_id: user } })).to.deep.equal({ summary: 'I moved to Porto. I work at Acme.', memory_count: 2 });
        expect(await py.ok(`${kind}-b`, 'get_summary', [], { filters: { user_id: user } })).to.deep.equal({ summary: '', memory_count: 0 });
      });

      it('create_memory_export / get_memory_export: a Pydantic schema (as json.dumps gives it) filled from the memories; no export is a 404', async () => {
        const user = unique('py-export');
        await seed(user, ['My name is Ana Lopez.', 'I work as a nurse at Hospital Santo Antonio.']);
        const schema = JSON.stringify({
          $defs: { Address: { properties: { street: { title: 'Street', type: 'string' } }, title: 'Address', type: 'object' } },
          properties: {
            full_name: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Full Name' },
            occupation: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Occupation' },
            address: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
          },
          title: 'Profile',
          type: 'object',
        });
        const created = await py.ok<{ message: string; id: string }>(kind, 'create_memory_export', [schema], { filters: { user_id: user } });
        expect(created.message).to.be.a('string');
        const exported = await waitFor(
          async () => {
            const got = await py.ok<Record<string, Json> & { memory_export: Record<string, Json> }>(kind, 'get_memory_export', [], { memory_export_id: created.id });
            return got.memory_export.status === 'completed' && got;
          },
          { timeoutMs: 60_000, intervalMs: 100, message: 'the export completed' },
        );
        expect(exported).to.deep.include({ full_name: 'Ana Lopez', occupation: 'nurse', address: null });
        expect(exported.memory_export).to.deep.include({ id: created.id, memory_count: 2, unsupported_fields: [{ field: 'address', reason: 'a nested object' }] });
        // the latest export of the user, named at the top level
        expect((await py.ok<{ memory_export: { id: string } }>(kind, 'get_memory_export', [], { user_id: user })).memory_export.id).to.equal(created.id);
        expect((await py.call(`${kind}-b`, 'get_memory_export', [], { memory_export_id: created.id })).error).to.include({ status: 404 });
        expect((await py.call(kind, 'get_memory_export', [], { user_id: unique('py-none') })).error).to.include({ status: 404 });
        expect((await py.call(kind, 'create_memory_export', ['{not json'], { filters: { user_id: user } })).error).to.include({ status: 400 });
        expect((await py.call(kind, 'create_memory_export', [schema], { filters: { user_id: user }, colour: 'blue' })).error).to.include({ status: 400 });
      });

      it('webhooks: create, get_webhooks, update_webhook, delete_webhook', async () => {
        const projectId = projectA.projectId;
        const url = `${host}/hooks/${unique(kind)}`;
        const created = await py.ok<Record<string, Json>>(kind, 'create_webhook', [], { url, name: 'logger', project_id: projectId, event_types: ['memory_add'] });
        expect(created).to.include({ name: 'logger', url, project: projectId, is_active: true });
        expect(created.secret).to.match(/^whsec_/);
        expect(created.event_types).to.deep.equal(['memory_add']);
        const id = created.webhook_id as Json;
        const listed = await py.ok<Array<Record<string, Json>>>(kind, 'get_webhooks', [projectId]);
        expect(listed.find((w) => w.webhook_id === id)).to.include({ name: 'logger', url });
        const updated = await py.ok<Record<string, Json>>(kind, 'update_webhook', [id], { name: 'renamed', event_types: ['memory_add', 'memory_delete'] });
        expect(updated.message).to.match(/updated/);
        const after = (await py.ok<Array<Record<string, Json>>>(kind, 'get_webhooks', [projectId])).find((w) => w.webhook_id === id);
        expect(after).to.include({ name: 'renamed', url });
        expect(after?.event_types).to.deep.equal(['memory_add', 'memory_delete']);
        expect((await py.call(`${kind}-b`, 'get_webhooks', [projectId])).error).to.include({ status: 404 });
        expect((await py.call(`${kind}-b`, 'delete_webhook', [id])).error).to.include({ status: 404 });
        expect((await py.ok<{ message: string }>(kind, 'delete_webhook', [id])).message).to.match(/deleted/);
        expect((await py.ok<Array<Record<string, Json>>>(kind, 'get_webhooks', [projectId])).map((w) => w.webhook_id)).to.not.include(id);
      });

      it("a key of another project neither sees nor changes this project's memories", async () => {
        const user = unique('py-tenant');
        const [memory] = await seed(user, ['My PIN is in the blue notebook.']);
        const id = memory?.id as string;
        const b = `${kind}-b`;
        expect((await py.call(b, 'get', [id])).error).to.include({ status: 404 });
        expect((await py.call(b, 'history', [id])).error).to.include({ status: 404 });
        expect((await py.call(b, 'update', [id], { text: 'changed' })).error).to.include({ status: 404 });
        expect((await py.call(b, 'delete', [id])).error).to.include({ status: 404 });
        expect((await py.ok<{ count: number }>(b, 'get_all', [], { filters: { user_id: user } })).count).to.equal(0);
        expect((await py.ok<{ results: Memory[] }>(b, 'search', ['PIN notebook'], { filters: { user_id: user } })).results).to.deep.equal([]);
        expect((await py.ok<{ message: string }>(b, 'delete_all', [], { user_id: user })).message).to.match(/^0 memories deleted/);
        const still = await t.http.get(`/v1/memories/${id}/`).set('Authorization', token(projectA.key));
        expect(still.body.memory).to.equal('My PIN is in the blue notebook.');
      });
    });
  }
});
