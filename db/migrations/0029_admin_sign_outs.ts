import type { Knex } from 'knex';
import { createTableIfMissing, dropIndexIfExists, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * Admin sessions signed out before they ended: a copied session cookie stays signed and unexpired,
 * so every API process looks its session up here and refuses it. A row is kept until the session
 * would have ended anyway (`expires_at`, ms), then pruned.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'admin_sign_outs', (t) => {
    t.string('session_id', 64).primary();
    t.bigInteger('expires_at').notNullable();
  });
  await ensureIndex(knex, 'admin_sign_outs', 'admin_sign_outs_expires_at', ['expires_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'admin_sign_outs', 'admin_sign_outs_expires_at');
  await dropTableIfExists(knex, 'admin_sign_outs');
}
