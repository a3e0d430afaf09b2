import type { UsageRepository } from '../db/repositories/usage.repository.js';
import { badRequest } from '../lib/errors.js';

/** Metered operations. `memory.add`: one per stored record or memory (direct, extracted or via mem0 add). */
export const METERED = ['memory.add'] as const;
export type MeteredOperation = (typeof METERED)[number];

/** The UTC day of an epoch-ms time, as counters key it. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export interface UsageReport {
  from: string;
  to: string;
  totals: Record<string, number>;
  days: Array<{ day: string; operation: string; count: number }>;
}

/** Usage of a project by operation and day. */
export class Usage {
  constructor(private readonly counters: UsageRepository) {}

  /** Counts between two UTC days, inclusive; default: the last 30 days. */
  async report(projectId: string, from?: string, to?: string, now = Date.now()): Promise<UsageReport> {
    const until = to ?? utcDay(now);
    const since = from ?? utcDay(Date.parse(`${until}T00:00:00Z`) - 29 * 86_400_000);
    if (since > until) throw badRequest('invalid_range', `from (${since}) is after to (${until}).`);
    const rows = await this.counters.list(projectId, since, until);
    const totals: Record<string, number> = Object.fromEntries(METERED.map((op) => [op, 0]));
    for (const row of rows) totals[row.operation] = (totals[row.operation] ?? 0) + Number(row.count);
    return { from: since, to: until, totals, days: rows.map((r) => ({ day: r.day, operation: r.operation, count: Number(r.count) })) };
  }
}
