import type { Knex } from 'knex';
import type { JobEnvelope } from '../contracts/jobs/catalogue.js';
import type { OutboxRepository } from './repositories/outbox.repository.js';

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
 * roll back with the rows, and once they have committed this process's relay is woken to
 * dispatch them at once rather than at its next poll.
 */
export class TransactionalOutbox {
  constructor(
    private readonly db: Knex,
    private readonly entries: OutboxRepository,
    private readonly wake: () => void,
  ) {}

  /**
   * Runs `work` in one transaction, writes the jobs it recorded (a bulk write records hundreds:
   * one statement per few hundred instead of one each) and commits; then awaits `afterCommit`,
   * and then wakes the relay if `work` recorded jobs.
   */
  async write<T>(work: (tx: OutboxTransaction) => Promise<T>, afterCommit?: () => void | Promise<void>): Promise<T> {
    let jobs = 0;
    const result = await this.db.transaction(async (trx) => {
      const recorded: Array<{ projectId: string; job: JobEnvelope }> = [];
      const done = await work({
        trx,
        add: (projectId, job) => {
          recorded.push({ projectId, job });
          return Promise.resolve();
        },
      });
      await this.entries.add(trx, recorded);
      jobs = recorded.length;
      return done;
    });
    await afterCommit?.();
    if (jobs > 0) this.wake();
    return result;
  }
}
