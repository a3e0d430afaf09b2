import type { Webhooks } from '../core/webhooks/webhooks.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `webhook.deliver`: sends one recorded mem0 webhook delivery, signed; throws (and is retried) while the receiver fails. */
export const webhookDeliverJob =
  (webhooks: Webhooks): JobHandler<'webhook.deliver'> =>
  (payload, ctx) =>
    webhooks.deliver(payload.projectId, payload.deliveryId, ctx);
