import type { Knex } from 'knex';
import type { JobEnvelope } from '../../contracts/jobs/catalogue.js';
import { nowMs, sleep } from '../../lib/time.js';
import { supportsRowLocks } from '../knex.js';

export interface OutboxEntry {
  id: number;
  projectId: string;
  envelope: JobEnvelope;
  attempts: number;
}

/** Rows per INSERT: 10 values each, well within what MySQL and SQLite bind in one statement. */
const INSERT_CHUNK = 500;

interface OutboxRow {
  id: number;
  project_id: string;
  job_name: string;
  job_id: string;
  payload: string;
  trace: string | null;
  attempts: number;
}

/** The outbox table: written inside the caller's transaction, drained by the relay. */
export class OutboxRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Records derived work in the same transaction as the rows that need it, in one statement per
   * 500 jobs, leased for `leaseMs` to the process writing it: that process's relay delivers them
   * once the transaction commits (`OutboxRelay.handOff`), with no claim of its own, and other
   * relays take them only if the lease runs out (the writer died first). The entries, with their
   * ids as the database gave them.
   */
  async add(trx: Knex.Transaction, entries: ReadonlyArray<{ projectId: string; job: JobEnvelope }>, leaseMs: number): Promise<OutboxEntry[]> {
    const now = nowMs();
    const rows = entries.map(({ projectId, job }) => ({
      project_id: projectId,
      job_name: job.name,
      job_id: job.jobId,
      payload: JSON.stringify(job.payload),
      trace: job.trace ? JSON.stringify(job.trace) : null,
      attempts: 1,
      available_at: now,
      locked_until: now + leaseMs,
      last_error: null,
      created_at: now,
    }));
    const added: OutboxEntry[] = [];
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = entries.slice(i, i + INSERT_CHUNK);
      const ids = await this.insertIds(trx, rows.slice(i, i + INSERT_CHUNK));
      for (const [k, { projectId, job }] of chunk.entries()) added.push({ id: ids[k] as number, projectId, envelope: job, attempts: 1 });
    }
    return added;
  }

  /**
   * Inserts rows and returns their ids. SQLite returns them; MySQL the first, the rest following
   * it (InnoDB gives a multi-row INSERT of known length consecutive ids). Should a server number
   * otherwise, `complete` also matches each entry's job id, so a wrong id deletes nothing and the
   * entry is delivered again once its lease ends.
   */
  private async insertIds(trx: Knex.Transaction, rows: object[]): Promise<number[]> {
    if (!supportsRowLocks(this.db)) return ((await trx('outbox').insert(rows).returning('id')) as Array<{ id: number }>).map((r) => Number(r.id));
    const [first] = (await trx('outbox').insert(rows)) as number[];
    return rows.map((_, k) => Number(first) + k);
  }

  /**
   * Leases up to `limit` due entries to this relay. On MySQL, `SKIP LOCKED` lets relays in
   * several processes drain the table side by side without taking the same entry.
   */
  async claim(limit: number, leaseMs: number, exclude: ReadonlySet<number>): Promise<OutboxEntry[]> {
    // READ COMMITTED: no gap locks on the scanned range, which otherwise deadlock with other
    // relays deleting delivered entries (seen with relays in an API and two workers on MariaDB).
    const config: Knex.TransactionConfig = supportsRowLocks(this.db) ? { isolationLevel: 'read committed' } : {};
    return this.db.transaction(async (trx) => {
      const now = nowMs();
      let query = trx<OutboxRow>('outbox')
        .where('available_at', '<=', now)
        .andWhere((q) => q.whereNull('locked_until').orWhere('locked_until', '<', now))
        .orderBy('id')
        .limit(limit)
        .select('id', 'project_id', 'job_name', 'job_id', 'payload', 'trace', 'attempts');
      if (exclude.size > 0) query = query.whereNotIn('id', [...exclude]);
      if (supportsRowLocks(this.db)) query = query.forUpdate().skipLocked();
      const rows = (await query) as OutboxRow[];
      if (rows.length === 0) return [];
      await trx('outbox')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .update({ locked_until: now + leaseMs, attempts: trx.raw('attempts + 1') });
      return rows.map((r) => ({
        id: Number(r.id),
        projectId: r.project_id,
        attempts: r.attempts + 1,
        envelope: { name: r.job_name, jobId: r.job_id, payload: JSON.parse(r.payload), ...(r.trace ? { trace: JSON.parse(r.trace) } : {}) } as JobEnvelope,
      }));
    }, config);
  }

  /**
   * The queue has these entries' jobs: they are done, deleted in one statement (by id and job id,
   * see `insertIds`). A deadlock victim is retried, as InnoDB advises.
   */
  async complete(entries: readonly OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const ids = entries.map((e) => e.id);
    const jobIds = [...new Set(entries.map((e) => e.envelope.jobId))];
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.db('outbox').whereIn('id', ids).whereIn('job_id', jobIds).delete();
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'ER_LOCK_DEADLOCK' || attempt >= 5) throw err;
        await sleep(10 * attempt);
      }
    }
  }

  /** The queue could not take these entries' jobs: try them again at `retryAt`. */
  async release(ids: readonly number[], error: string, retryAt: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db('outbox')
      .whereIn('id', ids)
      .update({ locked_until: null, available_at: retryAt, last_error: error.slice(0, 2000) });
  }

  /** Frees every lease (a single embedded process starting up owns the whole table). */
  async releaseAll(): Promise<void> {
    await this.db('outbox').whereNotNull('locked_until').update({ locked_until: null });
  }

  async countPending(): Promise<number> {
    const row = (await this.db('outbox').count({ n: '*' }).first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }
}
