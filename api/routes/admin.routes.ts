import compose from 'koa-compose';
import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { ADMIN_SIGN_OUT_PATH } from '../middleware/admin-session.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues (production, where the queues are BullMQ's). The embedded profile
 * has no BullMQ queues; there the same path answers the in-process queue depths, and the jobs that
 * ended failed with their reasons, as JSON.
 */
export function bullBoard(queues: Queue[], guard: Middleware): Middleware | null {
  if (queues.length === 0) return null;
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q)),
    serverAdapter,
    options: { uiConfig: { miscLinks: [{ text: 'Sign out', url: ADMIN_SIGN_OUT_PATH }] } },
  });
  const board = compose([guard, withoutExternalFonts, serverAdapter.registerPlugin()]);
  return async (ctx, next) => {
    if (ctx.path === BULL_BOARD_PATH || ctx.path.startsWith(`${BULL_BOARD_PATH}/`)) return board(ctx, next);
    return next();
  };
}

const GOOGLE_FONTS_LINK = /<link\b[^>]*\bhref="https:\/\/fonts\.googleapis\.com\/[^>]*>\s*/g;

/**
 * Bull Board's page links its typefaces from Google Fonts, and it has no option to leave them out;
 * an install without Internet access would wait on that request. The page's own stylesheet falls
 * back to the system's sans-serif and monospace fonts, so the link is taken out of the HTML.
 */
const withoutExternalFonts: Middleware = async (ctx, next) => {
  await next();
  if (typeof ctx.body === 'string' && ctx.response.is('html')) ctx.body = ctx.body.replace(GOOGLE_FONTS_LINK, '');
};

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
      200: { description: 'Bull Board UI, or {driver, queues, failed}: the depths, and the jobs that ended failed (newest first, with their reasons)' },
      401: { description: 'Admin token required', schema: ERROR_SCHEMA },
      403: { description: 'Admin endpoints are disabled (ADMIN_TOKEN is not set)', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.body = { driver: queue.kind, queues: await queue.depths(), failed: queue.failed?.() ?? [] };
    },
  });
}
