import type { Config } from '../../lib/config.js';
import { badRequest } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { CohereExtractor } from './cohere.extractor.js';
import type { Extractor } from './extractor.js';
import { LocalExtractor } from './local.extractor.js';
import { OpenAIExtractor } from './openai.extractor.js';

/** The model extraction uses when none is named: the deterministic offline one. */
export const DEFAULT_EXTRACT_MODEL = 'local';

/** The providers a language model name may start with. */
export const EXTRACT_PROVIDERS = ['local', 'cohere', 'openai'] as const;
/** One of `EXTRACT_PROVIDERS`. */
export type ExtractProvider = (typeof EXTRACT_PROVIDERS)[number];

const NAMING = 'Language models are named local, cohere/<model> or openai/<model> (e.g. local, cohere/command-a-03-2025, openai/gpt-4o-mini).';

/** Tuning for the provider clients; the defaults suit production. */
export interface ExtractorsOptions {
  /** Retries of a transient provider answer (408/429/5xx) within one call; default 2. */
  maxRetries?: number;
  /** Per-call timeout of a provider request; default 60 s. */
  timeoutMs?: number;
}

/**
 * The canonical form of a language model name: `local` (any case), `cohere/<model>` or
 * `openai/<model>` with the provider lower-cased. Throws 400 `unknown_model` for anything else,
 * saying how names look.
 */
export function normalizeExtractModelName(name: string): string {
  const trimmed = name.trim();
  const slash = trimmed.indexOf('/');
  const provider = (slash === -1 ? trimmed : trimmed.slice(0, slash)).toLowerCase();
  const model = slash === -1 ? '' : trimmed.slice(slash + 1);
  if (!(EXTRACT_PROVIDERS as readonly string[]).includes(provider)) {
    throw badRequest('unknown_model', `"${name}" is not a known language model. ${NAMING}`);
  }
  if (provider === 'local') {
    if (slash !== -1) throw badRequest('unknown_model', `There is no local language model "${model}"; the local model is named just local.`);
    return 'local';
  }
  if (model === '' || /\s/.test(model)) {
    throw badRequest('unknown_model', `"${name}" does not name a ${provider} model. ${NAMING}`);
  }
  return `${provider}/${model}`;
}

/**
 * The language models this server can extract with, built from its configuration. `get` hands
 * out one shared extractor per model; `validate` says whether a name is usable without calling
 * anyone.
 */
export class Extractors {
  private readonly cache = new Map<string, Extractor>();

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly options: ExtractorsOptions = {},
  ) {}

  /**
   * The canonical name of `model` if this server can extract with it. Throws 400
   * `unknown_model` for a malformed name or unknown provider, and 400 `model_unavailable` when
   * the provider is not configured here (no COHERE_API_KEY, no OPENAI_BASE_URL).
   */
  validate(model: string): string {
    const name = normalizeExtractModelName(model);
    if (name.startsWith('cohere/') && this.config.cohereApiKey === null) {
      throw badRequest(
        'model_unavailable',
        `${name} needs COHERE_API_KEY, which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_EXTRACT_MODEL}).`,
      );
    }
    if (name.startsWith('openai/') && this.config.openaiBaseUrl === null) {
      throw badRequest(
        'model_unavailable',
        `${name} needs OPENAI_BASE_URL (and OPENAI_API_KEY if the server asks for one), which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_EXTRACT_MODEL}).`,
      );
    }
    return name;
  }

  /** The extractor for `model` (any accepted spelling); throws like `validate`. */
  get(model: string = DEFAULT_EXTRACT_MODEL): Extractor {
    const name = this.validate(model);
    let extractor = this.cache.get(name);
    if (extractor === undefined) {
      extractor = this.create(name);
      this.cache.set(name, extractor);
      this.logger.debug({ model: name }, 'extraction model ready');
    }
    return extractor;
  }

  private create(name: string): Extractor {
    const slash = name.indexOf('/');
    const provider = (slash === -1 ? name : name.slice(0, slash)) as ExtractProvider;
    const modelName = name.slice(slash + 1);
    switch (provider) {
      case 'local':
        return new LocalExtractor();
      case 'cohere':
        return new CohereExtractor(modelName, {
          apiKey: this.config.cohereApiKey as string,
          baseUrl: this.config.cohereBaseUrl,
          ...this.options,
        });
      case 'openai':
        return new OpenAIExtractor(modelName, {
          baseUrl: this.config.openaiBaseUrl as string,
          apiKey: this.config.openaiApiKey,
          ...this.options,
        });
    }
  }
}
