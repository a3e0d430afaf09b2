import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/** Pipeline probes: a row whose derived work is done by a worker, to check the async path end to end. */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'probes', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('status', 16).notNullable();
    t.integer('hold_ms').notNullable().defaultTo(0);
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('processed_by', 128).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('processed_at').nullable();
  });
  await ensureIndex(knex, 'probes', 'probes_project_created', ['project_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'probes');
}
