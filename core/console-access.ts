import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AdminSignInLimiter } from '../db/admin-sign-in-limiter.js';
import type { AdminSignOutsRepository } from '../db/repositories/admin-sign-outs.repository.js';
import type { ApiKeysRepository } from '../db/repositories/api-keys.repository.js';
import type { ProjectsRepository } from '../db/repositories/projects.repository.js';
import { conflict, forbidden, notFound, unauthorized, unavailable } from '../lib/errors.js';
import { nowMs } from '../lib/time.js';
import { hashKey, type ApiKeys, type KeyPrincipal } from './api-keys.js';

/** How long a console sign-in lasts: a working day, after which the console asks for the key again. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60 * 1000;

/** A console session just started: the value its cookie holds, and when it ends. */
export interface ConsoleSession {
  value: string;
  expires: number;
  principal: KeyPrincipal;
  /** Started with ADMIN_TOKEN: it may switch to any project. */
  operator: boolean;
}

/** The key id an operator's session acts as: no API key's (those are UUIDs). */
export const OPERATOR_KEY_ID = 'operator';

/** Most projects the operator's switcher lists, the newest first. */
export const OPERATOR_PROJECTS = 500;

/** What one sign-in came to: a session, none (a wrong key), or refused unchecked while its client is over the limit. */
export type ConsoleSignIn = { limited: false; session: ConsoleSession | null } | { limited: true; retryAfterSeconds: number };

/** `<key id>.<expires ms>.<session id>.<mac>` */
const SESSION_VALUE = /^([0-9A-Za-z-]{1,64})\.(\d{1,15})\.([\w-]{22})\.([\w-]{43})$/;
/** An operator's: `op.<project id>.<expires ms>.<session id>.<mac>` (five parts, so never a key's). */
const OPERATOR_VALUE = /^op\.([0-9A-Za-z-]{1,64})\.(\d{1,15})\.([\w-]{22})\.([\w-]{43})$/;

/**
 * The web console's way in: a project API key typed once, exchanged for a session that names the
 * key (its id, never the key) and is signed with a secret derived from the key's stored hash. So
 * no server-wide secret is needed (every API process can check a session with what the database
 * holds), a session of one key cannot be turned into one of another key or project, and a session
 * ends with its key: every request looks the key up by id, and a revoked key is gone.
 *
 * The operator's ADMIN_TOKEN is the second way in: its session names a project (the newest at
 * first, then any it switches to) and is signed with a secret derived from the token, so it ends
 * with the token's change; a project key's session never names another project.
 *
 * Sign-in tries (keys and tokens alike) count on the admin board's limiter (per client address) under a name of their
 * own, so a right API key never forgets a client's wrong admin tokens. Sign-outs are kept with
 * the admin board's, so a copy of a signed-out cookie opens nothing on any API process.
 */
export class ConsoleAccess {
  constructor(
    private readonly apiKeys: ApiKeys,
    private readonly keys: ApiKeysRepository,
    private readonly limiter: AdminSignInLimiter,
    private readonly signOuts: AdminSignOutsRepository,
    private readonly operator: { adminToken: string | null; projects: ProjectsRepository },
  ) {}

  /** Counts a try from `client` (its address), then checks the key only while the client is within the limit. */
  async signIn(client: string, key: string): Promise<ConsoleSignIn> {
    const counted = `console:${client}`;
    const waitMs = await this.limiter.attempt(counted);
    if (waitMs > 0) return { limited: true, retryAfterSeconds: Math.ceil(waitMs / 1000) };
    if (this.isAdminToken(key)) {
      await this.limiter.succeeded(counted);
      const [newest] = await this.operator.projects.list(1);
      if (!newest) throw conflict('There is no project yet: create one with `npm run keys -- create --project NAME`, then sign in again.', 'no_project');
      return { limited: false, session: this.operatorSession({ id: newest.id, name: newest.name }, nowMs() + CONSOLE_SESSION_MS, randomBytes(16).toString('base64url')) };
    }
    const principal = await this.apiKeys.authenticate(key).catch(() => {
      throw unavailable('The API key cannot be checked right now because the database is unreachable; retry shortly.');
    });
    if (!principal) return { limited: false, session: null };
    await this.limiter.succeeded(counted);
    const expires = nowMs() + CONSOLE_SESSION_MS;
    const id = randomBytes(16).toString('base64url');
    const value = `${principal.keyId}.${expires}.${id}`;
    return { limited: false, session: { value: `${value}.${mac(hashKey(key), principal, value)}`, expires, principal, operator: false } };
  }

  /**
   * The key a session acts as, checked again on every call: null when the value is not one this
   * server signed for that key, the session has ended or was signed out, or the key was revoked.
   */
  async principalOf(value: string): Promise<KeyPrincipal | null> {
    if (value.startsWith('op.')) return (await this.operatorOf(value))?.principal ?? null;
    const session = parse(value);
    if (!session) return null;
    const { principal, signedOut } = await Promise.all([this.keys.findPrincipalById(session.keyId), this.signOuts.has(session.id)])
      .then(([found, out]) => ({ principal: found, signedOut: out }))
      .catch(() => {
        throw unavailable('The console session cannot be checked right now because the database is unreachable; retry shortly.');
      });
    if (!principal || signedOut) return null;
    const { keyHash, ...rest } = principal;
    return sameMac(mac(keyHash, rest, session.signed), session.mac) ? rest : null;
  }

