import type { Middleware } from 'koa';
import { failSpan, openSpan, remoteParent, SpanKind, SpanStatusCode } from '../../lib/tracing.js';

/**
 * One server span per request (mounted only while tracing is on), continuing the caller's trace
 * when it sends `traceparent`. Named by method and route template once routing has matched, so
 * `/v1/agents/:name/chat` is one span name whatever names arrive. It ends when the response is
 * done: Koa writes the body after the middleware returns, and a streamed answer takes longer still.
 */
export function traceRequests(): Middleware {
  return async (ctx, next) => {
    const { span, run } = openSpan(ctx.method, {
      kind: SpanKind.SERVER,
      parent: remoteParent(ctx.headers),
      attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol },
    });
    ctx.res.once('close', () => {
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    try {
      await run(next);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (typeof route === 'string') {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
      }
    }
  };
}
