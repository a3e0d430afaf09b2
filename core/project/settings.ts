import type { ProjectSettingsRepository, ProjectSettingsRow, ReembedStatus, SettingsChange } from '../../db/repositories/project-settings.repository.js';
import type { TransactionalOutbox } from '../../db/transactional-outbox.js';
import { envelope } from '../../contracts/jobs/catalogue.js';
import { AppError } from '../../lib/errors.js';
import { iso, newId, nowMs } from '../../lib/time.js';
import type { Embedders } from '../../providers/registry.js';
import { modelStateOf, type MemoryModels } from '../memory/memory-models.js';
import { parseDrops } from '../memory/reembedding.js';

/** Where the project's memories are embedded, and the re-embedding moving them, if one runs. */
export interface MemoryEmbeddingView {
  /** The model memory search and indexing use now. */
  model: string;
  /** The model the memories are being re-embedded into; null when none is under way. */
  target: string | null;
  /** `ready`: nothing under way; `migrating`: re-embedding; `failed`: the target refused for good (see `error`), the model unchanged. */
  status: ReembedStatus;
  /** Memories re-embedded so far, of `total` (counted when the re-embedding started; writes meanwhile may add some). */
  embedded: number;
  total: number | null;
  started_at: string | null;
  /** The last error of the re-embedding (it is retried while the error is transient); null when none. */
  error: string | null;
}

/** `GET /v1/project/settings`. */
export interface ProjectSettingsView {
  /** The embedding model the project's memories and records use; null: the server's (MEMORY_EMBED_MODEL). */
  memory_embed_model: string | null;
  memory_embedding: MemoryEmbeddingView;
}

export interface ProjectSettingsInput {
  memory_embed_model?: string | null;
}

/**
 * A project's settings. Changing the memory embedding model does not switch it at once: the
 * change and its `memory.reembed` job commit together (outbox), the job re-embeds every memory into
 * the new model while search answers from the current one, and switches when all are in
 * (`MemoryReembedding`). A second change while one runs replaces its target; changing back to the
 * model in use cancels it.
 */
export class ProjectSettings {
  constructor(
    private readonly settings: ProjectSettingsRepository,
    private readonly outbox: TransactionalOutbox,
    private readonly models: MemoryModels,
    private readonly embedders: Embedders,
  ) {}

  async get(projectId: string): Promise<ProjectSettingsView> {
    return this.view(await this.settings.get(projectId));
  }

  /**
   * Applies the fields given (an absent one is left as it is). `memory_embed_model` must name a model
   * this server can use (400 naming the field otherwise, nothing changed); null means the server's.
   */
  async update(projectId: string, input: ProjectSettingsInput): Promise<ProjectSettingsView> {
    if (input.memory_embed_model === undefined) return this.get(projectId);
    const setting = input.memory_embed_model === null ? null : this.validate(input.memory_embed_model, '/memory_embed_model');
    const wanted = setting ?? this.models.serverModel;
    await this.models.write(projectId, () =>
      this.outbox.write(async (tx) => {
        const row = await this.settings.lock(tx.trx, projectId);
        const state = modelStateOf(row, this.models.serverModel);
        const now = nowMs();
        const drops = parseDrops(row?.memory_embed_drop ?? null);
        const failed = row?.memory_embed_status === 'failed';
        let change: SettingsChange = { memory_embed_setting: setting };
        if (wanted === state.model) {
          // back to the model in use: a re-embedding under way (or failed) is cancelled, and what it wrote removed
          const abandoned = state.target ?? (failed ? row?.memory_embed_target : null) ?? null;
          change = { ...change, ...idle(), memory_embed_model: setting };
          if (abandoned !== null) change.memory_embed_drop = JSON.stringify([...drops, abandoned]);
        } else if (wanted !== state.target) {
          // a new target (replacing any under way, or retrying a failed one)
          const abandoned = state.target ?? (failed ? row?.memory_embed_target : null) ?? null;
          change = {
            ...change,
            memory_embed_model: row?.memory_embed_model ?? null,
            memory_embed_target: wanted,
            memory_embed_migration: newId(),
            memory_embed_status: 'migrating',
            memory_embed_cursor: '',
            memory_embed_done: 0,
            memory_embed_total: null,
            memory_embed_started_at: now,
            memory_embed_error: null,
            ...(abandoned !== null && abandoned !== wanted ? { memory_embed_drop: JSON.stringify([...drops, abandoned]) } : {}),
          };
        }
        await this.settings.put(tx.trx, projectId, change, now);
        const job = change.memory_embed_migration ?? (change.memory_embed_drop !== undefined ? newId() : null);
        if (job !== null) await tx.add(projectId, envelope('memory.reembed', { projectId, migrationId: job }));
      }),
    );
    return this.get(projectId);
  }

  /** The canonical name of a model this server can embed with; 400 naming `path` otherwise. */
  validate(model: string, path: string): string {
    try {
      return this.embedders.validate(model);
    } catch (err) {
      if (err instanceof AppError && err.status === 400) throw new AppError(400, err.code, err.detail, [{ path, message: err.detail }]);
      throw err;
    }
  }

  private view(row: ProjectSettingsRow | undefined): ProjectSettingsView {
    const state = modelStateOf(row, this.models.serverModel);
    return {
      memory_embed_model: row?.memory_embed_setting ?? null,
      memory_embedding: {
        model: state.model,
        target: row?.memory_embed_status === 'ready' ? null : (row?.memory_embed_target ?? null),
        status: row?.memory_embed_status ?? 'ready',
        embedded: row?.memory_embed_done ?? 0,
        total: row?.memory_embed_total ?? null,
        started_at: row?.memory_embed_started_at != null ? iso(row.memory_embed_started_at) : null,
        error: row?.memory_embed_error ?? null,
      },
    };
  }
}

/** The settings of no re-embedding under way. */
function idle(): SettingsChange {
  return { memory_embed_target: null, memory_embed_migration: null, memory_embed_status: 'ready', memory_embed_error: null };
}
