/** One field-level problem in a request, located by a JSON pointer. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * The one error type Cairn throws on purpose. `status` is the HTTP status, `code` a stable
 * snake_case identifier clients can branch on, `detail` a sentence saying what to fix.
 */
export class AppError extends Error {
  readonly expose = true;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export const badRequest = (code: string, detail: string, errors?: FieldError[]): AppError =>
  new AppError(400, code, detail, errors);

/**
 * Runs `check` on every item of a batch request (the item at `${at}/${index}`) and returns what it
 * returned; when it threw a 400 for any item, throws one 400 `validation_failed` listing the
 * problems of every bad item, located by index, so that a batch is accepted or refused whole.
 * A 400 without field errors is listed at its item's path.
 */
export function checkBatch<T, R>(items: readonly T[], at: string, what: string, check: (item: T, path: string) => R): R[] {
  const results: R[] = [];
  const errors: FieldError[] = [];
  let bad = 0;
  items.forEach((item, index) => {
    const path = `${at}/${index}`;
    try {
      results.push(check(item, path));
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      bad += 1;
      errors.push(...(err.errors ?? [{ path, message: err.detail }]));
    }
  });
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw badRequest('validation_failed', `${bad} of ${items.length} ${what} are invalid, so none was stored: ${first.path} ${first.message}${more}.`, errors);
  }
  return results;
}

export const unauthorized = (detail: string, code = 'unauthenticated'): AppError =>
  new AppError(401, code, detail, undefined, { 'WWW-Authenticate': 'Token' });

export const forbidden = (detail: string): AppError => new AppError(403, 'forbidden', detail);

export const notFound = (detail: string, code = 'not_found'): AppError => new AppError(404, code, detail);

export const conflict = (detail: string, code = 'conflict'): AppError => new AppError(409, code, detail);

export const payloadTooLarge = (detail: string): AppError => new AppError(413, 'payload_too_large', detail);

export const unsupportedMediaType = (detail: string): AppError =>
  new AppError(415, 'unsupported_media_type', detail);

export const rateLimited = (detail: string, retryAfterSeconds: number): AppError =>
  new AppError(429, 'rate_limited', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });

/** A dependency (database, Redis, Milvus, a model provider) is unreachable: retry later. */
export const unavailable = (detail: string, retryAfterSeconds = 5): AppError =>
  new AppError(503, 'service_unavailable', detail, undefined, { 'Retry-After': String(retryAfterSeconds) });

/** Registry paths speak gRPC-style codes; this maps an HTTP status onto them. */
export function registryCode(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return 'invalid_argument';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'invalid_argument';
    case 409:
      return 'conflict';
    case 429:
      return 'resource_exhausted';
    case 503:
      return 'unavailable';
    default:
      return 'internal';
  }
}

/** AppError codes that are 4xx to an API caller but, for background work, only wait on an operator (e.g. model files). */
const OPERATOR_FIXABLE = new Set(['embed_model_unavailable']);

/**
 * Whether background work that failed with `err` may succeed if tried again later: an unreachable
 * or failing dependency (503, 5xx, 408, 429, timeouts, connection errors), a model or key an
 * operator has yet to provide, or anything not known to be permanent. False only for an error that
 * blames the input: a 4xx AppError (other than 408/429) such as a provider rejecting the text.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof AppError) {
    if (OPERATOR_FIXABLE.has(err.code)) return true;
    return err.status >= 500 || err.status === 408 || err.status === 429 || err.status < 400;
  }
  return true;
}
