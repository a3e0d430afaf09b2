import type { Reconciliation } from '../core/reconcile.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `index.reconcile`: re-queues stuck indexing work and re-indexes rows whose vectors are missing. */
export const indexReconcileJob =
  (reconciliation: Reconciliation): JobHandler<'index.reconcile'> =>
  async (_payload, ctx) => {
    const report = await reconciliation.pass(ctx.log);
    const repaired = report.memoriesRequeued + report.memoriesMissing + report.reembeddingsRequeued + report.documentsRequeued + report.documentsReprocessed;
    ctx.log[repaired > 0 ? 'info' : 'debug'](report, 'index reconciliation pass');
  };
