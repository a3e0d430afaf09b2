import type { Middleware } from 'koa';
import { AppError, registryCode, unavailable } from '../../lib/errors.js';
import { requestLog } from './request-context.js';

/** Registry paths (no version prefix) answer errors as `{error: {code, message}}`. */
export const isRegistryPath = (path: string): boolean => path.startsWith('/projects/');

/**
 * Turns every error into one body shape: `{detail, code, errors?}` on /v1 and /v3,
 * `{error: {code, message}}` on registry paths. Errors Cairn did not raise on purpose become a
 * generic 500 whose detail reveals nothing; the log keeps the cause.
 */
export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}.`);
      }
      // The router's answer to a method the path (or every route) does not take, with Allow set.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = ctx.response.get('Allow');
        throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}${allow ? `; use ${allow}` : ''}.`, undefined, { Allow: allow });
      }
    } catch (err) {
      const error = toAppError(err, ctx.method, ctx.path);
      if (error.status >= 500 && !(err instanceof AppError)) {
        (requestLog(ctx.state) ?? console).error({ err }, 'unhandled error');
      }
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
      ctx.body = isRegistryPath(ctx.path)
        ? { error: { code: registryCode(error.status), message: error.detail } }
        : { detail: error.detail, code: error.code, ...(error.errors ? { errors: error.errors } : {}) };
    }
  };
}

/** Error codes meaning a dependency could not be reached, as opposed to a bug. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'PROTOCOL_CONNECTION_LOST', 'SQLITE_BUSY']);

/** The AppError a client sees for `err`: itself, 503 for an unreachable dependency, a 4xx it carries, else a generic 500. */
export function toAppError(err: unknown, method: string, path: string): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  // mysql2 marks an error that ended the connection `fatal`, some with no code at all ("Can't add
  // new command when connection is in closed state": a query handed to a connection the server
  // went away from before the pool noticed)
  const fatal = (err as { fatal?: unknown }).fatal === true;
  if ((typeof code === 'string' && UNREACHABLE.has(code)) || fatal || (err as Error).name === 'KnexTimeoutError') {
    return unavailable('A dependency of this request is unreachable; retry shortly.');
  }
  // koa-router's allowedMethods and Koa's own ctx.throw raise http-errors with a status.
  const status = (err as { status?: number; statusCode?: number }).status ?? (err as { statusCode?: number }).statusCode;
  if (status === 405) {
    return new AppError(405, 'method_not_allowed', `${method} is not allowed on ${path}.`);
  }
  if (status === 501) {
    return new AppError(405, 'method_not_allowed', `${method} is not supported.`);
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = (err as { expose?: boolean; message?: string }).expose ? (err as Error).message : 'Bad request.';
    return new AppError(status, status === 404 ? 'not_found' : 'bad_request', message);
  }
  return new AppError(500, 'internal', 'Internal server error. The request id in X-Request-Id locates it in the logs.');
}
