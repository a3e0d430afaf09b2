import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { freePort, isProduction, profileEnv, spawnCairn, unique, type CairnProcess } from '../helpers.js';

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

    it('a client that hangs up mid-upload does not take the server down', async () => {
      const body = `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="a.txt"${CRLF}${CRLF}${'x'.repeat(10_000)}`;
      await sendAndHangUp(port, path, multipart('zz'), body, 1_000_000);
      await sendAndHangUp(port, path, multipart('zz'), `--zz${CRLF}Content-Disp`, 500);
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

    it('an oversized file that is also cut off is a 413 or a hang-up, never a crash', async () => {
      const head = `--zz${CRLF}Content-Disposition: form-data; name="file"; filename="big.txt"${CRLF}${CRLF}`;
      await sendAndHangUp(port, path, multipart('zz'), head + 'a'.repeat(11 * 1024 * 1024), 20 * 1024 * 1024);
    });
  });
});
