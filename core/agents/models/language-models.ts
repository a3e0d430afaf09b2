import type { Config } from '../../../lib/config.js';
import { badRequest } from '../../../lib/errors.js';
import type { Logger } from '../../../lib/logger.js';
import { modelName } from '../../../providers/registry.js';
import type { ProviderName } from '../../../providers/provider.js';
import { CohereApi } from '../../../providers/cohere/client.js';
import { OpenAIApi } from '../../../providers/openai/client.js';
import { clientOptions } from '../../../providers/remote-calls.js';
import type { LanguageModel } from '../language-model.js';
import { CohereLanguageModel } from './cohere.model.js';
import { LocalLanguageModel } from './local.model.js';
import { OpenAILanguageModel } from './openai.model.js';

/** The chat model an agent uses when none is named: the deterministic offline one. */
export const DEFAULT_LANGUAGE_MODEL = 'local';

/** Tuning for the provider clients; the defaults suit production. */
export interface LanguageModelsOptions {
  /** Retries of a transient provider answer (408/429/5xx) within one call; default 2. */
  maxRetries?: number;
  /** Per-call timeout of a provider request; default 60 s. */
  timeoutMs?: number;
}

/**
 * The chat models this server can run agents with, built from its configuration. Names are
 * those of extraction (`local`, `cohere/<model>`, `openai/<model>`; `modelName`).
 * `get` hands out one shared model per name; `validate` says whether a name is usable without
 * calling anyone.
 */
export class LanguageModels {
  private readonly cache = new Map<string, LanguageModel>();

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly options: LanguageModelsOptions = {},
  ) {}

  /**
   * The canonical name of `model` if this server can chat with it. Throws 400 `unknown_model`
   * for a malformed name or unknown provider, and 400 `model_unavailable` when the provider is
   * not configured here (no COHERE_API_KEY, no OPENAI_BASE_URL).
   */
  validate(model: string): string {
    const name = modelName('extract', model);
    if (name.startsWith('cohere/') && this.config.cohereApiKey === null) {
      throw badRequest(
        'model_unavailable',
        `${name} needs COHERE_API_KEY, which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_LANGUAGE_MODEL}).`,
      );
    }
    if (name.startsWith('openai/') && this.config.openaiBaseUrl === null) {
      throw badRequest(
        'model_unavailable',
        `${name} needs OPENAI_BASE_URL (and OPENAI_API_KEY if the server asks for one), which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_LANGUAGE_MODEL}).`,
      );
    }
    return name;
  }

  /** The chat model for `model` (any accepted spelling); throws like `validate`. */
  get(model: string = DEFAULT_LANGUAGE_MODEL): LanguageModel {
    const name = this.validate(model);
    let languageModel = this.cache.get(name);
    if (languageModel === undefined) {
      languageModel = this.create(name);
      this.cache.set(name, languageModel);
      this.logger.debug({ model: name }, 'chat model ready');
    }
    return languageModel;
  }

  private create(name: string): LanguageModel {
    const slash = name.indexOf('/');
    const provider = (slash === -1 ? name : name.slice(0, slash)) as ProviderName;
    const modelName = name.slice(slash + 1);
    switch (provider) {
      case 'local':
        return new LocalLanguageModel();
      case 'cohere':
        return new CohereLanguageModel(modelName, new CohereApi(clientOptions(this.config.cohereApiKey, this.config.cohereBaseUrl, this.options)));
      case 'openai':
        return new OpenAILanguageModel(modelName, new OpenAIApi({ ...clientOptions(this.config.openaiApiKey, this.config.openaiBaseUrl, this.options), baseUrl: this.config.openaiBaseUrl as string }));
    }
  }
}
