import type { Webhooks } from '../../core/webhooks/webhooks.js';
import { ownProject } from '../own-project.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { PAGING_QUERY } from '../schemas/common.js';
import { CREATE_WEBHOOK, DELIVERY_VIEW, UPDATE_WEBHOOK, WEBHOOK_VIEW } from '../schemas/webhooks.js';

// mem0's webhook endpoints, on the paths mem0's clients call (under a project id, which must be
// the caller's own), plus Cairn's delivery log.

const TAG = 'Webhooks (mem0 compatible)';
const invalid = { 400: { description: 'Invalid input, or a url the address rules refuse', schema: ERROR_SCHEMA } };
const notFoundResponse = { 404: { description: 'No such webhook (or project) for this key', schema: ERROR_SCHEMA } };

/** mem0-compatible webhook CRUD and the delivery log. */
export function webhookRoutes({ webhooks }: { webhooks: Webhooks }): RouteSpec[] {
  const list = route({
    method: 'get',
    path: '/api/v1/webhooks/projects/:projectId',
    operationId: 'listWebhooks',
    summary: "List the project's webhooks, newest first (their secrets are never shown again).",
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Webhooks', schema: { type: 'array', items: WEBHOOK_VIEW } }, ...notFoundResponse },
    async handler(ctx) {
      ctx.body = await webhooks.list(ownProject(ctx.state.principal.projectId, String(ctx.params.projectId)));
    },
  });

  const create = route({
    method: 'post',
    path: '/api/v1/webhooks/projects/:projectId',
    operationId: 'createWebhook',
    summary:
      'Create a webhook: memory_add, memory_update and memory_delete events are POSTed to url as JSON, signed with the secret this answer shows once (X-Cairn-Signature: sha256=HMAC-SHA256(secret, raw body) in hex; X-Cairn-Timestamp: unix seconds of the send).',
    tag: TAG,
    auth: 'token',
    body: CREATE_WEBHOOK,
    responses: {
      201: { description: 'The webhook with its signing secret (shown only here)', schema: { ...WEBHOOK_VIEW, properties: { ...WEBHOOK_VIEW.properties, secret: { type: 'string' } } } },
      ...invalid,
      ...notFoundResponse,
    },
    async handler(ctx) {
      const projectId = ownProject(ctx.state.principal.projectId, String(ctx.params.projectId));
      ctx.status = 201;
      ctx.body = await webhooks.create(projectId, ctx.state.body);
    },
  });

  const get = route({
    method: 'get',
    path: '/api/v1/webhooks/:id',
    operationId: 'getWebhook',
    summary: 'Get a webhook.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The webhook', schema: WEBHOOK_VIEW }, ...notFoundResponse },
    async handler(ctx) {
      ctx.body = await webhooks.get(ctx.state.principal.projectId, String(ctx.params.id));
    },
  });

  const update = route({
    method: 'put',
    path: '/api/v1/webhooks/:id',
    operationId: 'updateWebhook',
    summary: "Change a webhook's name, url or event types (its secret stays).",
    tag: TAG,
    auth: 'token',
    body: UPDATE_WEBHOOK,
    responses: {
      200: { description: 'Updated', schema: { ...WEBHOOK_VIEW, properties: { ...WEBHOOK_VIEW.properties, message: { type: 'string' } } } },
      ...invalid,
      ...notFoundResponse,
    },
    async handler(ctx) {
      const updated = await webhooks.update(ctx.state.principal.projectId, String(ctx.params.id), ctx.state.body);
      ctx.body = { message: 'Webhook updated successfully', ...updated };
    },
  });

  const remove = route({
    method: 'delete',
    path: '/api/v1/webhooks/:id',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook with its delivery log; events not yet delivered are dropped.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'Deleted', schema: { type: 'object', properties: { message: { type: 'string' } } } }, ...notFoundResponse },
    async handler(ctx) {
      await webhooks.delete(ctx.state.principal.projectId, String(ctx.params.id));
      ctx.body = { message: 'Webhook deleted successfully' };
    },
  });

  const deliveries = route({
    method: 'get',
    path: '/api/v1/webhooks/:id/deliveries',
    operationId: 'webhookDeliveries',
    summary: "Cairn's delivery log of a webhook, newest first: each event's status, attempts, the receiver's last status code and error.",
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Deliveries', schema: { type: 'object', properties: { results: { type: 'array', items: DELIVERY_VIEW } } } }, ...invalid, ...notFoundResponse },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { results: await webhooks.deliveries(ctx.state.principal.projectId, String(ctx.params.id), limit, offset) };
    },
  });

  return [list, create, get, update, remove, deliveries];
}
