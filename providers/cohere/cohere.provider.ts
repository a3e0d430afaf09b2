import { BatchingEmbedder } from '../batching.embedder.js';
import type { Provider, ProviderConfig, ProviderModels, ProvidersOptions, Unusable } from '../provider.js';
import { clientOptions } from '../remote-calls.js';
import { CohereEmbedder } from './cohere.embedder.js';

/** Cohere's models (COHERE_API_KEY, COHERE_BASE_URL). */
export class CohereProvider implements Provider {
  readonly models: ProviderModels;

  constructor(
    private readonly config: ProviderConfig,
    tuning: ProvidersOptions,
  ) {
    const client = clientOptions(config.cohereApiKey, config.cohereBaseUrl, tuning);
    this.models = {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embed: (model) => new BatchingEmbedder(new CohereEmbedder(model, client), 4),
    };
  }

  unusable(): Unusable | null {
    return this.config.cohereApiKey === null ? { needs: 'COHERE_API_KEY' } : null;
  }
}
