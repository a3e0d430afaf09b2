import type { Middleware } from 'koa';
import type { AdminAccess } from '../../core/admin-access.js';
import type { ApiKeys } from '../../core/api-keys.js';
import type { ConsoleAccess } from '../../core/console-access.js';
import type { OidcVerifier } from '../../core/registry/identity.js';
import { AppError, forbidden, rateLimited, unauthorized, unavailable } from '../../lib/errors.js';
import { ADMIN_SIGN_IN_PATH, hasAdminSession, startAdminSession, wantsPage } from './admin-session.js';
import { CONSOLE_HEADER, consoleSessionOf, fromConsole } from './console-session.js';
import { requestLog } from './request-context.js';

/**
 * `Authorization: Token <API_KEY>`: resolves the project the key belongs to. With `bearer`, the
 * key may also come as `Bearer <API_KEY>`, the scheme MCP clients send (the REST API keeps to
 * `Token`, which registry paths' ID tokens are told apart from). With `consoleAccess`, a request
 * without an Authorization header may instead carry the web console's session cookie, taken only
 * together with the console's header (X-Cairn-Console: 1) and checked against its key on every
 * request, so it stops working when the key is revoked.
 */
export function requireApiKey(apiKeys: ApiKeys, { bearer = false, consoleAccess }: { bearer?: boolean; consoleAccess?: ConsoleAccess } = {}): Middleware {
  const scheme = bearer ? /^(?:Token|Bearer)\s+(\S+)\s*$/i : /^Token\s+(\S+)\s*$/i;
  const expected = bearer ? '"Token <API_KEY>" (or "Bearer <API_KEY>")' : '"Token <API_KEY>"';
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const session = header === '' && consoleAccess ? consoleSessionOf(ctx) : null;
    if (session !== null && consoleAccess) {
      if (!fromConsole(ctx)) {
        throw new AppError(403, 'console_header_required', `The console's session cookie is accepted only from the console's own scripts, which send the header "${CONSOLE_HEADER}: 1"; other clients send "Authorization: Token <API_KEY>".`);
      }
      const principal = await consoleAccess.principalOf(session);
      if (!principal) throw unauthorized('The console session has ended (signed out, expired, or its API key was revoked): sign in again.', 'console_session_ended');
      ctx.state.principal = principal;
      return next();
    }
    const match = scheme.exec(header);
    if (!match) {
      throw unauthorized(
        header === ''
          ? 'Missing credentials: send the header "Authorization: Token <API_KEY>".'
          : `Malformed Authorization header: expected ${expected}.`,
        'missing_credentials',
      );
    }
    let principal;
    try {
      principal = await apiKeys.authenticate(match[1] as string);
    } catch (err) {
      requestLog(ctx.state)?.warn({ err }, 'API key lookup failed');
      throw unavailable('Credentials cannot be checked right now because the database is unreachable; retry shortly.');
    }
    if (!principal) throw unauthorized('Invalid API key.', 'invalid_api_key');
    ctx.state.principal = principal;
    await next();
  };
}

/**
 * Registry paths: `Authorization: Bearer <ID_TOKEN>`, an OIDC ID token; puts the caller it names in
 * `ctx.state.principal`. A project API key is refused here, as is any other scheme.
 */
export function requireIdToken(verifier: OidcVerifier): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const missing = verifier.missingConfiguration();
    const refuse = (message: string) =>
      new AppError(401, 'unauthenticated', message, undefined, { 'WWW-Authenticate': 'Bearer realm="cairn-registry"' });
    if (missing !== null) throw refuse(missing);
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      if (header === '') throw refuse('Missing credentials: registry operations take an OIDC ID token, sent as "Authorization: Bearer <ID_TOKEN>".');
      if (/^Token\s/i.test(header)) {
        throw refuse('Registry operations do not take project API keys: send an OIDC ID token as "Authorization: Bearer <ID_TOKEN>".');
      }
      throw refuse('Malformed Authorization header: expected "Bearer <ID_TOKEN>".');
    }
    ctx.state.principal = await verifier.verify(match[1] as string);
    await next();
  };
}

/**
 * Admin endpoints (`ADMIN_TOKEN`): the session cookie the sign-in page sets, `Authorization:
 * Bearer <token>`, or Basic auth with the token as password. A page load without any of them is
 * sent to the sign-in page (unless `challengePages`, for the page that asks with the browser's
 * password prompt); anything else gets a 401 with a Basic challenge. A token is a try counted
 * with the sign-in form's (see AdminAccess): a client over the limit gets 429, its token unchecked.
 * A page loaded with Basic credentials also signs the browser in, so the board's own fetches
 * (which a browser will not send URL credentials with) carry the cookie.
 */
export function requireAdmin(access: AdminAccess, { challengePages = false } = {}): Middleware {
  return async (ctx, next) => {
    if (!access.enabled) throw forbidden('Admin endpoints are disabled: set ADMIN_TOKEN to enable them.');
    if (await hasAdminSession(ctx, access)) return next();
    const header = ctx.get('authorization');
    if (header === '' && wantsPage(ctx) && !challengePages) return ctx.redirect(ADMIN_SIGN_IN_PATH);
    let presented: string | null = null;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const basic = /^Basic\s+(\S+)\s*$/i.exec(header);
    if (bearer) presented = bearer[1] as string;
    else if (basic) {
      const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
      presented = decoded.slice(decoded.indexOf(':') + 1);
    }
    const tried = presented === null ? null : await access.tryToken(ctx.ip, presented);
    if (tried?.limited) {
      throw rateLimited('Too many wrong admin tokens from this address: none is checked until the minute is over.', tried.retryAfterSeconds);
    }
    if (!tried?.right) {
      throw new AppError(401, 'unauthenticated', 'Admin credentials required (Bearer ADMIN_TOKEN).', undefined, {
        'WWW-Authenticate': 'Basic realm="cairn-admin", charset="UTF-8"',
      });
    }
    if (basic && wantsPage(ctx)) startAdminSession(ctx);
    await next();
  };
}
