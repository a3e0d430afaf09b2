import type { Knex } from 'knex';

/** Admin sessions signed out before their end, by session id, until that end. */
export class AdminSignOutsRepository {
  constructor(private readonly db: Knex) {}

  /** Records a sign-out (again: no change), and prunes those whose sessions have ended by `now`. */
  async add(sessionId: string, expiresAt: number, now: number): Promise<void> {
    await this.db('admin_sign_outs').where('expires_at', '<=', now).delete();
    await this.db('admin_sign_outs').insert({ session_id: sessionId, expires_at: expiresAt }).onConflict('session_id').ignore();
  }

  async has(sessionId: string): Promise<boolean> {
    return (await this.db('admin_sign_outs').where({ session_id: sessionId }).first('session_id')) !== undefined;
  }
}
