import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// An OpenAI-compatible embeddings server on 127.0.0.1 for tests and benchmarks: `POST
// /v1/embeddings` answers like OpenAI, after a delay, with a vector derived from each text (the
// same text always gets the same vector), and may refuse with a rate limit for a while. It records
// every call, so a test can check what the client sent and when.

/** How the server answers. */
export interface EmbeddingServerOptions {
  /** Wait before each answer, in ms (default 0). */
  delayMs?: number;
  /** Vector length (default 8). */
  dimension?: number;
  /**
   * Refuses every call received in the first `forMs` after the first call with `status` (default
   * 429) and `Retry-After: retryAfterSeconds`, as a provider over its rate limit does.
   */
  rateLimit?: { forMs: number; retryAfterSeconds: number; status?: 429 | 503 };
}

/** One call as the server saw it. */
export interface EmbeddingCall {
  /** When its body had arrived and when it was answered (ms since the epoch). */
  receivedAt: number;
  answeredAt: number;
  /** Texts in the call. */
  size: number;
  status: number;
  /** The Retry-After it was answered with (s), if any. */
  retryAfterSeconds: number | null;
  /** Calls in flight when it arrived, itself included. */
  inFlight: number;
}

export interface EmbeddingServer {
  /** The API root, `http://127.0.0.1:<port>/v1`: what OPENAI_BASE_URL is set to. */
  url: string;
  calls: EmbeddingCall[];
  /** Most calls in flight at once so far. */
  maxInFlight(): number;
  /** Texts embedded (answered 200) so far. */
  embedded(): number;
  close(): Promise<void>;
}

/** A unit vector of `dimension` floats drawn from SHA-256 digests of the text. */
export function textVector(text: string, dimension: number): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dimension; block++) {
    for (const byte of createHash('sha256').update(`${block}:${text}`).digest()) raw.push(byte - 127.5);
  }
  raw.length = dimension;
  const norm = Math.hypot(...raw);
  return raw.map((x) => x / norm);
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startEmbeddingServer(options: EmbeddingServerOptions = {}): Promise<EmbeddingServer> {
  const { delayMs = 0, dimension = 8, rateLimit } = options;
  const calls: EmbeddingCall[] = [];
  let inFlight = 0;
  let firstAt: number | null = null;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const receivedAt = Date.now();
      firstAt ??= receivedAt;
      inFlight += 1;
      const arrivedWith = inFlight;
      let size = 0;
      const answer = (status: number, body: unknown, retryAfterSeconds: number | null = null): void => {
        inFlight -= 1;
        calls.push({ receivedAt, answeredAt: Date.now(), size, status, retryAfterSeconds, inFlight: arrivedWith });
        res.writeHead(status, { 'content-type': 'application/json', ...(retryAfterSeconds !== null ? { 'retry-after': String(retryAfterSeconds) } : {}) });
        res.end(JSON.stringify(body));
      };
      const refuse = (message: string, status = 400): void => answer(status, { error: { message, type: 'invalid_request_error' } });
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return refuse(`no route ${req.method ?? ''} ${req.url ?? ''}`, 404);
      let body: { input?: unknown; model?: unknown };
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        return refuse('the body is not JSON');
      }
      const { input, model } = body;
      if (!Array.isArray(input) || !input.every((t) => typeof t === 'string')) return refuse('input must be an array of strings');
      size = input.length;
      if (rateLimit !== undefined && receivedAt - firstAt < rateLimit.forMs) {
        const refusal = { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } };
        return answer(rateLimit.status ?? 429, refusal, rateLimit.retryAfterSeconds);
      }
      setTimeout(() => {
        const data = (input as string[]).map((text, index) => ({ object: 'embedding', index, embedding: textVector(text, dimension) }));
        answer(200, { object: 'list', data, model, usage: { prompt_tokens: size, total_tokens: size } });
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    maxInFlight: () => Math.max(0, ...calls.map((c) => c.inFlight)),
    embedded: () => calls.filter((c) => c.status === 200).reduce((sum, c) => sum + c.size, 0),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
