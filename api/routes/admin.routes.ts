import compose from 'koa-compose';
import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { FailedJob, QueueDepth, QueueDriver } from '../../contracts/jobs/queue.js';
import { ADMIN_SIGN_OUT_PATH, wantsPage } from '../middleware/admin-session.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues (production, where the queues are BullMQ's). The embedded profile
 * has no BullMQ queues; there the same path answers the in-process queue depths, and the jobs that
 * ended failed with their reasons: a page for a browser, JSON for other clients.
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
    summary: 'Bull Board (production profile); on the embedded profile the in-process queue depths and failed jobs, as a page for a browser and as JSON otherwise.',
    tag: 'Operations',
    auth: 'admin',
    responses: {
      200: { description: 'Bull Board UI, or {driver, queues, failed}: the depths, and the jobs that ended failed (newest first, with their reasons)' },
      401: { description: 'Admin token required', schema: ERROR_SCHEMA },
      403: { description: 'Admin endpoints are disabled (ADMIN_TOKEN is not set)', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const depths = { driver: queue.kind, queues: await queue.depths(), failed: queue.failed?.() ?? [] };
      if (!wantsPage(ctx)) {
        ctx.body = depths;
        return;
      }
      ctx.type = 'html';
      // the page loads nothing and may be framed by no one
      ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      ctx.set('Cache-Control', 'no-store');
      ctx.body = depthsPage(depths.queues, depths.failed);
    },
  });
}

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The embedded profile's board for a person: the in-process queues' depths and the jobs that
 * ended failed with their reasons, and the way to the console's operations page, which shows each
 * project's pending and failed memories and documents.
 */
function depthsPage(queues: QueueDepth[], failed: FailedJob[]): string {
  const cell = (value: string | number) => `<td>${escapeHtml(String(value))}</td>`;
  const depthRows = queues.map((q) => `<tr><th scope="row">${escapeHtml(q.queue)}</th>${[q.waiting, q.active, q.delayed, q.failed, q.completed].map(cell).join('')}</tr>`).join('\n');
  const failedRows = failed.map((f) => `<tr>${[f.queue, f.name, f.id, f.reason, f.attempts, f.failed_at].map(cell).join('')}</tr>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Queues · Cairn</title>
<style>
  :root { color-scheme: light dark; }
  body { margin: 2rem auto; max-width: 60rem; padding: 0 1rem; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
  th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #8885; overflow-wrap: anywhere; }
  td { font-variant-numeric: tabular-nums; }
  a { color: #0f6f64; }
  @media (prefers-color-scheme: dark) { a { color: #5fd3c3; } }
</style>
</head>
<body>
<header>
  <h1>Queues</h1>
  <p>The embedded profile runs its jobs in this process. <a href="/console/operations">The console's Operations page</a> shows each project's pending and failed memories and documents with their reasons. <a href="${ADMIN_SIGN_OUT_PATH}">Sign out</a></p>
</header>
<main>
<table>
  <caption>Jobs by queue</caption>
  <thead><tr><th scope="col">Queue</th><th scope="col">Waiting</th><th scope="col">Active</th><th scope="col">Delayed</th><th scope="col">Failed</th><th scope="col">Completed</th></tr></thead>
  <tbody>
${depthRows}
  </tbody>
</table>
<h2>Jobs that ended failed</h2>
${
  failed.length === 0
    ? '<p>None since the process started.</p>'
    : `<table>
  <thead><tr><th scope="col">Queue</th><th scope="col">Job</th><th scope="col">Id</th><th scope="col">Reason</th><th scope="col">Attempts</th><th scope="col">Failed at</th></tr></thead>
  <tbody>
${failedRows}
  </tbody>
</table>`
}
</main>
</body>
</html>
`;
}
