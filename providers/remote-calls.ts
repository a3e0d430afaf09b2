import { AppError, badRequest, unavailable } from '../lib/errors.js';
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
    const retryAfter = Number(retryAfterHeader);
    return unavailable(`${call.where} is unavailable (${status}: ${reason}); retry later.`, Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
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
