import type { Middleware } from 'koa';
import { badRequest } from '../../lib/errors.js';

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * Refuses a path or query string whose percent-encoding is not UTF-8 text: an escaped lone
 * surrogate (`%ED%A0%80`) or any other invalid byte sequence would otherwise be decoded to
 * replacement characters and stored, so that the value never matches again.
 */
export function wellFormedUri(): Middleware {
  return async (ctx, next) => {
    for (const [part, raw] of [
      ['path', ctx.path],
      ['query string', ctx.querystring],
    ] as const) {
      if (raw === '' || !raw.includes('%')) continue;
      if (BAD_ESCAPE.test(raw)) {
        throw badRequest('malformed_uri', `The ${part} holds a "%" that does not start a percent-encoded byte (%XX); send a literal "%" as %25.`);
      }
      try {
        decodeURIComponent(raw);
      } catch {
        throw badRequest('invalid_unicode', `The ${part} holds percent-encoded bytes that are not UTF-8 text (such as an encoded lone surrogate, %ED%A0%80).`);
      }
    }
    await next();
  };
}
