import type { Logger } from '../../lib/logger.js';
import { BatchingEmbedder } from '../batching.embedder.js';
import type { Provider, ProviderConfig, ProviderModels, ProvidersOptions, Unusable } from '../provider.js';
import { CallLimiter, clientOptions } from '../remote-calls.js';
import { OpenAIApi } from './client.js';
import { OpenAIEmbedder } from './openai.embedder.js';
import { OpenAIExtractor } from './openai.extractor.js';
import { OpenAILanguageModel } from './openai.model.js';

/** The models of an OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY): chat and extraction on one client, embeddings on another. */
export class OpenAIProvider implements Provider {
  readonly models: ProviderModels;
  private client: OpenAIApi | null = null;
  private embedClient: OpenAIApi | null = null;

  constructor(
    private readonly config: ProviderConfig,
    private readonly tuning: ProvidersOptions,
    private readonly log?: Logger,
  ) {
    const { concurrency, batch } = config.openaiEmbed;
    this.models = {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embed: (model) => new BatchingEmbedder(new OpenAIEmbedder(model, this.embedApi(), batch), concurrency),
      extract: (model) => new OpenAIExtractor(model, this.api()),
      chat: (model) => new OpenAILanguageModel(model, this.api()),
    };
  }

  unusable(): Unusable | null {
    return this.config.openaiBaseUrl === null ? { needs: 'OPENAI_BASE_URL (and OPENAI_API_KEY if the server asks for one)' } : null;
  }

  /** Built on first use, once `unusable` said OPENAI_BASE_URL is set. */
  private api(): OpenAIApi {
    this.client ??= new OpenAIApi({ ...clientOptions(this.config.openaiApiKey, this.config.openaiBaseUrl, this.tuning), baseUrl: this.config.openaiBaseUrl as string });
    return this.client;
  }

  /**
   * A client of its own for every embedding model, kept within OPENAI_EMBED_CONCURRENCY requests
   * at once and slowed down by the server's rate limits (`CallLimiter`); chat is not held up by it.
   */
  private embedApi(): OpenAIApi {
    this.embedClient ??= new OpenAIApi({
      ...clientOptions(this.config.openaiApiKey, this.config.openaiBaseUrl, this.tuning),
      baseUrl: this.config.openaiBaseUrl as string,
      fetch: new CallLimiter('OpenAI embeddings', this.config.openaiEmbed.concurrency, this.log).fetch(),
    });
    return this.embedClient;
  }
}
