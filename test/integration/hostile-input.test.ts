import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { routesOf } from '../../api/app.js';
import { freePort, isProduction, newProject, profileEnv, spawnCairn, startRuntime, token, unique, waitFor, type CairnProcess, type TestRuntime } from '../helpers.js';

interface RawResponse {
  status: number;
  body: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

/** Sends exactly these bytes as the body (Content-Length set to their length unless given). */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let responded = false;
    const data = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...(data ? { 'Content-Length': String(data.length) } : {}), ...headers } }, (res) => {
      responded = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let parsed: Record<string, unknown>;
        try {
          parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
        } catch {
          parsed = { raw: text };
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
      res.on('error', reject);
    });
    // The server may answer (and close) before it has read an oversized body: the answer counts.
    req.on('error', (err) => setTimeout(() => (responded ? undefined : reject(err)), 500));
    if (data) req.write(data);
    req.end();
  });
}

/** Opens a connection, sends headers promising `declared` bytes, sends `partial` and hangs up. */
function sendAndHangUp(port: number, path: string, headers: Record<string, string>, partial: string, declared: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      const head = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${declared}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
      socket.write(head + partial, () => setTimeout(() => socket.destroy(), 50));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

const CRLF = '\r\n';
const part = (boundary: string, name: string, value: string, filename?: string): string =>
  `--${boundary}${CRLF}Content-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}${CRLF}` +
  `${filename ? `Content-Type: text/plain${CRLF}` : ''}${CRLF}${value}${CRLF}`;
const end = (boundary: string): string => `--${boundary}--${CRLF}`;

describe('hostile input', function () {
  this.timeout(120_000);

  describe('multipart uploads against a running server', () => {
    let proc: CairnProcess;
    let port: number;
    const key = `bootstrap-${unique('k')}-abcdef`;
    const auth = { Authorization: `Token ${key}` };
    const path = `/v1/knowledge/${unique('kb')}/documents`;
    const multipart = (boundary: string) => ({ ...auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` });

    before(async () => {
      port = await freePort();
      proc = await spawnCairn(isProduction ? 'start-api.ts' : 'start.ts', { ...profileEnv({ BOOTSTRAP_API_KEY: key, LOG_LEVEL: 'info' }), PORT: String(port) });
      await proc.waitForOutput(/cairn started/, 60_000);
    });

    after(async () => {
      await proc?.kill();
    });

    afterEach(async function () {
      // whatever the request did, the process still serves
      expect(proc.child.exitCode, `the server exited: ${proc.output().slice(-2000)}`).to.equal(null);
      const ping = await send(port, 'GET', '/v1/ping', auth);
      expect(ping.status, this.currentTest?.title).to.equal(200);
    });

    it('a body cut off before its closing boundary is a 400, and the server lives on', async () => {
      const res = await send(port, 'POST', path, multipart('zz'), `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="a.txt"${CRLF}${CRLF}hello`);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('malformed_multipart');
      expect(res.body.detail).to.be.a('string');
    });

    it('a body cut off in the middle of a part header is a 400', async () => {
      const res = await send(port, 'POST', path, multipart('zz'), `--zz${CRLF}Content-Disposition: form-da`);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('malformed_multipart');
    });

    it('a client that hangs up mid-upload does not take the server down, and its request ends', async () => {
      const ended = () => proc.output().split('\n').filter((line) => line.includes(`"path":"${path}"`)).length;
      const before = ended();
      const body = `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="a.txt"${CRLF}${CRLF}${'x'.repeat(10_000)}`;
      await sendAndHangUp(port, path, multipart('zz'), body, 1_000_000);
      await sendAndHangUp(port, path, multipart('zz'), `--zz${CRLF}Content-Disp`, 500);
      // each request is logged when it ends; one left waiting for the rest of its body never would be
      await waitFor(async () => ended() === before + 2, { message: 'both cut-off requests ended' });
    });

    it('a multipart content type without a boundary is a 400', async () => {
      const res = await send(port, 'POST', path, { ...auth, 'Content-Type': 'multipart/form-data' }, part('zz', 'file', 'hello', 'a.txt') + end('zz'));
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('malformed_multipart');
    });

    it('a body whose boundary does not match the header is a 400', async () => {
      const res = await send(port, 'POST', path, multipart('abc'), part('zz', 'file', 'hello', 'a.txt') + end('zz'));
      expect(res.status).to.equal(400);
      expect(res.body.code).to.be.oneOf(['malformed_multipart', 'validation_failed']);
    });

    it('binary garbage is a 400', async () => {
      const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
      const res = await send(port, 'POST', path, multipart('zz'), garbage);
      expect(res.status).to.equal(400);
    });

    it('a part without a Content-Disposition is a 400', async () => {
      const res = await send(port, 'POST', path, multipart('zz'), `--zz${CRLF}Content-Type: text/plain${CRLF}${CRLF}hello${CRLF}` + end('zz'));
      expect(res.status).to.equal(400);
    });

    it('two files are a 400', async () => {
      const res = await send(port, 'POST', path, multipart('zz'), part('zz', 'file', 'one', 'a.txt') + part('zz', 'file', 'two', 'b.txt') + end('zz'));
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
    });

    it('a file in another field, an unknown field and a field that is not JSON are each a 400', async () => {
      const other = await send(port, 'POST', path, multipart('zz'), part('zz', 'document', 'one', 'a.txt') + end('zz'));
      expect(other.status).to.equal(400);
      const unknown = await send(port, 'POST', path, multipart('zz'), part('zz', 'colour', 'blue') + part('zz', 'file', 'one', 'a.txt') + end('zz'));
      expect(unknown.status).to.equal(400);
      expect(unknown.body.code).to.equal('validation_failed');
      const notJson = await send(port, 'POST', path, multipart('zz'), part('zz', 'metadata', '{nope') + part('zz', 'file', 'one', 'a.txt') + end('zz'));
      expect(notJson.status).to.equal(400);
      const noFile = await send(port, 'POST', path, multipart('zz'), part('zz', 'filename', 'a.txt') + end('zz'));
      expect(noFile.status).to.equal(400);
    });

    it('too many fields, and a field over its size, are each a 400', async () => {
      const many = Array.from({ length: 40 }, (_, i) => part('zz', `f${i}`, 'v')).join('') + part('zz', 'file', 'one', 'a.txt') + end('zz');
      const res = await send(port, 'POST', path, multipart('zz'), many);
      expect(res.status).to.equal(400);
      const big = await send(port, 'POST', path, multipart('zz'), part('zz', 'filename', 'x'.repeat(200_000)) + part('zz', 'file', 'one', 'a.txt') + end('zz'));
      expect(big.status).to.equal(400);
    });

    it('a file over the limit is a 413', async () => {
      const head = `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="big.txt"${CRLF}${CRLF}`;
      const body = Buffer.concat([Buffer.from(head), Buffer.alloc(11 * 1024 * 1024, 'a'), Buffer.from(CRLF + end('zz'))]);
      const res = await send(port, 'POST', path, multipart('zz'), body);
      expect(res.status).to.equal(413);
      expect(res.body.code).to.equal('payload_too_large');
    });

    it('an unknown method is a 405 with Allow, logged as a plain request, not an error', async () => {
      const known = await send(port, 'TRACE', '/v1/agents', auth);
      expect(known.status).to.equal(405);
      expect(known.body.code).to.equal('method_not_allowed');
      expect(String(known.headers.allow)).to.match(/GET/).and.match(/POST/);
      const unknown = await send(port, 'TRACE', '/v1/nothing-here', auth);
      expect(unknown.status).to.equal(405);
      expect((await send(port, 'DELETE', '/v1/agents', auth)).status).to.equal(405);
      const errorLines = proc.output().split('\n').filter((line) => line.includes('"level":50'));
      expect(errorLines, errorLines.join('\n')).to.deep.equal([]);
    });

    it('an oversized file that is also cut off is a 413 or a hang-up, never a crash', async () => {
      const head = `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="big.txt"${CRLF}${CRLF}`;
      await sendAndHangUp(port, path, multipart('zz'), head + 'a'.repeat(11 * 1024 * 1024), 20 * 1024 * 1024);
    });
  });

  describe('bad input through the API', () => {
    let t: TestRuntime;
    let auth: string;
    const deep = (levels: number): unknown => {
      let value: unknown = 'bottom';
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    // JSON text with a lone surrogate escape, which JSON.stringify would also write for '\ud800'
    const sendJson = (method: 'post' | 'patch' | 'put', path: string, text: string) =>
      t.http[method](path).set('Authorization', auth).set('Content-Type', 'application/json').send(text);
    const post = (path: string, body: unknown) => t.http.post(path).set('Authorization', auth).send(body as object);
    const get = (path: string) => t.http.get(path).set('Authorization', auth);
    const expect400 = (res: { status: number; body: Record<string, unknown> }, code?: string) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.detail).to.be.a('string');
      if (code) expect(res.body.code).to.equal(code);
    };

    before(async () => {
      t = await startRuntime();
      auth = token((await newProject(t)).key);
    });
    after(async () => {
      await t?.close();
    });

    it('every list refuses an offset or page past the bound with a 400, on every database', async () => {
      const lists = routesOf(t.app).filter((r) => r.method === 'get' && r.auth === 'token' && (r.query?.properties as Record<string, unknown> | undefined)?.offset);
      expect(lists.length).to.be.greaterThan(8);
      for (const route of lists) {
        const path = route.path.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, () => unique('x'));
        for (const offset of ['9223372036854775807', '99999999999999999999', '2147483648']) {
          const res = await get(`${path}?offset=${offset}`);
          expect(res.status, `${route.path} offset=${offset}: ${JSON.stringify(res.body)}`).to.equal(400);
          expect(res.body.code).to.equal('validation_failed');
        }
      }
      const agents = await get('/v1/agents?offset=2147483647');
      expect(agents.status).to.equal(200);
      expect(agents.body.agents).to.deep.equal([]);
      const page = await t.http.post('/v3/memories?page=99999999999999999999').set('Authorization', auth).send({ filters: { user_id: 'u' } });
      expect400(page, 'validation_failed');
    });

    it('a query parameter given twice is a 400 naming it, on every route, and nothing is deleted', async () => {
      const [qa, qb] = [unique('qa'), unique('qb')];
      for (const user of [qa, qb]) {
        const added = await post('/v3/memories/add', { messages: [{ role: 'user', content: `I am ${user} and I like tea.` }], user_id: user, infer: false });
        expect(added.status, JSON.stringify(added.body)).to.equal(200);
      }
      const both = await t.http.delete(`/v1/memories/?user_id=${qa}&user_id=${qb}`).set('Authorization', auth);
      expect400(both, 'validation_failed');
      expect(both.body.detail).to.equal('Invalid query string: /user_id is given 2 times; send it once.');
      expect(both.body.errors).to.deep.equal([{ path: '/user_id', message: 'is given 2 times; send it once' }]);
      // even the same value twice: the caller meant one of them, and Cairn cannot tell which
      expect400(await t.http.delete(`/v1/memories/?user_id=${qb}&user_id=${qb}`).set('Authorization', auth), 'validation_failed');
      for (const user of [qa, qb]) {
        const listed = await post('/v3/memories', { filters: { user_id: user } });
        expect(listed.body.results.map((m: { memory: string }) => m.memory), user).to.deep.equal([`I am ${user} and I like tea.`]);
      }

      const lists = routesOf(t.app).filter((r) => r.method === 'get' && r.auth === 'token' && (r.query?.properties as Record<string, unknown> | undefined)?.limit);
      expect(lists.length).to.be.greaterThan(8);
      for (const route of lists) {
        const path = route.path.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, () => unique('x'));
        const res = await get(`${path}?limit=5&offset=0&limit=6`);
        expect(res.status, `${route.path}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.errors, route.path).to.deep.equal([{ path: '/limit', message: 'is given 2 times; send it once' }]);
      }
      const page = await t.http.post('/v3/memories?page=1&page=2').set('Authorization', auth).send({ filters: { user_id: qb } });
      expect400(page, 'validation_failed');
      expect(page.body.detail).to.match(/\/page is given 2 times/);
    });

    it('a name with a control or bidirectional formatting character is a 400 naming the field, as /openapi.json says, and nothing is created', async () => {
      const keys = async () => (await get('/v1/api-keys?limit=100')).body;
      const before = await keys();
      for (const name of ['ci\u0000key', 'ci\r\nkey', 'ci\u001b]8;;key', 'ci\u009bkey', 'yek-ic\u202E', '\u2067ci\u2069']) {
        const res = await post('/v1/api-keys', { name });
        expect400(res, 'validation_failed');
        expect(res.body.errors, JSON.stringify(name)).to.deep.equal([
          {
            path: '/name',
            message:
              'must not contain control characters (U+0000–U+001F, U+007F–U+009F) or bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)',
          },
        ]);
      }
      expect(await keys()).to.deep.equal(before);
      const fine = await post('/v1/api-keys', { name: 'ключ für CI — 東京 ✓' });
      expect(fine.status, JSON.stringify(fine.body)).to.equal(201);
      expect(fine.body.name).to.equal('ключ für CI — 東京 ✓');

      type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { pattern?: string }> } }> } }>> };
      const doc = (await t.http.get('/openapi.json')).body as Doc;
      const nameOf = (path: string, method: string) => doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema.properties.name;
      for (const [path, method] of [['/v1/api-keys', 'post'], ['/api/v1/webhooks/projects/{projectId}', 'post'], ['/api/v1/webhooks/{id}', 'put']]) {
        const pattern = nameOf(path as string, method as string)?.pattern;
        expect(pattern, `${method} ${path}`).to.be.a('string');
        expect(new RegExp(pattern as string, 'u').test('a\u202Eb'), `${method} ${path}`).to.equal(false);
      }
    });

    it('usage dates are checked as dates', async () => {
      expect400(await get('/v1/usage?to=2024-13-45'), 'validation_failed');
      expect400(await get('/v1/usage?from=2023-02-29'), 'validation_failed');
      expect400(await get('/v1/usage?from=2024-03-02&to=2024-03-01'));
      const leap = await get('/v1/usage?from=2024-02-29&to=2024-03-01');
      expect(leap.status).to.equal(200);
      expect(leap.body).to.include({ from: '2024-02-29', to: '2024-03-01' });
    });

    it('JSON nested deeper than 64 levels is a 400 on records, memory add and chat; 64 levels are fine', async () => {
      const schema = unique('s').toLowerCase();
      expect((await post('/v1/schemas', { name: schema, json_schema: { type: 'object', properties: { note: { type: 'string' } } } })).status).to.equal(201);
      const agent = unique('a');
      expect((await post('/v1/agents', { name: agent })).status).to.equal(201);
      // built as text: serialising 10,000 levels would overflow this process's stack as well
      const nested = (levels: number) => `${'{"a":'.repeat(levels)}"bottom"${'}'.repeat(levels)}`;
      const attempts = [
        () => sendJson('post', `/v1/records/${schema}`, `{"record":{"note":"x"},"user_id":"u","metadata":${nested(10_000)}}`),
        () => sendJson('post', '/v3/memories/add', `{"messages":[{"role":"user","content":"I like tea."}],"user_id":"u","infer":false,"metadata":${nested(10_000)}}`),
        () => sendJson('post', `/v1/agents/${agent}/chat`, `{"messages":[{"role":"user","content":"hello"}],"metadata":${nested(10_000)}}`),
        () => sendJson('post', `/v1/agents/${agent}/chat`, `{"messages":[{"role":"user","content":"hello"}],"metadata":${nested(64)}}`),
        () => sendJson('patch', `/v1/agents/${agent}`, `{"instructions":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
      ];
      for (const attempt of attempts) expect400(await attempt(), 'too_deep');
      const fine = await post(`/v1/records/${schema}`, { record: { note: 'x' }, user_id: 'u', metadata: deep(63) });
      expect(fine.status, JSON.stringify(fine.body)).to.equal(201);
    });

    it('a lone surrogate in a body, a path or a query is a 400; a real emoji is stored and found', async () => {
      expect400(await sendJson('post', '/v3/memories/add', '{"messages":[{"role":"user","content":"hi"}],"user_id":"\\ud800","infer":false}'), 'invalid_unicode');
      expect400(await sendJson('post', '/v3/memories/add', '{"messages":[{"role":"user","content":"a \\udc00 b"}],"user_id":"u","infer":false}'), 'invalid_unicode');
      expect400(await sendJson('post', '/v3/memories/add', '{"messages":[{"role":"user","content":"hi"}],"user_id":"u","infer":false,"metadata":{"\\ud83d":1}}'), 'invalid_unicode');
      expect400(await t.http.delete('/v1/memories?user_id=%ED%A0%80').set('Authorization', auth), 'invalid_unicode');
      expect400(await get('/v1/memories/%ED%A0%80'), 'invalid_unicode');
      expect400(await get('/v1/agents/%C0%80'), 'invalid_unicode');

      const user = `${unique('u')}-\u{1F600}`;
      const added = await post('/v3/memories/add', { messages: [{ role: 'user', content: 'I collect stamps.' }], user_id: user, infer: false });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      const listed = await post('/v3/memories', { filters: { user_id: user } });
      expect(listed.body.results.map((m: { memory: string }) => m.memory)).to.deep.equal(['I collect stamps.']);
      expect(listed.body.results[0].user_id).to.equal(user);
    });

    it("mem0 list pages link to absolute URLs on the request's origin, and null at the ends", async () => {
      const user = unique('pager');
      const messages = ['one', 'two', 'three'].map((content) => ({ role: 'user', content: `Fact ${content}.` }));
      expect((await post('/v3/memories/add', { messages, user_id: user, infer: false })).status).to.equal(200);
      const first = await t.http.post('/v3/memories?page_size=2').set('Authorization', auth).set('Host', 'cairn.example:8443').send({ filters: { user_id: user } });
      expect(first.body).to.include({ count: 3, previous: null, next: 'http://cairn.example:8443/v3/memories?page=2&page_size=2' });
      const second = await t.http.post('/v3/memories?page=2&page_size=2').set('Authorization', auth).set('Host', 'cairn.example:8443').send({ filters: { user_id: user } });
      expect(second.body).to.include({ count: 3, next: null, previous: 'http://cairn.example:8443/v3/memories?page=1&page_size=2' });
      expect(second.body.results).to.have.length(1);
    });

    it('a flow naming a knowledge base, schema or tool that does not exist is a 400 naming the node', async () => {
      const kb = unique('kb');
      expect((await post('/v1/knowledge', { name: kb })).status).to.equal(201);
      const schema = unique('s').toLowerCase();
      expect((await post('/v1/schemas', { name: schema, json_schema: { type: 'object', properties: { note: { type: 'string' } } } })).status).to.equal(201);
      const flow = (nodes: Record<string, unknown>) => ({ start: 'first', nodes: { ...nodes, done: { type: 'respond' } } });

      const missingKb = await post('/v1/agents', { name: unique('a'), flow: flow({ first: { type: 'retrieve', knowledge: [kb, 'no-such-kb'], next: 'done' } }) });
      expect400(missingKb, 'invalid_flow');
      expect(missingKb.body.errors).to.deep.include({ path: '/flow/nodes/first/knowledge/1', message: 'names no knowledge base of this project ("no-such-kb")' });
      const missingSchema = await post('/v1/agents', { name: unique('a'), flow: flow({ first: { type: 'extract', schema: 'no_such_schema', next: 'done' } }) });
      expect400(missingSchema, 'invalid_flow');
      expect(missingSchema.body.errors).to.deep.include({ path: '/flow/nodes/first/schema', message: 'names no record schema of this project ("no_such_schema")' });

      const name = unique('a');
      const ok = await post('/v1/agents', { name, flow: flow({ first: { type: 'retrieve', knowledge: [kb], next: 'pick' }, pick: { type: 'extract', schema, next: 'done' } }) });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      const tool = await post(`/v1/agents/${name}/tools`, { name: 'lookup', http: { url: 'https://shop.example.com/orders', method: 'GET' } });
      expect(tool.status, JSON.stringify(tool.body)).to.equal(201);
      const missingTool = await t.http.patch(`/v1/agents/${name}`).set('Authorization', auth).send({ flow: flow({ first: { type: 'tool', tool: 'lookpu', next: 'done' } }) });
      expect400(missingTool, 'invalid_flow');
      expect(missingTool.body.errors).to.deep.include({ path: '/flow/nodes/first/tool', message: 'names no tool of this agent ("lookpu")' });
      const withTool = await t.http.patch(`/v1/agents/${name}`).set('Authorization', auth).send({ flow: flow({ first: { type: 'tool', tool: 'lookup', next: 'done' } }) });
      expect(withTool.status, JSON.stringify(withTool.body)).to.equal(200);
      // the rejected flows left nothing behind
      expect((await get(`/v1/agents/${name}`)).body.flow.nodes.first).to.deep.equal({ type: 'tool', tool: 'lookup', next: 'done' });
    });

    it('/openapi.json lists 401 on every authenticated operation and 400 wherever input is validated', async () => {
      const doc = (await t.http.get('/openapi.json')).body as { paths: Record<string, Record<string, { security?: unknown[]; parameters?: Array<{ in: string }>; requestBody?: unknown; responses: Record<string, unknown> }>> };
      const missing: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          if ((op.security ?? []).length > 0 && !op.responses['401']) missing.push(`401 ${method} ${path}`);
          const validated = op.requestBody !== undefined || (op.parameters ?? []).some((p) => p.in === 'query');
          if (validated && !op.responses['400']) missing.push(`400 ${method} ${path}`);
        }
      }
      expect(missing).to.deep.equal([]);
    });
  });
});
