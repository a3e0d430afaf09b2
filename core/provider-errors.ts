import { CohereError, CohereTimeoutError } from 'cohere-ai';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { AppError, badRequest, unavailable } from '../lib/errors.js';

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
function reasonOf(body: unknown): string | null {
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message.slice(0, 500);
  }
  return null;
}

/**
 * Maps a failed provider call by HTTP status: unreachable, timeout, 408/409/429/5xx → 503 (with the
 * provider's Retry-After); a rejected key → 503 for an operator to fix; any other 4xx → 400.
 */
function byStatus(call: CallContext, status: number, reason: string, retryAfterHeader: string | null | undefined, keyVariable: string, keyStatuses: number[]): AppError {
  if (keyStatuses.includes(status)) {
    return unavailable(`${call.where} rejected ${keyVariable} (${status}: ${reason}); an operator must fix it.`, 60);
  }
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    const retryAfter = Number(retryAfterHeader);
    return unavailable(`${call.where} is unavailable (${status}: ${reason}); retry later.`, Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
  }
  return badRequest(call.rejectedCode, `${call.where} rejected ${call.rejectedWhat} for model ${call.model} (${status}: ${reason}).`);
}

/** An error of the openai SDK as Cairn's error. */
export function openaiFailure(err: unknown, call: CallContext): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof APIConnectionTimeoutError) return unavailable(`${call.where} did not answer within ${call.timeoutMs / 1000} s; retry later.`);
  if (err instanceof APIConnectionError || !(err instanceof APIError) || err.status === undefined) {
    return unavailable(`${call.where} could not be reached (${err instanceof Error ? err.message : String(err)}); retry later.`);
  }
  return byStatus(call, err.status, reasonOf(err.error) ?? err.message, err.headers?.get('retry-after'), 'OPENAI_API_KEY', [401, 403]);
}

/** An error of the cohere-ai SDK as Cairn's error. */
export function cohereFailure(err: unknown, call: CallContext): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof CohereTimeoutError) return unavailable(`${call.where} did not answer within ${call.timeoutMs / 1000} s (model ${call.model}); retry later.`);
  if (!(err instanceof CohereError) || err.statusCode === undefined) {
    return unavailable(`${call.where} could not be reached (${err instanceof Error ? err.message : String(err)}); retry later.`);
  }
  return byStatus(call, err.statusCode, reasonOf(err.body) ?? err.message, err.rawResponse?.headers.get('retry-after'), 'COHERE_API_KEY', [401, 403, 498]);
}
