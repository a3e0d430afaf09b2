import { CohereClientV2, CohereError, CohereTimeoutError } from 'cohere-ai';
import { AppError, unavailable } from '../../lib/errors.js';
import { failureByStatus, reasonOf, unreachable, type CallContext, type ClientOptions } from '../remote-calls.js';

/** Cohere's v2 API as this server reaches it: one client, shared by the models built on it, and how its failures read. */
export class CohereApi {
  readonly client: CohereClientV2;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions) {
    this.client = new CohereClientV2({
      token: options.apiKey ?? '',
      ...(options.baseUrl !== null ? { baseUrl: options.baseUrl } : {}),
      maxRetries: options.maxRetries,
      timeoutInSeconds: options.timeoutMs / 1000,
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    });
    this.timeoutMs = options.timeoutMs;
  }

  /** A failed call of `call.model` as Cairn's error (`cohereFailure`). */
  failure(err: unknown, call: Omit<CallContext, 'timeoutMs'>): AppError {
    return cohereFailure(err, { ...call, timeoutMs: this.timeoutMs });
  }
}

/** An error of the cohere-ai SDK as Cairn's error: unreachable or timed out → 503, else by status. */
export function cohereFailure(err: unknown, call: CallContext): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof CohereTimeoutError) return unavailable(`${call.where} did not answer within ${call.timeoutMs / 1000} s (model ${call.model}); retry later.`);
  if (!(err instanceof CohereError) || err.statusCode === undefined) return unreachable(call, err);
  return failureByStatus(call, err.statusCode, reasonOf(err.body) ?? err.message, err.rawResponse?.headers.get('retry-after'), 'COHERE_API_KEY', [401, 403, 498]);
}
