import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AdminSignInLimiter } from '../db/admin-sign-in-limiter.js';
import type { AdminSignOutsRepository } from '../db/repositories/admin-sign-outs.repository.js';
import type { ApiKeysRepository } from '../db/repositories/api-keys.repository.js';
import { unavailable } from '../lib/errors.js';
import { nowMs } from '../lib/time.js';
import { hashKey, type ApiKeys, type KeyPrincipal } from './api-keys.js';

/** How long a console sign-in lasts: a working day, after which the console asks for the key again. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60 * 1000;

/** A console session just started: the value its cookie holds, and when it ends. */
export interface ConsoleSession {
  value: string;
  expires: number;
  principal: KeyPrincipal;
}

/** What one sign-in came to: a session, none (a wrong key), or refused unchecked while its client is over the limit. */
export type ConsoleSignIn = { limited: false; session: ConsoleSession | null } | { limited: true; retryAfterSeconds: number };

/** `<key id>.<expires ms>.<session id>.<mac>` */
const SESSION_VALUE = /^([0-9A-Za-z-]{1,64})\.(\d{1,15})\.([\w-]{22})\.([\w-]{43})$/;

/**
 * The web console's way in: a project API key typed once, exchanged for a session that names the
 * key (its id, never the key) and is signed with a secret derived from the key's stored hash. So
 * no server-wide secret is needed (every API process can check a session with what the database
 * holds), a session of one key cannot be turned into one of another key or project, and a session
 * ends with its key: every request looks the key up by id, and a revoked key is gone.
 *
 * Sign-in tries count on the admin board's limiter (per client address) under a name of their
 * own, so a right API key never forgets a client's wrong admin tokens. Sign-outs are kept with
 * the admin board's, so a copy of a signed-out cookie opens nothing on any API process.
 */
export class ConsoleAccess {
  constructor(
    private readonly apiKeys: ApiKeys,
    private readonly keys: ApiKeysRepository,
    private readonly limiter: AdminSignInLimiter,
    private readonly signOuts: AdminSignOutsRepository,
  ) {}

  /** Counts a try from `client` (its address), then checks the key only while the client is within the limit. */
  async signIn(client: string, key: string): Promise<ConsoleSignIn> {
    const counted = `console:${client}`;
    const waitMs = await this.limiter.attempt(counted);
    if (waitMs > 0) return { limited: true, retryAfterSeconds: Math.ceil(waitMs / 1000) };
    const principal = await this.apiKeys.authenticate(key).catch(() => {
      throw unavailable('The API key cannot be checked right now because the database is unreachable; retry shortly.');
    });
    if (!principal) return { limited: false, session: null };
    await this.limiter.succeeded(counted);
    const expires = nowMs() + CONSOLE_SESSION_MS;
    const id = randomBytes(16).toString('base64url');
    const value = `${principal.keyId}.${expires}.${id}`;
    return { limited: false, session: { value: `${value}.${mac(hashKey(key), principal, value)}`, expires, principal } };
  }

  /**
   * The key a session acts as, checked again on every call: null when the value is not one this
   * server signed for that key, the session has ended or was signed out, or the key was revoked.
   */
  async principalOf(value: string): Promise<KeyPrincipal | null> {
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

  /** Ends a session for every API process (remembered until it would have ended anyway). */
  async signOut(value: string): Promise<void> {
    const session = parse(value);
    if (!session || !(await this.principalOf(value))) return;
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

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
