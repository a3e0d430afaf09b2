import type { Knex } from 'knex';
import { newId, nowMs } from '../../lib/time.js';

export interface ProjectRow {
  id: string;
  name: string;
  created_at: number;
}

/** Projects by id or name. Projects are the tenancy boundary, so this is the one unscoped table. */
export class ProjectsRepository {
  constructor(private readonly db: Knex) {}

  async findByName(name: string): Promise<ProjectRow | undefined> {
    return (await this.db<ProjectRow>('projects').where({ name }).first()) as ProjectRow | undefined;
  }

  async findById(id: string): Promise<ProjectRow | undefined> {
    return (await this.db<ProjectRow>('projects').where({ id }).first()) as ProjectRow | undefined;
  }

  /** The newest projects first (the operator's choice of project in the console). */
  async list(limit: number): Promise<ProjectRow[]> {
    return (await this.db<ProjectRow>('projects').orderBy([
      { column: 'created_at', order: 'desc' },
      // ids are time-ordered: two projects created in the same millisecond keep their order
      { column: 'id', order: 'desc' },
    ]).limit(limit)) as ProjectRow[];
  }

  /** Returns the project with this name, creating it if needed (safe under concurrent callers). */
  async ensure(name: string): Promise<ProjectRow> {
    const existing = await this.findByName(name);
    if (existing) return existing;
    const row: ProjectRow = { id: newId(), name, created_at: nowMs() };
    try {
      await this.db('projects').insert(row);
      return row;
    } catch (err) {
      const raced = await this.findByName(name);
      if (raced) return raced;
      throw err;
    }
  }
}
