import path from 'node:path';
import type { CollectionSpec } from '../../contracts/vector-store.js';
import type { Config } from '../../lib/config.js';
import { badRequest } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { BatchingEmbedder } from './batching.js';
import { CohereEmbedder } from './cohere.embedder.js';
import type { Embedder } from './embedder.js';
import { LOCAL_MODELS, LocalEmbedder, localModelProblem, type LocalModelSource } from './local.embedder.js';
import { LocalModelThread } from './local-model.thread.js';
import { OpenAIEmbedder } from './openai.embedder.js';

/** The model an index gets when it names none, and what plain `local` means. */
export const DEFAULT_EMBED_MODEL = 'local/all-MiniLM-L6-v2';

/** The providers a model name may start with. */
export const EMBED_PROVIDERS = ['local', 'cohere', 'openai'] as const;
/** One of `EMBED_PROVIDERS`. */
export type EmbedProvider = (typeof EMBED_PROVIDERS)[number];

const NAMING = 'Embedding models are named provider/model, with provider local, cohere or openai (e.g. local, cohere/embed-v4.0, openai/text-embedding-3-small).';

/** Tuning for the provider clients; the defaults suit production. */
export interface EmbeddersOptions {
  /** Retries of a transient provider answer (408/429/5xx) within one call; default 2. */
  maxRetries?: number;
  /** Per-call timeout of a provider request; default 60 s. */
  timeoutMs?: number;
}

/**
 * The canonical `provider/model` form of a model name: `local` becomes `local/all-MiniLM-L6-v2`,
 * the provider is lower-cased, local model names take their canonical case. Throws 400
 * `unknown_embed_model` for a name that is not `provider/model` or names an unknown provider.
 */
export function normalizeModelName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.toLowerCase() === 'local') return DEFAULT_EMBED_MODEL;
  const slash = trimmed.indexOf('/');
  const provider = (slash === -1 ? trimmed : trimmed.slice(0, slash)).toLowerCase();
  const model = slash === -1 ? '' : trimmed.slice(slash + 1);
  if (!(EMBED_PROVIDERS as readonly string[]).includes(provider)) {
    throw badRequest('unknown_embed_model', `"${name}" is not a known embedding model. ${NAMING}`);
  }
  if (model === '' || /\s/.test(model)) {
    throw badRequest('unknown_embed_model', `"${name}" does not name a ${provider} model. ${NAMING}`);
  }
  if (provider === 'local') {
    const canonical = Object.keys(LOCAL_MODELS).find((m) => m.toLowerCase() === model.toLowerCase());
    if (canonical === undefined) {
      throw badRequest(
        'unknown_embed_model',
        `There is no local model "${model}"; local models are ${Object.keys(LOCAL_MODELS).map((m) => `local/${m}`).join(', ')}.`,
      );
    }
    return `local/${canonical}`;
  }
  return `${provider}/${model}`;
}

/**
 * The embedding models this server can use, built from its configuration. `get` hands out one
 * shared embedder per model; `validate` says whether a name is usable without calling anyone.
 */
export class Embedders {
  private readonly cache = new Map<string, Embedder>();
  /** Runs every local model of this server, off the event loop. */
  private readonly localThread = new LocalModelThread();

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly options: EmbeddersOptions = {},
  ) {}

  /**
   * The canonical name of `model` if this server can embed with it. Throws 400
   * `unknown_embed_model` for a malformed name or unknown provider/local model, and 400
   * `embed_model_unavailable` when the provider is not configured here (no COHERE_API_KEY, no
   * OPENAI_BASE_URL, local model files missing from LOCAL_MODEL_DIR).
   */
  validate(model: string): string {
    const name = normalizeModelName(model);
    const [provider, modelName] = splitName(name);
    if (provider === 'cohere' && this.config.cohereApiKey === null) {
      throw badRequest(
        'embed_model_unavailable',
        `${name} needs COHERE_API_KEY, which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_EMBED_MODEL}).`,
      );
    }
    if (provider === 'openai' && this.config.openaiBaseUrl === null) {
      throw badRequest(
        'embed_model_unavailable',
        `${name} needs OPENAI_BASE_URL (and OPENAI_API_KEY if the server asks for one), which this server does not have: an operator must set it, or choose another model (e.g. ${DEFAULT_EMBED_MODEL}).`,
      );
    }
    if (provider === 'local') {
      const problem = localModelProblem(modelName, this.localSource());
      if (problem !== null) throw badRequest('embed_model_unavailable', problem);
    }
    return name;
  }

  /** The embedder for `model` (any accepted spelling); throws like `validate`. */
  get(model: string): Embedder {
    const name = this.validate(model);
    let embedder = this.cache.get(name);
    if (embedder === undefined) {
      // concurrent callers (e.g. indexing jobs) share provider calls
      embedder = new BatchingEmbedder(this.create(name), name.startsWith('local/') ? 1 : 4);
      this.cache.set(name, embedder);
      this.logger.debug({ model: name }, 'embedding model ready');
    }
    return embedder;
  }

  /** Ends the local model thread (at shutdown); local embedding is refused afterwards. */
  close(): Promise<void> {
    return this.localThread.close();
  }

  private create(name: string): Embedder {
    const [provider, modelName] = splitName(name);
    switch (provider) {
      case 'local':
        return new LocalEmbedder(modelName, this.localSource(), this.logger, this.localThread);
      case 'cohere':
        return new CohereEmbedder(modelName, {
          apiKey: this.config.cohereApiKey as string,
          baseUrl: this.config.cohereBaseUrl,
          ...this.options,
        });
      case 'openai':
        return new OpenAIEmbedder(modelName, {
          baseUrl: this.config.openaiBaseUrl as string,
          apiKey: this.config.openaiApiKey,
          ...this.options,
        });
    }
  }

  private localSource(): LocalModelSource {
    return { localModelDir: this.config.localModelDir, cacheDir: path.join(this.config.dataDir, 'models') };
  }
}

function splitName(name: string): [EmbedProvider, string] {
  const slash = name.indexOf('/');
  return [name.slice(0, slash) as EmbedProvider, name.slice(slash + 1)];
}

/**
 * The cosine collection that holds one purpose's vectors (`memories`, `knowledge`) for one
 * embedding model: `<purpose>_<model as a slug>`, so switching models never mixes dimensions.
 */
export async function modelCollection(embedder: Embedder, purpose: string, columns: CollectionSpec['columns']): Promise<CollectionSpec> {
  return {
    name: `${purpose}_${embedder.model.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`.slice(0, 200),
    dimension: await embedder.dimension(),
    metric: 'cosine',
    columns,
  };
}
