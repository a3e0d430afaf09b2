import type { Knex } from 'knex';
import { ensureIndex } from './helpers.js';

/**
 * Lets reconciliation find memories by indexing state without a table scan: the pending ones
 * (re-queued once older than a grace period) and the indexed ones (checked against the vector
 * store, page by page in id order).
 */
export async function up(knex: Knex): Promise<void> {
  await ensureIndex(knex, 'memories', 'memories_embedding_status', ['embedding_status', 'id']);
}

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasTable('memories')) {
    await knex.schema.alterTable('memories', (t) => t.dropIndex(['embedding_status', 'id'], 'memories_embedding_status'));
  }
}
