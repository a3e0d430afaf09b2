import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists } from './helpers.js';

/** Metering: how many times each project did each metered operation, per UTC day. */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'usage_counters', (t) => {
    t.string('project_id', 36).notNullable();
    t.string('operation', 64).notNullable();
    // YYYY-MM-DD (UTC)
    t.string('day', 10).notNullable();
    t.bigInteger('count').notNullable().defaultTo(0);
    t.primary(['project_id', 'operation', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'usage_counters');
}
