import { CohereClientV2 } from 'cohere-ai';
import OpenAI from 'openai';

/** How a provider client is reached and how patient it is; shared by embedders, extractors and the reranker. */
export interface ClientOptions {
  /** COHERE_API_KEY / OPENAI_API_KEY; an OpenAI-compatible server that needs none gets `unused`. */
  apiKey: string | null;
  /** COHERE_BASE_URL (null: the SDK's default) / OPENAI_BASE_URL. */
  baseUrl: string | null;
  /** Retries of a transient answer (408/429/5xx) inside one call, with the SDK's backoff. */
  maxRetries: number;
  timeoutMs: number;
}

/** A Cohere v2 client. */
export function cohereClient(options: ClientOptions): CohereClientV2 {
  return new CohereClientV2({
    token: options.apiKey ?? '',
    ...(options.baseUrl !== null ? { baseUrl: options.baseUrl } : {}),
    maxRetries: options.maxRetries,
    timeoutInSeconds: options.timeoutMs / 1000,
  });
}

/** A client of an OpenAI-compatible server. */
export function openaiClient(options: ClientOptions & { baseUrl: string }): OpenAI {
  return new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey ?? 'unused', maxRetries: options.maxRetries, timeout: options.timeoutMs });
}
