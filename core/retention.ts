import type { MemoriesRepository } from '../db/repositories/memories.repository.js';
import type { SchemasRepository } from '../db/repositories/schemas.repository.js';
import { nowMs } from '../lib/time.js';
import { utcDay } from './usage.js';
import type { Records } from './memory/records.js';
import type { Retention as RetentionPolicy } from './schemas.js';

const DAY_MS = 24 * 3600 * 1000;

export interface RetentionOptions {
  /** The clock that ages records; tests move it. */
  now?: () => number;
  /** Records deleted per transaction, so no sweep holds a long transaction. */
  batchSize?: number;
  /** Records one sweep looks at, at most; a larger backlog is finished by the next sweeps. */
  maxPerSweep?: number;
  /** Days a memory stays (hidden) after its expiration date before the sweep deletes it (`MEMORY_EXPIRY_GRACE_DAYS`). */
  expiryGraceDays?: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** Schemas with a retention policy that were swept. */
  schemas: number;
  /** Records and expired memories this sweep deleted (one another sweep deleted first is not counted). */
  deleted: number;
  /** True when the sweep stopped at `maxPerSweep`; the next sweep goes on with what is left. */
  capped: boolean;
}

/**
 * Applies each schema's retention (the latest version's, to all of its records): `max_age_days`
 * deletes records created before now − N days; `max_count` keeps the newest N records per
 * (schema, user_id), a null user_id being a group of its own. Then it deletes the memories whose
 * expiration date passed more than `expiryGraceDays` ago (mem0's expiration hides them first).
 * Both go the way of a user delete (history, webhook, then the vector by `memory.index`), in
 * bounded batches. Several sweeps may run at once:
 * the ids to delete are a pure function of the data (age, rank), and a row someone else deleted
 * first is skipped, so every record is deleted — and counted — once.
 */
export class Retention {
  private readonly now: () => number;
  private readonly batchSize: number;
  private readonly maxPerSweep: number;
  private readonly expiryGraceDays: number;

  constructor(
    private readonly schemas: SchemasRepository,
    private readonly rows: MemoriesRepository,
    private readonly records: Records,
    options: RetentionOptions = {},
  ) {
    this.now = options.now ?? nowMs;
    this.batchSize = options.batchSize ?? 500;
    this.maxPerSweep = options.maxPerSweep ?? 50_000;
    this.expiryGraceDays = options.expiryGraceDays ?? 30;
  }

  /** Sweeps one project, or every project when `projectId` is omitted. */
  async sweep(projectId?: string): Promise<SweepResult> {
    const schemas = await this.schemas.withRetention(projectId);
    const result: SweepResult = { schemas: schemas.length, deleted: 0, capped: false };
    const budget = { left: this.maxPerSweep };
    for (const schema of schemas) {
      const policy = JSON.parse(schema.retention) as RetentionPolicy;
      const scope = { projectId: schema.project_id, schemaId: schema.schema_id, schemaName: schema.name };
      const rules: Array<(limit: number) => Promise<string[]>> = [];
      if (policy.max_age_days !== undefined) {
        const cutoff = this.now() - policy.max_age_days * DAY_MS;
        rules.push((limit) => this.rows.idsCreatedBefore(scope, cutoff, limit));
      }
      if (policy.max_count !== undefined) {
        const keep = policy.max_count;
        rules.push((limit) => this.rows.idsBeyondNewest(scope, keep, limit));
      }
      for (const select of rules) {
        if (!(await this.drain(budget, result, async (limit) => [{ projectId: schema.project_id, ids: await select(limit) }]))) return result;
      }
    }
    // expired on day D (shown through D): deleted once D is more than the grace period ago
    const before = utcDay(this.now() - this.expiryGraceDays * DAY_MS);
    await this.drain(budget, result, async (limit) => byProject(await this.rows.expiredBefore(before, limit, projectId)));
    return result;
  }

  /**
   * Deletes, batch by batch, what `select` finds, until it finds less than a batch or the sweep's
   * budget is spent (then `capped` is set and false returned).
   */
  private async drain(
    budget: { left: number },
    result: SweepResult,
    select: (limit: number) => Promise<Array<{ projectId: string; ids: string[] }>>,
  ): Promise<boolean> {
    for (;;) {
      if (budget.left <= 0) {
        result.capped = true;
        return false;
      }
      const limit = Math.min(this.batchSize, budget.left);
      const groups = await select(limit);
      const found = groups.reduce((n, g) => n + g.ids.length, 0);
      budget.left -= found;
      for (const { projectId, ids } of groups) if (ids.length > 0) result.deleted += await this.records.removeExpired(projectId, ids);
      if (found < limit) return true;
    }
  }
}

/** Memory ids grouped by their project, as each delete runs in one project. */
function byProject(rows: Array<{ project_id: string; id: string }>): Array<{ projectId: string; ids: string[] }> {
  const groups = new Map<string, string[]>();
  for (const row of rows) groups.set(row.project_id, [...(groups.get(row.project_id) ?? []), row.id]);
  return [...groups].map(([projectId, ids]) => ({ projectId, ids }));
}
