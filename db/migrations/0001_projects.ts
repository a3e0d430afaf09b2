import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/** Projects: the tenancy boundary every resource belongs to. */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'projects', (t) => {
    t.string('id', 36).primary();
    t.string('name', 64).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'projects', 'projects_name_unique', ['name'], { unique: true });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'projects');
}
