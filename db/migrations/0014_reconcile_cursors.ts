import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists } from './helpers.js';

/**
 * Where each reconciliation check left off (e.g. the last memory id compared with the vector
 * store), shared by every worker process, so that bounded passes together cover every row.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'reconcile_cursors', (t) => {
    t.string('name', 64).primary();
    t.string('position', 255).notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'reconcile_cursors');
}
