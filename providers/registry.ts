import { badRequest } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { CohereProvider } from './cohere/cohere.provider.js';
import { HttpProvider } from './http/http.provider.js';
import { LOCAL_EMBED_MODEL, LocalProvider, localModelName } from './local/local.provider.js';
import { OpenAIProvider } from './openai/openai.provider.js';
import { tracingEnabled } from '../lib/tracing.js';
import { tracedModel } from './traced.js';
import { remoteModelName, type Capability, type CapabilityModels, type Provider, type ProviderConfig, type ProviderName, type ProvidersOptions } from './provider.js';

/** The model an index gets when it names none, and what plain `local` means. */
export const DEFAULT_EMBED_MODEL = `local/${LOCAL_EMBED_MODEL}`;
/** The model extraction uses when none is named: the deterministic offline one. */
const DEFAULT_EXTRACT_MODEL = 'local';
/** The chat model an agent uses when none is named: the deterministic offline one. */
export const DEFAULT_LANGUAGE_MODEL = 'local';

/** How a capability's model names read, and the codes of a name that cannot be used. */
interface Terms {
  /** e.g. "embedding model". */
  noun: string;
  /** How names look, said after a name that does not. */
  naming: string;
  providers: readonly ProviderName[];
  /** The model used when none is named, suggested when a named one cannot be used; null when there is no other to suggest. */
  defaultModel: string | null;
  /** 400 for a malformed name or an unknown provider or model. */
  unknownCode: string;
  /** 400 for a model this server is not set up for. */
  unavailableCode: string;
}

/** Extraction and chat models alike: `local`, `cohere/<model>`, `openai/<model>`. */
const LANGUAGE_MODELS: Omit<Terms, 'defaultModel'> = {
  noun: 'language model',
  naming: 'Language models are named local, cohere/<model> or openai/<model> (e.g. local, cohere/command-a-03-2025, openai/gpt-4o-mini).',
  providers: ['local', 'cohere', 'openai'],
  unknownCode: 'unknown_model',
  unavailableCode: 'model_unavailable',
};

const TERMS: Readonly<Record<Capability, Terms>> = {
  embed: {
    noun: 'embedding model',
    naming: 'Embedding models are named provider/model, with provider local, cohere or openai (e.g. local, cohere/embed-v4.0, openai/text-embedding-3-small).',
    providers: ['local', 'cohere', 'openai'],
    defaultModel: DEFAULT_EMBED_MODEL,
    unknownCode: 'unknown_embed_model',
    unavailableCode: 'embed_model_unavailable',
  },
  extract: { ...LANGUAGE_MODELS, defaultModel: DEFAULT_EXTRACT_MODEL },
  chat: { ...LANGUAGE_MODELS, defaultModel: DEFAULT_LANGUAGE_MODEL },
  rerank: {
    noun: 'reranking model',
    naming: 'Reranking models are named cohere/<model> (e.g. cohere/rerank-v3.5) or http/<model>, a model served at RERANK_BASE_URL (e.g. http/BAAI/bge-reranker-v2-m3).',
    providers: ['cohere', 'http'],
    defaultModel: null,
    unknownCode: 'unknown_model',
    unavailableCode: 'model_unavailable',
  },
};

/**
 * The canonical `provider/model` form of a model name for a capability, whatever this server is
 * set up for: the provider lower-cased, local names in their canonical form. Throws the
 * capability's 400 (`unknown_embed_model`, `unknown_model`) for a name that is not
 * `provider/model`, names an unknown provider, or a local model that does not exist.
 */
export function modelName(capability: Capability, name: string): string {
  const terms = TERMS[capability];
  const trimmed = name.trim();
  const slash = trimmed.indexOf('/');
  const provider = (slash === -1 ? trimmed : trimmed.slice(0, slash)).toLowerCase();
  const model = slash === -1 ? null : trimmed.slice(slash + 1);
  if (!(terms.providers as readonly string[]).includes(provider)) {
    throw badRequest(terms.unknownCode, `"${name}" is not a known ${terms.noun}. ${terms.naming}`);
  }
  const naming = provider === 'local' ? localModelName(capability, model) : remoteModelName(provider as ProviderName, model);
  if ('name' in naming) return naming.name;
  throw badRequest(terms.unknownCode, naming.problem ?? `"${name}" does not name a ${provider} model. ${terms.naming}`);
}

/** The provider of a canonical name and the model's name after `provider/` ('' for plain `local`). */
function splitName(name: string): [ProviderName, string] {
  const slash = name.indexOf('/');
  return slash === -1 ? [name as ProviderName, ''] : [name.slice(0, slash) as ProviderName, name.slice(slash + 1)];
}

