import coBody from 'co-body';
import type { Middleware } from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../../lib/errors.js';
import { assertSafeJson } from '../../lib/validation.js';
import { nextTurn } from '../../lib/turns.js';

const JSON_TYPES = ['application/json', 'application/merge-patch+json', '+json'];

/** A body from which on the work a request sets off waits for a turn of its own. */
const LARGE_BODY_BYTES = 16 * 1024;

/**
 * Parses a JSON request body into `ctx.state.rawBody`. A request without a body counts as `{}`;
 * a body of another content type is refused with 415, one over the limit with 413, malformed
 * JSON with 400.
 */
export function jsonBody(limitBytes: number): Middleware {
  return async (ctx, next) => {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) {
      ctx.state.rawBody = {};
      return next();
    }
    if (!ctx.is(JSON_TYPES)) {
      throw unsupportedMediaType(
        `This endpoint takes a JSON body; send it with Content-Type: application/json (got "${ctx.get('content-type') || 'none'}").`,
      );
    }
    if (ctx.request.length && ctx.request.length > limitBytes) {
      throw payloadTooLarge(`The request body is ${ctx.request.length} bytes; the limit is ${limitBytes} bytes.`);
    }
    try {
      ctx.state.rawBody = await coBody.json(ctx.req, { limit: limitBytes, strict: true });
    } catch (err) {
      const e = err as { type?: string; status?: number; message?: string };
      if (e.type === 'entity.too.large' || e.status === 413) {
        throw payloadTooLarge(`The request body is over the limit of ${limitBytes} bytes.`);
      }
      if (e.status === 415) throw unsupportedMediaType(`Unsupported body encoding: ${e.message ?? 'unknown'}.`);
      // the parser's message quotes the body, which may hold a secret: say only where it broke
      const position = /position (\d+)/.exec(e.message ?? '')?.[1];
      throw badRequest('malformed_json', `The request body is not valid JSON${position !== undefined ? ` (error at character ${position})` : ''}.`);
    }
    // what a large body sets off (validation, its rows, their statements) runs a request a turn,
    // not all the large bodies that arrived together in one (see `nextTurn`)
    if (ctx.request.length === undefined || ctx.request.length >= LARGE_BODY_BYTES) await nextTurn();
    // Once for every JSON body, before any schema or handler sees it.
    assertSafeJson(ctx.state.rawBody);
    return next();
  };
}
