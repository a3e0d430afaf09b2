import type { Context } from 'koa';

/** Where the console's pages and its own endpoints live. */
export const CONSOLE_PATH = '/console';
export const CONSOLE_API_PATH = `${CONSOLE_PATH}/api`;

/**
 * The header the console sends with every API call its session cookie authenticates. A page of
 * another site cannot send a custom header to Cairn without a CORS preflight Cairn never grants,
 * so a cookie alone (a form post, a link) authenticates nothing: a guard on top of SameSite=Strict.
 */
export const CONSOLE_HEADER = 'X-Cairn-Console';

const COOKIE = 'cairn_console';

/**
 * Sent with every path, as the console calls the API's own routes with it; HttpOnly, so no script
 * of the page reads it; SameSite=Strict, so no other site's page makes the browser send it. Its
 * value carries its own signature (see ConsoleAccess), so it does not depend on Koa's keys, which
 * are set only with ADMIN_TOKEN.
 */
const cookieOptions = (ctx: Context) => ({
  signed: false,
  httpOnly: true,
  sameSite: 'strict' as const,
  path: '/',
  secure: ctx.secure,
  overwrite: true,
});

/** The console session cookie's value, or null without one. */
export function consoleSessionOf(ctx: Context): string | null {
  return ctx.cookies.get(COOKIE, { signed: false }) ?? null;
}

export function setConsoleSession(ctx: Context, value: string, expires: number): void {
  ctx.cookies.set(COOKIE, value, { ...cookieOptions(ctx), maxAge: Math.max(0, expires - Date.now()) });
}

export function clearConsoleSession(ctx: Context): void {
  ctx.cookies.set(COOKIE, null, { ...cookieOptions(ctx), maxAge: 0 });
}

/** True when the request says it comes from the console's own scripts. */
export function fromConsole(ctx: Context): boolean {
  return ctx.get(CONSOLE_HEADER) === '1';
}
