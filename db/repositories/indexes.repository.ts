import type { Knex } from 'knex';
import type { Metric } from '../../contracts/vector-store.js';

/** A vector index row. `field_map` and `tags` are JSON text. */
export interface IndexRow {
  id: string;
  project_id: string;
  name: string;
  dimension: number;
  metric: Metric;
  embed_model: string | null;
  field_map: string | null;
  deletion_protection: boolean | number;
  tags: string;
  collection: string;
  created_at: number;
  updated_at: number;
}

/** True when an insert failed on a unique key (MySQL/MariaDB or SQLite). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.code === 'ER_DUP_ENTRY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Vector index rows, every query scoped by project. */
export class IndexesRepository {
  constructor(private readonly db: Knex) {}

  async insert(row: IndexRow): Promise<void> {
    await this.db('vector_indexes').insert(row);
  }

  async find(projectId: string, name: string): Promise<IndexRow | undefined> {
    return (await this.db<IndexRow>('vector_indexes').where({ project_id: projectId, name }).first()) as IndexRow | undefined;
  }

  async list(projectId: string, limit: number, offset: number): Promise<IndexRow[]> {
    return (await this.db<IndexRow>('vector_indexes')
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as IndexRow[];
  }

  async update(projectId: string, id: string, changes: Partial<Pick<IndexRow, 'deletion_protection' | 'tags' | 'updated_at'>>): Promise<void> {
    await this.db('vector_indexes').where({ project_id: projectId, id }).update(changes);
  }

  async delete(projectId: string, id: string): Promise<void> {
    await this.db('vector_indexes').where({ project_id: projectId, id }).delete();
  }
}
