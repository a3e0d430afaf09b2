import type { Knex } from 'knex';
import { addColumnIfMissing } from './helpers.js';

/**
 * mem0's categories: the ones a memory was given when it was indexed (a JSON array of names;
 * null until then), and the catalogue its add chose with `custom_categories` (a JSON array of
 * `{name, description}`; null for the default catalogue).
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'categories', (t) => t.text('categories').nullable());
  await addColumnIfMissing(knex, 'memories', 'category_set', (t) => t.text('category_set').nullable());
}

export async function down(knex: Knex): Promise<void> {
  for (const column of ['category_set', 'categories']) {
    if (await knex.schema.hasColumn('memories', column)) await knex.schema.alterTable('memories', (t) => t.dropColumn(column));
  }
}
