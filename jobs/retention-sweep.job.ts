import type { Retention } from '../core/retention.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `retention.sweep`: deletes records past their schema's retention and memories long expired (one project, or all). */
export const retentionSweepJob =
  (retention: Retention): JobHandler<'retention.sweep'> =>
  async (payload, ctx) => {
    const result = await retention.sweep(payload.projectId);
    if (result.deleted > 0 || result.capped) ctx.log.info({ ...result, projectId: payload.projectId }, 'retention sweep deleted records');
    else ctx.log.debug({ ...result, projectId: payload.projectId }, 'retention sweep found nothing to delete');
  };
