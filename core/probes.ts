import type { ProbeRow, ProbesRepository } from '../db/repositories/probes.repository.js';
import type { TransactionalOutbox } from '../db/transactional-outbox.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import type { JobContext } from '../contracts/jobs/handlers.js';
import { notFound } from '../lib/errors.js';
import { newId, nowMs, sleep } from '../lib/time.js';

/** A pipeline probe as the API shows it. */
export interface ProbeView {
  id: string;
  status: 'pending' | 'done';
  hold_ms: number;
  attempts: number;
  processed_by: string | null;
  created_at: number;
  processed_at: number | null;
  latency_ms: number | null;
}

const toView = (row: ProbeRow): ProbeView => ({
  id: row.id,
  status: row.status,
  hold_ms: Number(row.hold_ms),
  attempts: Number(row.attempts),
  processed_by: row.processed_by,
  created_at: Number(row.created_at),
  processed_at: row.processed_at == null ? null : Number(row.processed_at),
  latency_ms: row.processed_at == null ? null : Number(row.processed_at) - Number(row.created_at),
});

/**
 * Pipeline probes: a write whose derived work a worker completes. Operators use them to check
 * that the outbox, the queue and the workers move work end to end, and how long that takes.
 */
export class Probes {
  constructor(
    private readonly probes: ProbesRepository,
    private readonly outbox: TransactionalOutbox,
  ) {}

  /** Stores a probe and its job in one transaction. `holdMs` makes the worker hold the job that long. */
  async create(projectId: string, holdMs: number): Promise<ProbeView> {
    const row: ProbeRow = {
      id: newId(),
      project_id: projectId,
      status: 'pending',
      hold_ms: holdMs,
      attempts: 0,
      processed_by: null,
      created_at: nowMs(),
      processed_at: null,
    };
    await this.outbox.write(async (tx) => {
      await this.probes.insert(tx.trx, row);
      await tx.add(projectId, envelope('probe.touch', { projectId, probeId: row.id }));
    });
    return toView(row);
  }

  async get(projectId: string, id: string): Promise<ProbeView> {
    const row = await this.probes.get(projectId, id);
    if (!row) throw notFound(`No probe with id "${id}" in this project.`);
    return toView(row);
  }

  /** The `probe.touch` job. Idempotent: a probe already done is left as it is. */
  async touch(projectId: string, probeId: string, ctx: JobContext): Promise<void> {
    const row = await this.probes.get(projectId, probeId);
    if (!row || row.status === 'done') return;
    await this.probes.recordAttempt(probeId);
    if (row.hold_ms > 0) await sleep(row.hold_ms);
    await this.probes.markDone(probeId, ctx.worker, nowMs());
  }
}
