import type { Knex } from 'knex';
import { addColumnIfMissing } from './helpers.js';

/**
 * The values a mem0 add's `structured_data_schema` asked for, extracted from its messages and kept
 * on each memory it stored (a JSON object; null when the add named no schema).
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'structured_data', (t) => t.text('structured_data').nullable());
}

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasColumn('memories', 'structured_data')) await knex.schema.alterTable('memories', (t) => t.dropColumn('structured_data'));
}
