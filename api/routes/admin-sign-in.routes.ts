import coBody from 'co-body';
import type { Context, Middleware } from 'koa';
import type { AdminAccess } from '../../core/admin-access.js';
import { forbidden } from '../../lib/errors.js';
import { ADMIN_BASIC_SIGN_IN_PATH, ADMIN_SIGN_IN_PATH, ADMIN_SIGN_OUT_PATH, endAdminSession, startAdminSession } from '../middleware/admin-session.js';
import { requireAdmin } from '../middleware/auth.js';
import { BULL_BOARD_PATH } from './admin.routes.js';

/**
 * The admin sign-in page: GET shows the form, POST checks ADMIN_TOKEN (the password Bull Board
 * takes with Basic auth) and sets the signed session cookie, then sends the browser to the board.
 * ADMIN_BASIC_SIGN_IN_PATH asks with the browser's own password prompt instead (Basic auth, the token
 * as password), for a browser told the credentials or given them in the URL. Sign-out (a link on
 * the board, or a form's POST) ends the session on every API process and clears the cookie. The
 * form's tries count with every other way the token is presented (see AdminAccess). These are
 * pages for people, not API routes, so they are not in `/openapi.json`.
 */
export function adminSignIn(access: AdminAccess): Middleware {
  const basicGuard = requireAdmin(access, { challengePages: true });
  return async (ctx, next) => {
    if (ctx.path === ADMIN_SIGN_OUT_PATH && (ctx.method === 'GET' || ctx.method === 'POST')) {
      await endAdminSession(ctx, access);
      return ctx.redirect(ADMIN_SIGN_IN_PATH);
    }
    if (ctx.path === ADMIN_BASIC_SIGN_IN_PATH && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      // requireAdmin answers the browser's prompt: a 401 challenge, or the session its page load starts
      return basicGuard(ctx, async () => {
        ctx.status = 303;
        // A network-path reference: the browser leaves behind credentials given in the URL, which
        // would otherwise stay in the board's address and make its fetches fail (the cookie now
        // stands in for them).
        ctx.redirect(`//${ctx.host}${BULL_BOARD_PATH}`);
      });
    }
    if (ctx.path !== ADMIN_SIGN_IN_PATH) return next();
    if (!access.enabled) throw forbidden('Admin endpoints are disabled: set ADMIN_TOKEN to enable them.');
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return page(ctx, 200);
    if (ctx.method !== 'POST') return next();

    const tried = await access.tryToken(ctx.ip, await presentedToken(ctx));
    if (tried.limited) {
      ctx.set('Retry-After', String(tried.retryAfterSeconds));
      return page(ctx, 429, 'Too many wrong tokens from this address; wait a minute and try again.');
    }
    if (!tried.right) return page(ctx, 401, 'That is not the admin token. Use the value of ADMIN_TOKEN.');
    startAdminSession(ctx);
    ctx.status = 303;
    ctx.redirect(BULL_BOARD_PATH);
  };
}

/** The `token` field of the form; an empty string when the body is not the form's. */
async function presentedToken(ctx: Context): Promise<string> {
  if (!ctx.is('urlencoded')) return '';
  const form = (await coBody.form(ctx.req, { limit: '4kb' })) as Record<string, unknown>;
  return typeof form.token === 'string' ? form.token : '';
}

function page(ctx: Context, status: number, message?: string): void {
  ctx.status = status;
  ctx.type = 'html';
  // the page loads nothing and may be framed by no one
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Sign in · Cairn queues</title>
<style>
  body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
         background: #f3f5f7; color: #20262c; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
  form { background: #fff; padding: 2rem; border-radius: .5rem; box-shadow: 0 0 0 1px #e2e7ec; width: min(22rem, 90vw); }
  h1 { font-size: 1.2rem; font-weight: 600; margin: 0 0 1.25rem; }
  label { display: block; font-size: .875rem; margin-bottom: .25rem; }
  input { box-sizing: border-box; width: 100%; padding: .5rem .75rem; border: 1px solid #d4dbe2; border-radius: .375rem; font: inherit; }
  button { margin-top: 1rem; width: 100%; padding: .55rem; border: 0; border-radius: .375rem; background: #0f6f64; color: #f0faf8; font: inherit; font-weight: 500; cursor: pointer; }
  .error { color: #b42318; margin: 0 0 1rem; }
  .alt { margin: 1rem 0 0; font-size: .8rem; color: #5f6b76; }
  .alt a { color: #0f6f64; }
</style>
</head>
<body>
<form method="post" action="${ADMIN_SIGN_IN_PATH}">
  <h1>Cairn queues</h1>
  ${message ? `<p class="error" role="alert">${message}</p>` : ''}
  <label for="token">Admin token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
  <button type="submit">Sign in</button>
  <p class="alt"><a href="${ADMIN_BASIC_SIGN_IN_PATH}">Use the browser's password prompt</a> (any user name, the token as password)</p>
</form>
</body>
</html>
`;
}
