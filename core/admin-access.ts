import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminSignInLimiter } from '../db/admin-sign-in-limiter.js';
import type { AdminSignOutsRepository } from '../db/repositories/admin-sign-outs.repository.js';
import { unavailable } from '../lib/errors.js';
import { nowMs } from '../lib/time.js';

/** What one try of the admin token came to: checked, or refused unchecked while its client is over the limit. */
export type AdminTokenTry = { limited: false; right: boolean } | { limited: true; retryAfterSeconds: number };

/**
 * The operator's way into the admin pages (ADMIN_TOKEN; null leaves them disabled). Every way a
 * token is presented (the sign-in form, Basic, Bearer) is one try against one count per client,
 * so that guesses cannot move to a way the count does not see. Sessions signed out are kept in
 * the database, which every API process reads, so a copy of a signed-out cookie opens nothing.
 */
export class AdminAccess {
  constructor(
    private readonly adminToken: string | null,
    private readonly limiter: AdminSignInLimiter,
    private readonly signOuts: AdminSignOutsRepository,
  ) {}

  /** False when ADMIN_TOKEN is not set: the admin pages answer 403. */
  get enabled(): boolean {
    return this.adminToken !== null;
  }

  /**
   * Counts a try from `client` (its address), then compares the token only while the client is
   * within the limit: over it, even the right token is refused until the window ends.
   */
  async tryToken(client: string, presented: string): Promise<AdminTokenTry> {
    const waitMs = await this.limiter.attempt(client);
    if (waitMs > 0) return { limited: true, retryAfterSeconds: Math.ceil(waitMs / 1000) };
    const right = this.adminToken !== null && sameSecret(presented, this.adminToken);
    if (right) await this.limiter.succeeded(client);
    return { limited: false, right };
  }

  /** True when the session was signed out, on whichever API process. */
  async isSignedOut(sessionId: string): Promise<boolean> {
    try {
      return await this.signOuts.has(sessionId);
    } catch {
      throw unavailable('The admin session cannot be checked right now because the database is unreachable; retry shortly.');
    }
  }

  /** Ends a session for every API process; it is remembered until `expiresAt`, when its cookie lapses anyway. */
  async signOut(sessionId: string, expiresAt: number): Promise<void> {
    try {
      await this.signOuts.add(sessionId, expiresAt, nowMs());
    } catch {
      // the cookie is left as it is: cleared without the record, a copy of it would still open the board
      throw unavailable('The sign-out cannot be recorded right now because the database is unreachable, so the session is still open; retry shortly.');
    }
  }
}

/**
 * Compares a presented secret with the expected one in time that depends on neither where they
 * differ nor how long the presented one is (both are hashed to the same length first).
 */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
