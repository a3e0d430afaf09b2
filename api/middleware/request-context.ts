import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Outermost middleware: strips trailing slashes, gives each request an id (the caller's `X-Request-Id` when it is sane),
 * a child logger, one access log line and its latency in the metrics, labelled by route
 * template so label cardinality stays bounded.
 */
export function requestContext(log: Logger, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // Most requests never log beyond the access line: make the child logger only when asked.
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ requestId })), configurable: true });
    ctx.set('X-Request-Id', requestId);
    // Trailing slashes are accepted everywhere: `/v3/memories/search/` is `/v3/memories/search`.
    if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? (ctx.status === 404 ? 'unmatched' : ctx.path);
      const labels = { method: ctx.method, route: String(route), status: String(ctx.status) };
      metrics.httpDuration.observe(labels, seconds);
      const level = ctx.status >= 500 ? 'error' : 'info';
      if (log.isLevelEnabled(level)) {
        log[level]({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1e6) / 1e3 }, 'request');
      }
    }
  };
}
