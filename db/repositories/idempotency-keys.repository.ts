import type { Knex } from 'knex';

/** One idempotency key of a project, as stored. */
export interface IdempotencyKeyRow {
  project_id: string;
  idempotency_key: string;
  operation: string;
  fingerprint: string;
  request_id: string;
  started_at: number | null;
  status: number | null;
  response: string | null;
  locked_until: number;
  expires_at: number;
}

/**
 * The answers of idempotent writes, by (project, key). Every change is conditional on the request
 * that owns the key (`request_id`) and on its answer being unrecorded, so API processes and
 * workers racing on one key never overwrite each other.
 */
export class IdempotencyKeysRepository {
  constructor(private readonly db: Knex) {}

  /** Inserts the key unless it exists, and returns the row that is there now (ours when `request_id` is ours). */
  async claim(row: Omit<IdempotencyKeyRow, 'started_at' | 'status' | 'response'>): Promise<IdempotencyKeyRow> {
    await this.db('idempotency_keys').insert(row).onConflict(['project_id', 'idempotency_key']).ignore();
    const found = await this.get(row.project_id, row.idempotency_key);
    // deleted between the two statements (swept, released): the caller tries again
    return found ?? { ...row, request_id: '', started_at: null, status: null, response: null };
  }

  async get(projectId: string, key: string): Promise<IdempotencyKeyRow | undefined> {
    const row = (await this.db('idempotency_keys').where({ project_id: projectId, idempotency_key: key }).first()) as IdempotencyKeyRow | undefined;
    return row && { ...row, started_at: row.started_at === null ? null : Number(row.started_at), locked_until: Number(row.locked_until), expires_at: Number(row.expires_at) };
  }

  /** Hands a key whose work never started, past `locked_until`, from `from` to `to`; true when this call did. */
  async takeOver(projectId: string, key: string, from: string, to: string, now: number, lockedUntil: number): Promise<boolean> {
    const changed = await this.pending(projectId, key, from)
      .whereNull('started_at')
      .where('locked_until', '<=', now)
      .update({ request_id: to, locked_until: lockedUntil });
    return changed > 0;
  }

  /** Marks the work of `requestId` started (no one may take the key over any more); false when the key is no longer its. */
  async start(projectId: string, key: string, requestId: string, now: number): Promise<boolean> {
    return (await this.pending(projectId, key, requestId).update({ started_at: now })) > 0;
  }

  /** Records the answer of `requestId`; false when the key is no longer its or is already answered. */
  async answer(projectId: string, key: string, requestId: string, status: number, response: string): Promise<boolean> {
    return (await this.pending(projectId, key, requestId).update({ status, response })) > 0;
  }

  /** Deletes the unanswered key of `requestId` (its work failed without storing), so a retry runs afresh. */
  async release(projectId: string, key: string, requestId: string): Promise<void> {
    await this.pending(projectId, key, requestId).delete();
  }

  /** Deletes one key if it has expired by `now`. */
  async deleteIfExpired(projectId: string, key: string, now: number): Promise<void> {
    await this.db('idempotency_keys').where({ project_id: projectId, idempotency_key: key }).where('expires_at', '<=', now).delete();
  }

  /** Deletes up to `limit` keys expired by `now`; returns how many. */
  async deleteExpired(now: number, limit: number): Promise<number> {
    const rows = (await this.db('idempotency_keys').where('expires_at', '<=', now).limit(limit).select('project_id', 'idempotency_key')) as Array<{ project_id: string; idempotency_key: string }>;
    if (rows.length === 0) return 0;
    return this.db('idempotency_keys')
      .whereIn(
        ['project_id', 'idempotency_key'],
        rows.map((r) => [r.project_id, r.idempotency_key]),
      )
      .where('expires_at', '<=', now)
      .delete();
  }

  /**
   * Makes every unanswered key free to take over at once: for one process that owns all work
   * (embedded), whose jobs died with its previous run.
   */
  async releaseAll(): Promise<void> {
    await this.db('idempotency_keys').whereNull('status').update({ started_at: null, locked_until: 0 });
  }

  private pending(projectId: string, key: string, requestId: string): Knex.QueryBuilder {
    return this.db('idempotency_keys').where({ project_id: projectId, idempotency_key: key, request_id: requestId }).whereNull('status');
  }
}
