import { Type } from '@sinclair/typebox';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import { OPERATOR_PROJECTS, type ConsoleAccess, type ConsoleSession } from '../../core/console-access.js';
import { AppError, rateLimited, unauthorized } from '../../lib/errors.js';
import { isSource } from '../../lib/modules.js';
import { iso } from '../../lib/time.js';
import { clearConsoleSession, CONSOLE_API_PATH, CONSOLE_HEADER, CONSOLE_PATH, consoleSessionOf, fromConsole, setConsoleSession } from '../middleware/console-session.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';

// The web console: its pages (the bundle scripts/build.mjs writes to dist/console) and its
// session, which a project API key opens. Every other call the console makes goes to the API's
// own routes, authenticated by the session's cookie (see requireApiKey). The operator's
// ADMIN_TOKEN is a second way in: its session acts in one project at a time, which it switches.

const TAG = 'Console';

const SIGN_IN = Type.Object({ key: Type.String({ minLength: 1, maxLength: 256, description: "A project API key, or the operator's ADMIN_TOKEN" }) }, { additionalProperties: false });
const SWITCH = Type.Object({ project: Type.String({ minLength: 1, maxLength: 255, description: "The project's name" }) }, { additionalProperties: false });
const OPERATOR = { type: 'boolean', description: "Started with the operator's ADMIN_TOKEN: it may switch to any project" } as const;
const SESSION_VIEW = {
  type: 'object',
  required: ['project', 'key_id'],
  properties: {
    project: { type: 'string', description: "The key's project" },
    key_id: { type: 'string', description: 'The API key the session acts as ("operator" for an operator\'s session)' },
    operator: OPERATOR,
    expires_at: { type: 'string', format: 'date-time' },
  },
} as const;
const SESSION_STATE = {
  type: 'object',
  required: ['signed_in'],
  properties: { signed_in: { type: 'boolean' }, project: SESSION_VIEW.properties.project, key_id: SESSION_VIEW.properties.key_id, operator: OPERATOR },
} as const;

/** `/console/api/session`: sign in with a project API key, who the session is, sign out. */
export function consoleRoutes({ consoleAccess }: { consoleAccess: ConsoleAccess }): RouteSpec[] {
  const signIn = route({
    method: 'post',
    path: `${CONSOLE_API_PATH}/session`,
    operationId: 'consoleSignIn',
    summary:
      "The web console's sign-in: checks a project API key and sets the console's session cookie (HttpOnly, SameSite=Strict, 12 hours), which names the key and never holds it. The API's routes then take the cookie in place of an Authorization header, only with the header X-Cairn-Console: 1, for as long as the key is not revoked. Wrong keys count against the admin sign-in's limit per client address: past ten tries a minute, 429 with Retry-After. The operator's ADMIN_TOKEN also signs in (operator: true), to the newest project, and may switch to any other (PUT /console/api/session/project).",
    tag: TAG,
    auth: 'none',
    body: SIGN_IN,
    responses: {
      201: { description: 'Signed in', schema: SESSION_VIEW },
      400: { description: 'Invalid body', schema: ERROR_SCHEMA },
      401: { description: 'Not a valid API key', schema: ERROR_SCHEMA },
      409: { description: 'ADMIN_TOKEN, while there is no project yet', schema: ERROR_SCHEMA },
      429: { description: 'Too many tries from this address; Retry-After says when to try again', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      const tried = await consoleAccess.signIn(ctx.ip, ctx.state.body.key);
      if (tried.limited) {
        throw rateLimited('Too many sign-in tries from this address: none is checked until the minute is over.', tried.retryAfterSeconds);
      }
      if (!tried.session) throw unauthorized('That is not a valid API key of any project.', 'invalid_api_key');
      ctx.status = 201;
      started(ctx, tried.session);
    },
  });

  const current = route({
    method: 'get',
    path: `${CONSOLE_API_PATH}/session`,
    operationId: 'consoleSession',
    summary:
      "Whether the browser is signed in to the console, and as which project and key: the console's first call on every page load (with X-Cairn-Console: 1; without it the cookie is not read).",
    tag: TAG,
    auth: 'none',
    responses: { 200: { description: 'The session, or signed_in: false', schema: SESSION_STATE } },
    async handler(ctx) {
      ctx.set('Cache-Control', 'no-store');
      const session = fromConsole(ctx) ? consoleSessionOf(ctx) : null;
      const principal = session === null ? null : await consoleAccess.principalOf(session);
      ctx.body = principal
        ? { signed_in: true, project: principal.projectName, key_id: principal.keyId, operator: session !== null && (await consoleAccess.isOperator(session)) }
        : { signed_in: false };
    },
  });

  const signOut = route({
    method: 'delete',
    path: `${CONSOLE_API_PATH}/session`,
    operationId: 'consoleSignOut',
    summary: "Ends the console's session on every API process (a copy of its cookie opens nothing afterwards) and clears its cookie.",
    tag: TAG,
    auth: 'none',
    responses: { 204: { description: 'Signed out' } },
    async handler(ctx) {
      const session = consoleSessionOf(ctx);
      if (session !== null) await consoleAccess.signOut(session);
      clearConsoleSession(ctx);
      ctx.status = 204;
    },
  });

  const projects = route({
    method: 'get',
    path: `${CONSOLE_API_PATH}/projects`,
    operationId: 'consoleProjects',
    summary: `The projects an operator's console session may switch to, the newest first (at most ${OPERATOR_PROJECTS}). A project key's session is refused (403): it stays in its project.`,
    tag: TAG,
    auth: 'none',
    responses: {
      200: {
        description: 'Projects',
        schema: {
          type: 'object',
          required: ['projects'],
          properties: { projects: { type: 'array', items: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } } } },
        },
      },
      401: { description: 'No console session', schema: ERROR_SCHEMA },
      403: { description: "Not an operator's session, or without the console's header", schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { projects: await consoleAccess.projects(operatorCookie(ctx)) };
    },
  });

  const switchProject = route({
    method: 'put',
    path: `${CONSOLE_API_PATH}/session/project`,
    operationId: 'consoleSwitchProject',
    summary: "Moves an operator's console session to another project (a new cookie; the session's end and sign-out stay one). A project key's session is refused (403).",
    tag: TAG,
    auth: 'none',
    body: SWITCH,
    responses: {
      200: { description: 'The session, in that project', schema: SESSION_VIEW },
      401: { description: 'No console session', schema: ERROR_SCHEMA },
      403: { description: "Not an operator's session, or without the console's header", schema: ERROR_SCHEMA },
      404: { description: 'No such project', schema: ERROR_SCHEMA },
    },
    async handler(ctx) {
      started(ctx, await consoleAccess.switchProject(operatorCookie(ctx), ctx.state.body.project));
    },
  });

  return [signIn, current, signOut, projects, switchProject];
}