  /** The projects an operator's session may switch to, the newest first; refused to any other session. */
  async projects(value: string): Promise<Array<{ id: string; name: string }>> {
    await this.requireOperator(value);
    return (await this.operator.projects.list(OPERATOR_PROJECTS)).map((p) => ({ id: p.id, name: p.name }));
  }

  /** The same operator's session (its id and end kept, so one sign-out ends both), bound to another project. */
  async switchProject(value: string, projectName: string): Promise<ConsoleSession> {
    const session = await this.requireOperator(value);
    const project = await this.operator.projects.findByName(projectName);
    if (!project) throw notFound(`There is no project "${projectName}".`, 'project_not_found');
    return this.operatorSession({ id: project.id, name: project.name }, session.expires, session.id);
  }

  /** Whether `value` is a live session an operator started with ADMIN_TOKEN. */
  async isOperator(value: string): Promise<boolean> {
    return value.startsWith('op.') && (await this.operatorOf(value)) !== null;
  }

  private async requireOperator(value: string): Promise<{ expires: number; id: string }> {
    const session = await this.operatorOf(value);
    if (session) return session;
    if (await this.principalOf(value)) throw forbidden("Only an operator's session (signed in with ADMIN_TOKEN) chooses its project; a project key's session stays in its project.");
    throw unauthorizedSession();
  }

  private isAdminToken(presented: string): boolean {
    const expected = this.operator.adminToken;
    if (expected === null) return false;
    const digest = (v: string) => createHmac('sha256', 'cairn console').update(v).digest();
    return timingSafeEqual(digest(presented), digest(expected));
  }

  private operatorSession(project: { id: string; name: string }, expires: number, id: string): ConsoleSession {
    const value = `op.${project.id}.${expires}.${id}`;
    const principal: KeyPrincipal = { keyId: OPERATOR_KEY_ID, projectId: project.id, projectName: project.name };
    return { value: `${value}.${operatorMac(this.operator.adminToken ?? '', value)}`, expires, principal, operator: true };
  }

  /** An operator's session: null unless ADMIN_TOKEN (as it is now) signed it, it has not ended, and its project exists. */
  private async operatorOf(value: string): Promise<{ principal: KeyPrincipal; expires: number; id: string } | null> {
    const match = OPERATOR_VALUE.exec(value);
    const adminToken = this.operator.adminToken;
    if (!match || adminToken === null) return null;
    const [projectId, expires, id, signature] = [match[1] as string, Number(match[2]), match[3] as string, match[4] as string];
    if (expires <= nowMs() || !sameMac(operatorMac(adminToken, value.slice(0, value.lastIndexOf('.'))), signature)) return null;
    const [project, signedOut] = await Promise.all([this.operator.projects.findById(projectId), this.signOuts.has(id)]).catch(() => {
      throw unavailable('The console session cannot be checked right now because the database is unreachable; retry shortly.');
    });
    if (!project || signedOut) return null;
    return { principal: { keyId: OPERATOR_KEY_ID, projectId: project.id, projectName: project.name }, expires, id };
  }

  /** Ends a session for every API process (remembered until it would have ended anyway). */
  async signOut(value: string): Promise<void> {
    const operator = await this.operatorOf(value);
    const session = operator ?? parse(value);
    if (!session || (!operator && !(await this.principalOf(value)))) return;
    try {
      await this.signOuts.add(session.id, session.expires, nowMs());
    } catch {
      throw unavailable('The sign-out cannot be recorded right now because the database is unreachable, so the session is still open; retry shortly.');
    }
  }
}

/** The parts of a session value that has not yet ended; null for anything else. */
function parse(value: string): { keyId: string; expires: number; id: string; mac: string; signed: string } | null {
  const match = SESSION_VALUE.exec(value);
  if (!match) return null;
  const expires = Number(match[2]);
  if (expires <= nowMs()) return null;
  return { keyId: match[1] as string, expires, id: match[3] as string, mac: match[4] as string, signed: `${match[1]}.${match[2]}.${match[3]}` };
}

/** HMAC-SHA256 of the session and the key's project, under a key derived from the API key's stored hash. */
function mac(keyHash: string, principal: KeyPrincipal, signed: string): string {
  const secret = Buffer.from(hkdfSync('sha256', keyHash, 'cairn', 'console session cookie', 32));
  return createHmac('sha256', secret).update(`${signed}.${principal.projectId}`).digest('base64url');
}

/** HMAC-SHA256 of an operator's session, under a key derived from ADMIN_TOKEN: a new token ends every one. */
function operatorMac(adminToken: string, signed: string): string {
  const secret = Buffer.from(hkdfSync('sha256', adminToken, 'cairn', 'console operator session cookie', 32));
  return createHmac('sha256', secret).update(signed).digest('base64url');
}

const unauthorizedSession = () => unauthorized('The console session has ended (signed out, expired, or its API key was revoked): sign in again.', 'console_session_ended');

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
