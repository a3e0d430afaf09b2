import type { Knex } from 'knex';
import type { JobEnvelope } from '../contracts/jobs/catalogue.js';
import type { OutboxRepository } from './repositories/outbox.repository.js';

/** A transaction that records the jobs its rows need beside them. */
export interface OutboxTransaction {
  readonly trx: Knex.Transaction;
  /** Records a job in this transaction: the relay dispatches it once the transaction has committed. */
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
   * Runs `work` in one transaction and commits it; then awaits `afterCommit`, and then wakes
   * the relay if `work` recorded jobs.
   */
  async write<T>(work: (tx: OutboxTransaction) => Promise<T>, afterCommit?: () => void | Promise<void>): Promise<T> {
    let jobs = 0;
    const result = await this.db.transaction((trx) =>
      work({
        trx,
        add: async (projectId, job) => {
          await this.entries.add(trx, projectId, job);
          jobs += 1;
        },
      }),
    );
    await afterCommit?.();
    if (jobs > 0) this.wake();
    return result;
  }
}