/** Sets a session's cookie and answers who it is. */
function started(ctx: Context, session: ConsoleSession): void {
  setConsoleSession(ctx, session.value, session.expires);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { project: session.principal.projectName, key_id: session.principal.keyId, operator: session.operator, expires_at: iso(session.expires) };
}

/** The session cookie of a call from the console's scripts (only they send its header). */
function operatorCookie(ctx: Context): string {
  if (!fromConsole(ctx)) throw new AppError(403, 'console_header_required', `The console's session cookie is accepted only with the header "${CONSOLE_HEADER}: 1".`);
  const session = consoleSessionOf(ctx);
  if (session === null) throw unauthorized('Sign in to the console first.', 'console_session_ended');
  return session;
}

/** Where the console's bundle is: dist/console, beside the compiled server or under the sources' dist/. */
function bundleFolder(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return isSource(import.meta.url) ? path.resolve(here, '../../dist/console') : path.resolve(here, '../../console');
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

/**
 * The console's pages: its assets under /console/assets/, and its one page for every other path
 * under /console (the page's script shows what the path names). The page asks nothing of other
 * hosts: its policy lets it load and call only this origin.
 */
export function consolePages(folder = bundleFolder()): Middleware {
  const assetsPath = `${CONSOLE_PATH}/assets/`;
  return async (ctx, next) => {
    const inConsole = ctx.path === CONSOLE_PATH || ctx.path.startsWith(`${CONSOLE_PATH}/`);
    if (!inConsole || ctx.path === CONSOLE_API_PATH || ctx.path.startsWith(`${CONSOLE_API_PATH}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.path.startsWith(assetsPath)) {
      const name = ctx.path.slice(assetsPath.length);
      const type = TYPES[path.extname(name)];
      if (!/^[\w.-]+$/.test(name) || type === undefined) return next();
      const body = await read(path.join(folder, name));
      if (body === null) return next();
      ctx.type = type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = body;
      return;
    }
    const page = await read(path.join(folder, 'index.html'));
    if (page === null) return notBuilt(ctx);
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.body = page;
  };
}

async function read(file: string): Promise<Buffer | null> {
  try {
    return await fs.promises.readFile(file);
  } catch {
    return null;
  }
}

function notBuilt(ctx: Context): void {
  ctx.status = 503;
  ctx.type = 'text';
  ctx.body = 'The console has not been built: run `npm run build` (npm ci and npm start build it).\n';
}
