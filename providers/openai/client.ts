import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { AppError, unavailable } from '../../lib/errors.js';
import { failureByStatus, reasonOf, unreachable, type CallContext, type ClientOptions } from '../remote-calls.js';

/** A client of an OpenAI-compatible server (OPENAI_BASE_URL). */
export function openaiClient(options: ClientOptions & { baseUrl: string }): OpenAI {
  return new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey ?? 'unused', maxRetries: options.maxRetries, timeout: options.timeoutMs });
}

/** An error of the openai SDK as Cairn's error: unreachable or timed out → 503, else by status. */
export function openaiFailure(err: unknown, call: CallContext): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof APIConnectionTimeoutError) return unavailable(`${call.where} did not answer within ${call.timeoutMs / 1000} s; retry later.`);
  if (err instanceof APIConnectionError || !(err instanceof APIError) || err.status === undefined) return unreachable(call, err);
  return failureByStatus(call, err.status, reasonOf(err.error) ?? err.message, err.headers?.get('retry-after'), 'OPENAI_API_KEY', [401, 403]);
}
