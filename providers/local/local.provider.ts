import path from 'node:path';
import type { Logger } from '../../lib/logger.js';
import { BatchingEmbedder } from '../batching.embedder.js';
import type { Capability, Naming, Provider, ProviderConfig, ProviderModels, Unusable } from '../provider.js';
import { LocalExtractor } from './local.extractor.js';
import { LocalLanguageModel } from './local.model.js';
import { LOCAL_MODELS, LocalEmbedder, localModelProblem, type LocalModelSource } from './local.embedder.js';
import { LocalModelPool } from './local-model.pool.js';

/** The local embedding model plain `local` means. */
export const LOCAL_EMBED_MODEL = 'all-MiniLM-L6-v2';

/**
 * The canonical name of `local` (`model` null) or `local/<model>` for a capability: embedding
 * names one of `LOCAL_MODELS` in any case (plain `local`: `LOCAL_EMBED_MODEL`); the one local
 * language model is plain `local`.
 */
export function localModelName(capability: Capability, model: string | null): Naming {
  if (capability !== 'embed') {
    return model === null ? { name: 'local' } : { problem: `There is no local language model "${model}"; the local model is named just local.` };
  }
  if (model === null) return { name: `local/${LOCAL_EMBED_MODEL}` };
  if (model === '' || /\s/.test(model)) return { problem: null };
  const canonical = Object.keys(LOCAL_MODELS).find((m) => m.toLowerCase() === model.toLowerCase());
  if (canonical === undefined) {
    return { problem: `There is no local model "${model}"; local models are ${Object.keys(LOCAL_MODELS).map((m) => `local/${m}`).join(', ')}.` };
  }
  return { name: `local/${canonical}` };
}

/**
 * The models that run in this process: sentence embedding on worker threads of their own
 * (`LocalModelPool` of LOCAL_EMBED_THREADS, shared by every local embedder; ended by `close`),
 * and the deterministic language model `local` for extraction and chat.
 */
export class LocalProvider implements Provider {
  readonly models: ProviderModels;
  private readonly pool: LocalModelPool;
  private readonly source: LocalModelSource;

  constructor(config: ProviderConfig, logger: Logger) {
    this.pool = new LocalModelPool(config.localEmbedThreads);
    this.source = { localModelDir: config.localModelDir, cacheDir: path.join(config.dataDir, 'models') };
    this.models = {
      // a call per model thread: under load each fills its batch while the others run
      embed: (model) => new BatchingEmbedder(new LocalEmbedder(model, this.source, logger, this.pool), this.pool.threads),
      extract: () => new LocalExtractor(),
      chat: () => new LocalLanguageModel(),
    };
  }

  /** An embedding model whose files are missing from LOCAL_MODEL_DIR. */
  unusable(capability: Capability, model: string): Unusable | null {
    if (capability !== 'embed') return null;
    const problem = localModelProblem(model, this.source);
    return problem === null ? null : { problem };
  }

  /** Ends the model threads (at shutdown); local embedding is refused afterwards. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
