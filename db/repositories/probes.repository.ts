import type { Knex } from 'knex';

export interface ProbeRow {
  id: string;
  project_id: string;
  status: 'pending' | 'done';
  hold_ms: number;
  attempts: number;
  processed_by: string | null;
  created_at: number;
  processed_at: number | null;
}

/** Pipeline probe rows, scoped by project for reads. */
export class ProbesRepository {
  constructor(private readonly db: Knex) {}

  async insert(trx: Knex.Transaction, row: ProbeRow): Promise<void> {
    await trx('probes').insert(row);
  }

  async get(projectId: string, id: string): Promise<ProbeRow | undefined> {
    return (await this.db<ProbeRow>('probes').where({ project_id: projectId, id }).first()) as ProbeRow | undefined;
  }

  async recordAttempt(id: string): Promise<void> {
    await this.db('probes').where({ id }).increment('attempts', 1);
  }

  /** Marks the probe done once; a repeated run finds it done and changes nothing. */
  async markDone(id: string, processedBy: string, at: number): Promise<boolean> {
    const changed = await this.db('probes')
      .where({ id, status: 'pending' })
      .update({ status: 'done', processed_by: processedBy, processed_at: at });
    return changed > 0;
  }
}
