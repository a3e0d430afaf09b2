import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The transactional outbox: derived work recorded in the same transaction as the row that needs
 * it, and moved to the queue by the relay until the queue has accepted it.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'outbox', (t) => {
    t.bigIncrements('id').primary();
    t.string('project_id', 36).notNullable();
    t.string('job_name', 64).notNullable();
    t.string('job_id', 191).notNullable();
    t.text('payload').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('available_at').notNullable();
    t.bigInteger('locked_until').nullable();
    t.text('last_error').nullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'outbox', 'outbox_available', ['available_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'outbox');
}
