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
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
}

/**
 * OpenAI's chat completion response (https://platform.openai.com/docs/api-reference/chat/object)
 * carrying `message` (content or tool calls) from the assistant.
 */
export function openaiChatAnswer(
  message: Record<string, unknown>,
  { finishReason = 'stop', model = 'gpt-4o-mini', usage = { input: 150, output: 30 } }: { finishReason?: string; model?: string; usage?: { input: number; output: number } } = {},
): Answer {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_767_225_600,
      model,
      choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason: finishReason }],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
    },
  };
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
      const { status, body, headers } = answer(request, received.length);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
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

/** One server-sent event: `data` goes out as JSON unless it is a string (e.g. `[DONE]`). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** A streamed answer: `text/event-stream`, one event at a time. */
export interface StreamedAnswer {
  status: number;
  events: SseEvent[];
}

/**
 * Like `fakeProvider`, but an answer may also be a stream of server-sent events (what Cohere's
 * and OpenAI's chat endpoints send with `stream: true`); a plain `Answer` is sent as JSON.
 */
export async function fakeStreamingProvider(answer: (request: Received, count: number) => Answer | StreamedAnswer): Promise<FakeProvider> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const request: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} };
      received.push(request);
      const reply = answer(request, received.length);
      if (!('events' in reply)) {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const { event, data } of reply.events) {
        res.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      }
      res.end();
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
