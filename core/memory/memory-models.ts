import type { ProjectSettingsRepository, ProjectSettingsRow } from '../../db/repositories/project-settings.repository.js';
import type { CollectionSpec } from '../../contracts/vector-store.js';
import type { Embedder } from '../../providers/embedder.js';
import type { Embedders } from '../../providers/registry.js';
import type { ConfigCache } from '../config-cache.js';
import { Categorizer } from './categories.js';
import { memoryCollection } from './rows.js';

/** Which embedding models a project's memories are in: the one search uses, and the one a re-embedding fills. */
export interface MemoryModelState {
  /** The model memories are embedded and searched with now (canonical `provider/model`). */
  model: string;
  /** The model a re-embedding is moving them to; null when none runs. New writes go to both. */
  target: string | null;
}

/** The state a settings row (or its absence) stands for, with the server's model for what it leaves unset. */
export function modelStateOf(row: ProjectSettingsRow | undefined, serverModel: string): MemoryModelState {
  const migrating = row?.memory_embed_status === 'migrating' ? (row.memory_embed_target ?? null) : null;
  return { model: row?.memory_embed_model ?? serverModel, target: migrating };
}

/** The collections a state writes to: the model's, and the target's while a re-embedding runs. */
export const liveModels = (state: MemoryModelState): string[] => (state.target === null ? [state.model] : [state.model, state.target]);

const STATE_KEY = 'memory-embedding';

/**
 * The embedding model of each project's memories (its setting, else the server's
 * `MEMORY_EMBED_MODEL`), read on every memory search and indexing job through the project's
 * configuration cache — no SQL per request while the project's configuration is unchanged — and
 * the per-model pieces memory code needs: embedder, collection, categorizer.
 */
export class MemoryModels {
  /** A categorizer per model: category descriptions are compared with memories in the model's own space. */
  private readonly categorizers = new Map<string, Categorizer>();
  /** Each model's embedder, once looked up. */
  private readonly embedderOf = new Map<string, Embedder>();

  constructor(
    private readonly settings: ProjectSettingsRepository,
    private readonly cache: ConfigCache,
    private readonly embedders: Embedders,
    /** The server's `MEMORY_EMBED_MODEL`, canonical. */
    readonly serverModel: string,
  ) {}

  /** The project's models as of now (cached until its configuration changes, on any process). */
  async of(projectId: string): Promise<MemoryModelState> {
    const config = await this.cache.at(projectId);
    return config.read(STATE_KEY, async () => modelStateOf(await this.settings.get(projectId), this.serverModel));
  }

  /**
   * Runs a write of the project's settings; once over, every process's next read sees it
   * (`ConfigCache.write`).
   */
  write<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    return this.cache.write(projectId, work);
  }

  /**
   * A model's embedder, looked up (and its provider checked) once: the registry's check reads a
   * local model's files, and indexing asks once a memory. The local embedder checks its files on
   * every call itself, and a remote provider's key does not change while the process runs.
   */
  embedder(model: string): Embedder {
    let embedder = this.embedderOf.get(model);
    if (embedder === undefined) {
      embedder = this.embedders.get(model);
      this.embedderOf.set(model, embedder);
    }
    return embedder;
  }

  /** The memories collection of a model. */
  collection(model: string): Promise<CollectionSpec> {
    return memoryCollection(this.embedders, model);
  }

  categorizer(model: string): Categorizer {
    let categorizer = this.categorizers.get(model);
    if (categorizer === undefined) {
      categorizer = new Categorizer(this.embedders.get(model));
      this.categorizers.set(model, categorizer);
    }
    return categorizer;
  }
}
