import type { Knex } from 'knex';
import type { JobEnvelope } from '../contracts/jobs/catalogue.js';
import type { OutboxEntry, OutboxRepository } from './repositories/outbox.repository.js';

/**
 * How long the jobs a transaction records are held for the process that wrote them: it delivers
 * them as soon as the transaction commits, within the queue's dispatch timeout; should it die first,
 * any process's relay takes them after this.
 */
export const HANDOFF_LEASE_MS = 30_000;

/** A transaction that records the jobs its rows need beside them. */
export interface OutboxTransaction {
  readonly trx: Knex.Transaction;
  /**
   * Records a job in this transaction: the jobs a transaction records are written together once
   * its work is done, before it commits, and the relay dispatches them once it has committed.
   */
  add(projectId: string, job: JobEnvelope): Promise<void>;
}

/**
 * Writes rows together with the jobs they need (the transactional outbox): the jobs commit or
 * roll back with the rows, and once they have committed they are handed to this process's relay,
 * which dispatches them at once (rather than at its next poll, and without claiming them first).
 */
export class TransactionalOutbox {
  constructor(
    private readonly db: Knex,
    private readonly entries: OutboxRepository,
    private readonly handOff: (entries: OutboxEntry[]) => void,
  ) {}

  /**
   * Runs `work` in one transaction, writes the jobs it recorded (a bulk write records hundreds:
   * one statement per few hundred instead of one each) and commits; then awaits `afterCommit`,
   * and then hands the jobs to the relay.
   */
  async write<T>(work: (tx: OutboxTransaction) => Promise<T>, afterCommit?: () => void | Promise<void>): Promise<T> {
    let jobs: OutboxEntry[] = [];
    const result = await this.db.transaction(async (trx) => {
      const recorded: Array<{ projectId: string; job: JobEnvelope }> = [];
      const done = await work({
        trx,
        add: (projectId, job) => {
          recorded.push({ projectId, job });
          return Promise.resolve();
        },
      });
      jobs = await this.entries.add(trx, recorded, HANDOFF_LEASE_MS);
      return done;
    });
    await afterCommit?.();
    if (jobs.length > 0) this.handOff(jobs);
    return result;
  }
}
