import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../lib/errors.js';

// Stand-ins for model providers (Cohere, OpenAI-compatible servers) in tests: a local HTTP server
// that records what it was sent and answers in the provider's wire format.

/** The AppError a promise rejects with (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  return expect.fail('expected the promise to reject');
}

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface Answer {
  status: number;
  body: unknown;
}

export interface FakeProvider {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A local HTTP server standing in for a provider: records each request and answers with `answer`. */
export async function fakeProvider(answer: (request: Received, count: number) => Answer): Promise<FakeProvider> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const request: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} };
      received.push(request);
      const { status, body } = answer(request, received.length);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
