import type { Logger } from '../../lib/logger.js';
import { BatchingEmbedder } from '../batching.embedder.js';
import type { Provider, ProviderConfig, ProviderModels, ProvidersOptions, Unusable } from '../provider.js';
import { CallLimiter, clientOptions } from '../remote-calls.js';
import { CohereApi } from './client.js';
import { CohereEmbedder } from './cohere.embedder.js';
import { CohereExtractor } from './cohere.extractor.js';
import { CohereLanguageModel } from './cohere.model.js';
import { CohereReranker } from './cohere.reranker.js';

/** Per-call timeout of a rerank request unless the registry's tuning sets one. */
const RERANK_TIMEOUT_MS = 30_000;

/** Cohere's models (COHERE_API_KEY, COHERE_BASE_URL). */
export class CohereProvider implements Provider {
  readonly models: ProviderModels;
  private client: CohereApi | null = null;
  private embedClient: CohereApi | null = null;

  constructor(
    private readonly config: ProviderConfig,
    private readonly tuning: ProvidersOptions,
    private readonly log?: Logger,
  ) {
    const { concurrency, batch } = config.cohereEmbed;
    this.models = {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embed: (model) => new BatchingEmbedder(new CohereEmbedder(model, this.embedApi(), batch), concurrency),
      extract: (model) => new CohereExtractor(model, this.api()),
      chat: (model) => new CohereLanguageModel(model, this.api()),
      // a client of its own: a person's search waits on it, so it gives up sooner
      rerank: (model) => new CohereReranker(model, new CohereApi(clientOptions(config.cohereApiKey, config.cohereBaseUrl, tuning, RERANK_TIMEOUT_MS))),
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

  /**
   * A client of its own for every embedding model, kept within COHERE_EMBED_CONCURRENCY requests
   * at once and slowed down by Cohere's rate limits (`CallLimiter`); chat is not held up by it.
   */
  private embedApi(): CohereApi {
    this.embedClient ??= new CohereApi({
      ...clientOptions(this.config.cohereApiKey, this.config.cohereBaseUrl, this.tuning),
      fetch: new CallLimiter('Cohere embeddings', this.config.cohereEmbed.concurrency, this.log).fetch(),
    });
    return this.embedClient;
  }
}
