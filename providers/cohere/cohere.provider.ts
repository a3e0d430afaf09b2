import { BatchingEmbedder } from '../batching.embedder.js';
import type { Provider, ProviderConfig, ProviderModels, ProvidersOptions, Unusable } from '../provider.js';
import { clientOptions } from '../remote-calls.js';
import { CohereApi } from './client.js';
import { CohereEmbedder } from './cohere.embedder.js';
import { CohereExtractor } from './cohere.extractor.js';
import { CohereLanguageModel } from './cohere.model.js';

/** Cohere's models (COHERE_API_KEY, COHERE_BASE_URL), all on one client. */
export class CohereProvider implements Provider {
  readonly models: ProviderModels;
  private client: CohereApi | null = null;

  constructor(
    private readonly config: ProviderConfig,
    private readonly tuning: ProvidersOptions,
  ) {
    this.models = {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embed: (model) => new BatchingEmbedder(new CohereEmbedder(model, this.api()), 4),
      extract: (model) => new CohereExtractor(model, this.api()),
      chat: (model) => new CohereLanguageModel(model, this.api()),
    };
  }

  unusable(): Unusable | null {
    return this.config.cohereApiKey === null ? { needs: 'COHERE_API_KEY' } : null;
  }

  /** Built on first use, once `unusable` let a model through. */
  private api(): CohereApi {
    this.client ??= new CohereApi(clientOptions(this.config.cohereApiKey, this.config.cohereBaseUrl, this.tuning));
    return this.client;
  }
}
