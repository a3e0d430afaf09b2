import { hkdfSync, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { AdminAccess } from '../../core/admin-access.js';

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

/** A session as its cookie names it: which one (what sign-out records), and when it ends. */
interface AdminSession {
  id: string;
  expires: number;
}

const SESSION_VALUE = /^(\d+)\.([\w-]{22})$/;

/** The unexpired session named by the request's cookie, signed with this app's keys; null without one. */
function sessionOf(ctx: Context): AdminSession | null {
  if (!ctx.app.keys) return null;
  const match = SESSION_VALUE.exec(ctx.cookies.get(COOKIE, { signed: true }) ?? '');
  if (!match) return null;
  const expires = Number(match[1]);
  return expires > Date.now() ? { id: match[2] as string, expires } : null;
}

/** True when the request carries an unexpired admin session cookie signed with this app's keys, not signed out. */
export async function hasAdminSession(ctx: Context, access: AdminAccess): Promise<boolean> {
  const session = sessionOf(ctx);
  return session !== null && !(await access.isSignedOut(session.id));
}

/**
 * Signs the browser in: a signed cookie that names the session (a random id, which sign-out
 * records) and when it ends, and holds no secret.
 */
export function startAdminSession(ctx: Context): void {
  const expires = Date.now() + SESSION_MS;
  const id = randomBytes(16).toString('base64url');
  ctx.cookies.set(COOKIE, `${expires}.${id}`, { ...cookieOptions(ctx), maxAge: SESSION_MS });
}

/**
 * Signs the browser out: its session is recorded as ended for every API process, so a copy of
 * the cookie (which stays signed until it expires) opens nothing, and the cookie is cleared.
 */
export async function endAdminSession(ctx: Context, access: AdminAccess): Promise<void> {
  const session = sessionOf(ctx);
  if (session) await access.signOut(session.id, session.expires);
  ctx.cookies.set(COOKIE, null, { ...cookieOptions(ctx), maxAge: 0 });
}

/** True for a page load (a browser's navigation), as opposed to a script's or a client's API call. */
export function wantsPage(ctx: Context): boolean {
  return (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.accepts(['json', 'html']) === 'html';
}
