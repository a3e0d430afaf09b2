import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { AppError, unavailable } from '../../lib/errors.js';
import { failureByStatus, reasonOf, unreachable, type CallContext, type ClientOptions } from '../remote-calls.js';

/**
 * An OpenAI-compatible server (OPENAI_BASE_URL) as this server reaches it: one client, shared by
 * the models built on it, and how its failures read.
 */
export class OpenAIApi {
  readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions & { baseUrl: string }) {
    this.client = new OpenAI({
      baseURL: options.baseUrl,
      apiKey: options.apiKey ?? 'unused',
      maxRetries: options.maxRetries,
      timeout: options.timeoutMs,
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    });
    this.timeoutMs = options.timeoutMs;
  }

  /** A failed call of `call.model` as Cairn's error (`openaiFailure`). */
  failure(err: unknown, call: Omit<CallContext, 'timeoutMs'>): AppError {
    return openaiFailure(err, { ...call, timeoutMs: this.timeoutMs });
  }
}

/** An error of the openai SDK as Cairn's error: unreachable or timed out → 503, else by status. */
export function openaiFailure(err: unknown, call: CallContext): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof APIConnectionTimeoutError) return unavailable(`${call.where} did not answer within ${call.timeoutMs / 1000} s; retry later.`);
  if (err instanceof APIConnectionError || !(err instanceof APIError) || err.status === undefined) return unreachable(call, err);
  return failureByStatus(call, err.status, reasonOf(err.error) ?? err.message, err.headers?.get('retry-after'), 'OPENAI_API_KEY', [401, 403]);
}
