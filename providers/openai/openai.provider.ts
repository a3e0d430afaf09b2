import { BatchingEmbedder } from '../batching.embedder.js';
import type { Provider, ProviderConfig, ProviderModels, ProvidersOptions, Unusable } from '../provider.js';
import { clientOptions, type ClientOptions } from '../remote-calls.js';
import { OpenAIEmbedder } from './openai.embedder.js';

/** The models of an OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY). */
export class OpenAIProvider implements Provider {
  readonly models: ProviderModels;

  constructor(
    private readonly config: ProviderConfig,
    tuning: ProvidersOptions,
  ) {
    // only used once `unusable` said OPENAI_BASE_URL is set
    const client = (): ClientOptions & { baseUrl: string } => ({ ...clientOptions(config.openaiApiKey, config.openaiBaseUrl, tuning), baseUrl: config.openaiBaseUrl as string });
    this.models = {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embed: (model) => new BatchingEmbedder(new OpenAIEmbedder(model, client()), 4),
    };
  }

  unusable(): Unusable | null {
    return this.config.openaiBaseUrl === null ? { needs: 'OPENAI_BASE_URL (and OPENAI_API_KEY if the server asks for one)' } : null;
  }
}
