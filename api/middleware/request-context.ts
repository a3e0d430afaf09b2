import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Paths a load balancer or orchestrator asks every few seconds: their answers are logged at debug. */
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

interface RequestState {
  requestId: string;
  baseLog: Logger;
  requestLog?: Logger;
}

/** The request's logger (bound to its request id), made on first use: most requests never need it. */
export function requestLog(state: Record<string, unknown>): Logger | undefined {
  const s = state as Partial<RequestState>;
  if (!s.baseLog) return undefined;
  return (s.requestLog ??= s.baseLog.child({ requestId: s.requestId }));
}

/**
 * Outermost middleware: strips trailing slashes, gives each request an id (the caller's
 * `X-Request-Id` when it is sane), one access log line (at debug for `/healthz` and `/readyz`
 * probes that answer) and its latency in the metrics, labelled
 * by route template (or `unmatched`) so label cardinality stays bounded whatever paths arrive.
 */
export function requestContext(log: Logger, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.baseLog = log;
    ctx.set('X-Request-Id', requestId);
    // Trailing slashes are accepted everywhere: `/v3/memories/search/` is `/v3/memories/search`.
    if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      metrics.observeHttp(ctx.method, typeof route === 'string' ? route : 'unmatched', ctx.status, seconds);
      // a probe that answers is routine; one that fails (a 503 from /readyz) is logged as any 5xx
      const level = ctx.status >= 500 ? 'error' : PROBES.has(ctx.path) ? 'debug' : 'info';
      if (log.isLevelEnabled(level)) {
        log[level]({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1e6) / 1e3 }, 'request');
      }
    }
  };
}
