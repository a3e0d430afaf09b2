import compose from 'koa-compose';
import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues (production, where the queues are BullMQ's). The embedded profile
 * has no BullMQ queues; there the same path answers the in-process queue depths as JSON.
 */
export function bullBoard(queues: Queue[], guard: Middleware): Middleware | null {
  if (queues.length === 0) return null;
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter });
  const board = compose([guard, serverAdapter.registerPlugin()]);
  return async (ctx, next) => {
    if (ctx.path === BULL_BOARD_PATH || ctx.path.startsWith(`${BULL_BOARD_PATH}/`)) return board(ctx, next);
    return next();
  };
}

/** The embedded profile's answer at /admin/queues. */
export function queueDepthRoute(queue: QueueDriver): RouteSpec {
  return route({
    method: 'get',
    path: BULL_BOARD_PATH,
    operationId: 'adminQueues',
    summary: 'Bull Board (production profile); queue depths as JSON on the embedded profile.',
    tag: 'Operations',
    auth: 'admin',
    responses: {
      200: { description: 'Bull Board UI, or {driver, queues}' },
      401: { description: 'Admin token required', schema: ERROR_SCHEMA },
      403: { description: 'Admin endpoints are disabled (ADMIN_TOKEN is not set)', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.body = { driver: queue.kind, queues: await queue.depths() };
    },
  });
}
