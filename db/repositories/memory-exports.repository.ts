import type { Knex } from 'knex';

export type MemoryExportStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface MemoryExportRow {
  id: string;
  project_id: string;
  /** The JSON Schema as the client sent it (JSON). */
  schema: string;
  /** The memory filter the export reads (JSON), entity ids given at the top level joined in. */
  filters: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  status: MemoryExportStatus;
  /** The filled object (JSON), once completed. */
  result: string | null;
  /** Why it failed, or the last error while it is retried. */
  error: string | null;
  memory_count: number | null;
  created_at: number;
  updated_at: number;
}

/** The entity ids an export is looked up by. */
export type ExportEntities = Partial<Pick<MemoryExportRow, 'user_id' | 'agent_id' | 'run_id' | 'app_id'>>;

/** Memory exports, every read scoped by project. */
export class MemoryExportsRepository {
  constructor(private readonly db: Knex) {}

  async insert(trx: Knex.Transaction, row: MemoryExportRow): Promise<void> {
    await trx('memory_exports').insert(row);
  }

  async get(projectId: string, id: string): Promise<MemoryExportRow | undefined> {
    return (await this.db<MemoryExportRow>('memory_exports').where({ project_id: projectId, id }).first()) as MemoryExportRow | undefined;
  }

  /** The project's newest export whose entity ids include all of `entities`. */
  async latest(projectId: string, entities: ExportEntities): Promise<MemoryExportRow | undefined> {
    return (await this.db<MemoryExportRow>('memory_exports')
      .where({ project_id: projectId, ...entities })
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .first()) as MemoryExportRow | undefined;
  }

  /** Records how a run went, unless the export was settled meanwhile (a job run twice). */
  async record(id: string, change: Partial<Pick<MemoryExportRow, 'status' | 'result' | 'error' | 'memory_count'>> & { updated_at: number }): Promise<void> {
    await this.db('memory_exports').where({ id }).whereIn('status', ['pending', 'running']).update(change);
  }
}
