import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { ApiKeys } from '../../core/api-keys.js';
import type { OidcVerifier } from '../../core/registry/identity.js';
import { AppError, forbidden, unauthorized, unavailable } from '../../lib/errors.js';
import { requestLog } from './request-context.js';

/** `Authorization: Token <API_KEY>`: resolves the project the key belongs to. */
export function requireApiKey(apiKeys: ApiKeys): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const match = /^Token\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw unauthorized(
        header === ''
          ? 'Missing credentials: send the header "Authorization: Token <API_KEY>".'
          : 'Malformed Authorization header: expected "Token <API_KEY>".',
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
 * Admin endpoints (`ADMIN_TOKEN`): `Authorization: Bearer <token>`, or Basic auth with the token as
 * password so a browser can open Bull Board.
 */
export function requireAdmin(adminToken: string | null): Middleware {
  return async (ctx, next) => {
    if (adminToken === null) throw forbidden('Admin endpoints are disabled: set ADMIN_TOKEN to enable them.');
    const header = ctx.get('authorization');
    let presented: string | null = null;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const basic = /^Basic\s+(\S+)\s*$/i.exec(header);
    if (bearer) presented = bearer[1] as string;
    else if (basic) {
      const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
      presented = decoded.slice(decoded.indexOf(':') + 1);
    }
    if (presented === null || !sameSecret(presented, adminToken)) {
      throw new AppError(401, 'unauthenticated', 'Admin credentials required (Bearer ADMIN_TOKEN).', undefined, {
        'WWW-Authenticate': 'Basic realm="cairn-admin", charset="UTF-8"',
      });
    }
    await next();
  };
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
