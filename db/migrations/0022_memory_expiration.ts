import type { Knex } from 'knex';
import { addColumnIfMissing, dropIndexIfExists, ensureIndex } from './helpers.js';

/**
 * mem0's memory expiration: the UTC day after which a memory is hidden from lists and search
 * (null: never). Kept as its 'YYYY-MM-DD' text, which sorts as the dates do on SQLite and MariaDB
 * alike; indexed so the retention sweep finds the memories long expired without a scan.
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'expiration_date', (t) => t.string('expiration_date', 10).nullable());
  await ensureIndex(knex, 'memories', 'memories_expiration', ['expiration_date']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'memories', 'memories_expiration');
  if (await knex.schema.hasColumn('memories', 'expiration_date')) await knex.schema.alterTable('memories', (t) => t.dropColumn('expiration_date'));
}
