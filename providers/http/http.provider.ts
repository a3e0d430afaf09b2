import type { Provider, ProviderConfig, ProviderModels, Unusable } from '../provider.js';
import { HttpReranker } from './http.reranker.js';

/** Models served behind an address of the operator's in a common wire shape: rerankers at RERANK_BASE_URL. */
export class HttpProvider implements Provider {
  readonly models: ProviderModels;

  constructor(private readonly config: ProviderConfig) {
    this.models = {
      rerank: (model) => new HttpReranker(model, config.rerankBaseUrl as string, config.rerankApiKey, config.rerankTimeoutMs),
    };
  }

  unusable(): Unusable | null {
    return this.config.rerankBaseUrl === null ? { needs: 'RERANK_BASE_URL' } : null;
  }
}
