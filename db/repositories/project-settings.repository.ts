import type { Knex } from 'knex';
import { supportsRowLocks } from '../knex.js';

/** Where a project's memory re-embedding stands: none (`ready`), under way, or stopped by input that can never be embedded. */
export type ReembedStatus = 'ready' | 'migrating' | 'failed';

/** A project's settings row; a project without one has every default. */
export interface ProjectSettingsRow {
  project_id: string;
  /** The memory embedding model the project asked for; null: the server's MEMORY_EMBED_MODEL. */
  memory_embed_setting: string | null;
  /** The model its memories are embedded with now; null: the server's MEMORY_EMBED_MODEL. */
  memory_embed_model: string | null;
  /** The model a re-embedding is moving them to; null when none runs. */
  memory_embed_target: string | null;
  /** Names the re-embedding under way: each change of the setting starts a new one. */
  memory_embed_migration: string | null;
  memory_embed_status: ReembedStatus;
  /** The last memory id written to the target (memories are walked in id order); '' before the first. */
  memory_embed_cursor: string;
  memory_embed_done: number;
  memory_embed_total: number | null;
  memory_embed_started_at: number | null;
  memory_embed_error: string | null;
  /** JSON array of models whose collections still hold vectors of this project to remove. */
  memory_embed_drop: string | null;
  memory_embed_lease: string | null;
  memory_embed_lease_until: number | null;
  updated_at: number;
}

/** The settings columns a write may change. */
export type SettingsChange = Partial<Omit<ProjectSettingsRow, 'project_id'>>;

/** A project whose re-embedding has work left and no job holding it. */
export interface UnfinishedReembedding {
  project_id: string;
  migration: string | null;
}

/** Project settings rows (`project_settings`): one per project that changed a setting. */
export class ProjectSettingsRepository {
  constructor(private readonly db: Knex) {}

  async get(projectId: string, trx: Knex | Knex.Transaction = this.db): Promise<ProjectSettingsRow | undefined> {
    const row = (await trx<ProjectSettingsRow>('project_settings').where({ project_id: projectId }).first()) as ProjectSettingsRow | undefined;
    return row && normalize(row);
  }

  /**
   * The row inside a transaction that is about to change it, with the project locked (MySQL; SQLite
   * serialises transactions), so two changes of the setting cannot interleave.
   */
  async lock(trx: Knex.Transaction, projectId: string): Promise<ProjectSettingsRow | undefined> {
    if (supportsRowLocks(this.db)) await trx('projects').where({ id: projectId }).forUpdate().select('id');
    return this.get(projectId, trx);
  }

  /** Writes `change`, creating the row if the project has none. */
  async put(trx: Knex | Knex.Transaction, projectId: string, change: SettingsChange, now: number): Promise<void> {
    await trx('project_settings')
      .insert({ project_id: projectId, ...change, updated_at: now })
      .onConflict('project_id')
      .merge({ ...change, updated_at: now });
  }

  /** Writes `change` only while the re-embedding under way is still `migration`; false when it is not. */
  async putIf(projectId: string, migration: string, change: SettingsChange, now: number): Promise<boolean> {
    const changed = await this.db('project_settings')
      .where({ project_id: projectId, memory_embed_migration: migration })
      .update({ ...change, updated_at: now });
    return changed === 1;
  }

  /**
   * The switch at the end of re-embedding `migration`, in one row update: the model in use becomes
   * the one the project asked for (its target), the old one is left to be removed; false when the
   * re-embedding was replaced or cancelled meanwhile (nothing changed).
   */
  async switchModel(projectId: string, migration: string, dropList: string, now: number): Promise<boolean> {
    const changed = await this.db('project_settings')
      .where({ project_id: projectId, memory_embed_migration: migration, memory_embed_status: 'migrating' })
      .update({
        memory_embed_model: this.db.ref('memory_embed_setting'),
        memory_embed_target: null,
        memory_embed_migration: null,
        memory_embed_status: 'ready',
        memory_embed_error: null,
        memory_embed_drop: dropList,
        updated_at: now,
      });
    return changed === 1;
  }

  /** Replaces the drop list if it still reads `was`; false when a change of the setting wrote it meanwhile. */
  async setDropList(projectId: string, was: string | null, list: string | null, now: number): Promise<boolean> {
    const query = this.db('project_settings').where({ project_id: projectId });
    if (was === null) query.whereNull('memory_embed_drop');
    else query.where({ memory_embed_drop: was });
    return (await query.update({ memory_embed_drop: list, updated_at: now })) === 1;
  }

  /** Takes (or renews) the project's re-embedding lease for `owner` until `until`, unless another owner holds a live one. */
  async lease(projectId: string, owner: string, until: number, now: number): Promise<boolean> {
    const changed = await this.db('project_settings')
      .where({ project_id: projectId })
      .where((q) => q.whereNull('memory_embed_lease').orWhere('memory_embed_lease', owner).orWhere('memory_embed_lease_until', '<', now))
      .update({ memory_embed_lease: owner, memory_embed_lease_until: until });
    return changed === 1;
  }

  async release(projectId: string, owner: string): Promise<void> {
    await this.db('project_settings').where({ project_id: projectId, memory_embed_lease: owner }).update({ memory_embed_lease: null, memory_embed_lease_until: null });
  }

  /** Drops every lease: one embedded process owns them all, so those left by a previous run are stale. */
  async releaseAll(): Promise<void> {
    await this.db('project_settings').whereNotNull('memory_embed_lease').update({ memory_embed_lease: null, memory_embed_lease_until: null });
  }

  /** Projects with a re-embedding under way or vectors left to remove, whose lease is free or expired. */
  async unfinished(now: number, limit: number): Promise<UnfinishedReembedding[]> {
    const rows = (await this.db('project_settings')
      .where((q) => q.where({ memory_embed_status: 'migrating' }).orWhere((d) => d.whereNotNull('memory_embed_drop').whereNot('memory_embed_drop', '[]')))
      .where((q) => q.whereNull('memory_embed_lease').orWhere('memory_embed_lease_until', '<', now))
      .orderBy('project_id')
      .limit(limit)
      .select('project_id', 'memory_embed_migration as migration')) as UnfinishedReembedding[];
    return rows;
  }
}

/** Numbers as numbers (MySQL returns BIGINT as strings). */
function normalize(row: ProjectSettingsRow): ProjectSettingsRow {
  return {
    ...row,
    memory_embed_done: Number(row.memory_embed_done),
    memory_embed_total: row.memory_embed_total === null ? null : Number(row.memory_embed_total),
    memory_embed_started_at: row.memory_embed_started_at === null ? null : Number(row.memory_embed_started_at),
    memory_embed_lease_until: row.memory_embed_lease_until === null ? null : Number(row.memory_embed_lease_until),
    updated_at: Number(row.updated_at),
  };
}
