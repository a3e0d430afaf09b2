import { hkdfSync } from 'node:crypto';
import type { Context } from 'koa';

/** Where the admin pages live; the session cookie is sent nowhere else. */
export const ADMIN_PATH = '/admin';
export const ADMIN_SIGN_IN_PATH = `${ADMIN_PATH}/sign-in`;
export const ADMIN_BASIC_SIGN_IN_PATH = `${ADMIN_SIGN_IN_PATH}/basic`;
export const ADMIN_SIGN_OUT_PATH = `${ADMIN_PATH}/sign-out`;

const COOKIE = 'cairn_admin';
/** How long a sign-in lasts: a working day, after which the sign-in page asks again. */
const SESSION_MS = 12 * 60 * 60 * 1000;

/**
 * The keys Koa signs cookies with (`app.keys`), derived from ADMIN_TOKEN rather than a setting of
 * their own: every API process behind a balancer derives the same key with nothing more to
 * configure, changing ADMIN_TOKEN signs every browser out, and anyone who could forge a cookie
 * with it holds the token that opens the same pages anyway. HKDF keeps the token itself out of
 * the HMAC, so a cookie's signature says nothing about it.
 */
export function adminSessionKeys(adminToken: string): string[] {
  return [Buffer.from(hkdfSync('sha256', adminToken, 'cairn', 'admin session cookie', 32)).toString('base64url')];
}

const cookieOptions = (ctx: Context) => ({
  signed: true,
  httpOnly: true,
  // The board's own pages and fetches are same-site, so Strict costs nothing and no other site
  // can make a browser send the cookie (the board's API can retry, clean and pause queues).
  sameSite: 'strict' as const,
  path: ADMIN_PATH,
  secure: ctx.secure,
});

/** True when the request carries an unexpired admin session cookie signed with this app's keys. */
export function hasAdminSession(ctx: Context): boolean {
  if (!ctx.app.keys) return false;
  const expires = Number(ctx.cookies.get(COOKIE, { signed: true }));
  return Number.isFinite(expires) && expires > Date.now();
}

/** Signs the browser in: a signed cookie that names when the sign-in ends (and holds no secret). */
export function startAdminSession(ctx: Context): void {
  const expires = Date.now() + SESSION_MS;
  ctx.cookies.set(COOKIE, String(expires), { ...cookieOptions(ctx), maxAge: SESSION_MS });
}

/** Signs the browser out: the cookie and its signature are cleared. */
export function endAdminSession(ctx: Context): void {
  ctx.cookies.set(COOKIE, null, { ...cookieOptions(ctx), maxAge: 0 });
}

/** True for a page load (a browser's navigation), as opposed to a script's or a client's API call. */
export function wantsPage(ctx: Context): boolean {
  return (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.accepts(['json', 'html']) === 'html';
}
