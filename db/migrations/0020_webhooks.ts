import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * mem0's webhooks: a project's endpoints with the memory events they want and the secret their
 * deliveries are signed with, and one delivery row per (event, webhook), written in the same
 * transaction as the memory change it reports, holding the exact body sent and how sending went.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'webhooks', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 255).notNullable();
    t.string('url', 2048).notNullable();
    t.text('event_types').notNullable();
    t.string('secret', 128).notNullable();
    t.boolean('is_active').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'webhooks', 'webhooks_project', ['project_id', 'created_at']);

  await createTableIfMissing(knex, 'webhook_deliveries', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('webhook_id', 36).notNullable();
    t.string('event', 32).notNullable();
    t.string('memory_id', 36).notNullable();
    t.text('body').notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable();
    t.integer('status_code').nullable();
    t.text('last_error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('delivered_at').nullable();
  });
  await ensureIndex(knex, 'webhook_deliveries', 'webhook_deliveries_webhook', ['webhook_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'webhook_deliveries');
  await dropTableIfExists(knex, 'webhooks');
}
