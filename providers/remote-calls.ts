import { AppError, badRequest, unavailable } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { ProvidersOptions } from './provider.js';

/** How a provider client is reached and how patient it is; the same for every model of a provider. */
export interface ClientOptions {
  /** COHERE_API_KEY / OPENAI_API_KEY; an OpenAI-compatible server that needs none gets `unused`. */
  apiKey: string | null;
  /** COHERE_BASE_URL (null: the SDK's default) / OPENAI_BASE_URL. */
  baseUrl: string | null;
  /** Retries of a transient answer (408/429/5xx) inside one call, with the SDK's backoff. */
  maxRetries: number;
  timeoutMs: number;
  /** The SDK's fetch, e.g. a `CallLimiter`'s; default: the global one. */
  fetch?: typeof fetch;
}

/** How one model call describes itself in errors, which reach API clients (no URLs, no keys). */
export interface CallContext {
  /** e.g. "The embeddings server (OPENAI_BASE_URL)" or "Cohere". */
  where: string;
  model: string;
  timeoutMs: number;
  /** Code and wording of a 4xx that blames the input, e.g. `embed_input_rejected`, "the input". */
  rejectedCode: string;
  rejectedWhat: string;
}

/** A provider's `{ message }` error body, shortened; null when it has none. */
export function reasonOf(body: unknown): string | null {
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message.slice(0, 500);
  }
  return null;
}

/**
 * Maps a failed provider call by HTTP status: 408/409/429/5xx → 503 (with the provider's
 * Retry-After); a rejected key → 503 for an operator to fix; any other 4xx → 400.
 */
export function failureByStatus(call: CallContext, status: number, reason: string, retryAfterHeader: string | null | undefined, keyVariable: string, keyStatuses: number[]): AppError {
  if (keyStatuses.includes(status)) {
    return unavailable(`${call.where} rejected ${keyVariable} (${status}: ${reason}); an operator must fix it.`, 60);
  }
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    const retryAfter = retryAfterMs(retryAfterHeader);
    return unavailable(`${call.where} is unavailable (${status}: ${reason}); retry later.`, retryAfter !== null && retryAfter > 0 ? Math.ceil(retryAfter / 1000) : undefined);
  }
  return badRequest(call.rejectedCode, `${call.where} rejected ${call.rejectedWhat} for model ${call.model} (${status}: ${reason}).`);
}

/** A call that never got an HTTP status: the provider could not be reached. */
export function unreachable(call: CallContext, err: unknown): AppError {
  return unavailable(`${call.where} could not be reached (${err instanceof Error ? err.message : String(err)}); retry later.`);
}

/** A remote provider's client options: its address and key, with the registry's tuning over the defaults. */
export function clientOptions(apiKey: string | null, baseUrl: string | null, tuning: ProvidersOptions, timeoutMs = 60_000): ClientOptions {
  return { apiKey, baseUrl, maxRetries: tuning.maxRetries ?? 2, timeoutMs: tuning.timeoutMs ?? timeoutMs };
}

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | null {
  if (header === null || header === undefined || header.trim() === '') return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The longest a Retry-After holds requests back (the SDKs cap their own waits at a minute too). */
const MAX_PAUSE_MS = 60_000;

/**
 * Keeps the HTTP requests of one provider client within what the provider takes: at most
 * `concurrency` in flight. A rate-limit answer (429, or 503 with Retry-After) halves the limit —
 * once per round: refusals of requests sent before the cut say nothing new — and holds every
 * request back until its Retry-After has passed (at most a minute); each run of `limit` successes
 * raises the limit by one again, up to `concurrency`. The SDK gets `fetch` as its fetch, so its
 * own retries wait their turn too. A request is in flight until its response headers arrive.
 */
export class CallLimiter {
  private limit: number;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private resumeAt = 0;
  private wake: NodeJS.Timeout | null = null;
  private sent = 0;
  private cutAfter = 0;
  private successes = 0;

  constructor(
    /** e.g. "OpenAI embeddings", for the log. */
    private readonly name: string,
    readonly concurrency: number,
    private readonly log?: Logger,
  ) {
    this.limit = concurrency;
  }

  /** Requests allowed in flight now. */
  get current(): number {
    return this.limit;
  }

  /** `inner` (default: the global fetch) kept within the limits. */
  fetch(inner: typeof fetch = globalThis.fetch): typeof fetch {
    return async (input, init) => {
      await this.acquire(init?.signal ?? undefined);
      const ticket = ++this.sent;
      try {
        const response = await inner(input, init);
        this.observe(ticket, response.status, response.headers.get('retry-after'));
        return response;
      } finally {
        this.active -= 1;
        this.pump();
      }
    };
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiting.indexOf(grant);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.active < this.limit) {
      const pause = this.resumeAt - Date.now();
      if (pause > 0) {
        this.wake ??= setTimeout(() => {
          this.wake = null;
          this.pump();
        }, pause);
        return;
      }
      this.active += 1;
      (this.waiting.shift() as () => void)();
    }
  }

  private observe(ticket: number, status: number, retryAfter: string | null): void {
    const pause = retryAfterMs(retryAfter);
    if (status !== 429 && !(status === 503 && pause !== null)) {
      if (status < 300 && this.limit < this.concurrency && ++this.successes >= this.limit) {
        this.limit += 1;
        this.successes = 0;
      }
      return;
    }
    if (pause !== null) this.resumeAt = Math.max(this.resumeAt, Date.now() + Math.min(pause, MAX_PAUSE_MS));
    if (ticket <= this.cutAfter) return;
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.cutAfter = this.sent;
    this.successes = 0;
    this.log?.warn({ provider: this.name, status, retryAfterMs: pause, concurrency: this.limit }, 'provider rate limit: fewer requests at once');
  }
}
