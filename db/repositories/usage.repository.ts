import type { Knex } from 'knex';

export interface UsageRow {
  project_id: string;
  operation: string;
  day: string;
  count: number;
}

/** Per-day operation counters, scoped by project. */
export class UsageRepository {
  constructor(private readonly db: Knex) {}

  /** Adds `n` to today's counter of an operation, inside the caller's transaction. */
  async increment(trx: Knex.Transaction, projectId: string, operation: string, day: string, n: number): Promise<void> {
    await trx('usage_counters')
      .insert({ project_id: projectId, operation, day, count: n })
      .onConflict(['project_id', 'operation', 'day'])
      .merge({ count: trx.raw('?? + ?', ['usage_counters.count', n]) });
  }

  async list(projectId: string, from: string, to: string): Promise<UsageRow[]> {
    return (await this.db<UsageRow>('usage_counters')
      .where({ project_id: projectId })
      .andWhere('day', '>=', from)
      .andWhere('day', '<=', to)
      .orderBy([
        { column: 'day', order: 'desc' },
        { column: 'operation', order: 'asc' },
      ])) as UsageRow[];
  }
}