/**
 * Every model this server can use, built from its configuration: names are checked in one place
 * (`validate`), and `get` hands out one shared instance per capability and model.
 */
export class Providers {
  readonly embedders: Embedders;
  readonly extractors: Extractors;
  readonly languageModels: LanguageModels;
  readonly rerankers: Rerankers;
  private readonly local: LocalProvider;
  private readonly providers: Readonly<Record<ProviderName, Provider>>;
  private readonly cache = new Map<string, CapabilityModels[Capability]>();

  constructor(
    config: ProviderConfig,
    private readonly logger: Logger,
    tuning: ProvidersOptions = {},
  ) {
    this.local = new LocalProvider(config, logger);
    this.providers = {
      local: this.local,
      cohere: new CohereProvider(config, tuning, logger),
      openai: new OpenAIProvider(config, tuning, logger),
      http: new HttpProvider(config),
    };
    this.embedders = new Models(this, 'embed');
    this.extractors = new Models(this, 'extract');
    this.languageModels = new Models(this, 'chat');
    this.rerankers = new Models(this, 'rerank');
  }

  /**
   * The canonical name of `model` if this server can use it for `capability`. Throws like
   * `modelName`, and the capability's 400 `…_unavailable` when its provider is not set up here
   * (no COHERE_API_KEY, no OPENAI_BASE_URL, local model files missing from LOCAL_MODEL_DIR).
   */
  validate(capability: Capability, model: string): string {
    const terms = TERMS[capability];
    const name = modelName(capability, model);
    const [provider, rest] = splitName(name);
    const unusable = this.providers[provider].unusable(capability, rest);
    if (unusable === null) return name;
    if ('problem' in unusable) throw badRequest(terms.unavailableCode, unusable.problem);
    throw badRequest(
      terms.unavailableCode,
      `${name} needs ${unusable.needs}, which this server does not have: an operator must set it${terms.defaultModel !== null ? `, or choose another model (e.g. ${terms.defaultModel})` : ''}.`,
    );
  }

  /** The shared model for `model` (any accepted spelling; default: the capability's); throws like `validate`. */
  get<C extends Capability>(capability: C, model: string = TERMS[capability].defaultModel ?? ''): CapabilityModels[C] {
    const name = this.validate(capability, model);
    const key = `${capability}:${name}`;
    let instance = this.cache.get(key) as CapabilityModels[C] | undefined;
    if (instance === undefined) {
      const [provider, rest] = splitName(name);
      const create = this.providers[provider].models[capability];
      if (create === undefined) throw new Error(`${provider} has no ${capability} models`);
      instance = create(rest);
      // while tracing is on, every call of the model is a span; otherwise the model is called directly
      if (tracingEnabled()) instance = tracedModel(capability, name, instance);
      this.cache.set(key, instance);
      this.logger.debug({ capability, model: name }, 'model ready');
    }
    return instance;
  }

  /** Starts fetching, in the background, the local embedding models LOCAL_MODEL_DIR does not provide. */
  prepare(): void {
    this.local.prepare();
  }

  /**
   * Why the embedding model `model` (a canonical name) cannot embed yet, for readiness: a local
   * model whose files are still being fetched, or could not be; null when it can, and for
   * remote models, which are checked when called.
   */
  embedderNotReady(model: string): string | null {
    const [provider, rest] = splitName(model);
    return provider === 'local' ? this.local.notReady(rest) : null;
  }

  /** Ends the local model threads (at shutdown); local embedding is refused afterwards. */
  close(): Promise<void> {
    return this.local.close();
  }
}

/** One capability's models, as the services that use them see the registry. */
export class Models<C extends Capability> {
  constructor(
    private readonly providers: Providers,
    private readonly capability: C,
  ) {}

  /** The canonical name of `model` if this server can use it; throws 400 otherwise (`Providers.validate`). */
  validate(model: string): string {
    return this.providers.validate(this.capability, model);
  }

  /** The shared model for `model` (default: the capability's); throws like `validate`. */
  get(model?: string): CapabilityModels[C] {
    return this.providers.get(this.capability, model);
  }
}

/** The embedding models (`local/all-MiniLM-L6-v2`, `cohere/embed-v4.0`, `openai/<model>`). */
export type Embedders = Models<'embed'>;
/** The language models that pull a record's values out of text (`local`, `cohere/<model>`, `openai/<model>`). */
export type Extractors = Models<'extract'>;
/** The chat models agents run with, tool calling included (`local`, `cohere/<model>`, `openai/<model>`). */
export type LanguageModels = Models<'chat'>;
/** The models that order passages by relevance to a query (`cohere/<model>`, `http/<model>`). */
export type Rerankers = Models<'rerank'>;
