import type { Idempotency } from '../core/idempotency.js';
import type { Retention } from '../core/retention.js';
import type { Webhooks } from '../core/webhooks/webhooks.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/**
 * `retention.sweep`: deletes records past their schema's retention and memories long expired (one
 * project, or all), and (a sweep of all projects) webhook deliveries settled more than
 * `webhookLogDays` ago and idempotency keys past their 24 hours.
 */
export const retentionSweepJob =
  (retention: Retention, webhooks: Webhooks, webhookLogDays: number, idempotency: Idempotency): JobHandler<'retention.sweep'> =>
  async (payload, ctx) => {
    const result = await retention.sweep(payload.projectId);
    if (result.deleted > 0 || result.capped) ctx.log.info({ ...result, projectId: payload.projectId }, 'retention sweep deleted records');
    else ctx.log.debug({ ...result, projectId: payload.projectId }, 'retention sweep found nothing to delete');
    if (payload.projectId !== undefined) return;
    const pruned = await webhooks.pruneLog(webhookLogDays);
    if (pruned > 0) ctx.log.info({ pruned }, 'retention sweep pruned the webhook delivery log');
    const keys = await idempotency.sweep();
    if (keys > 0) ctx.log.info({ keys }, 'retention sweep deleted expired idempotency keys');
  };
