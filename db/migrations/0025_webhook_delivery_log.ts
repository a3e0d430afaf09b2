import type { Knex } from 'knex';
import { ensureIndex } from './helpers.js';

/** Webhook deliveries by age, so the retention sweep finds old settled ones without a scan. */
export async function up(knex: Knex): Promise<void> {
  await ensureIndex(knex, 'webhook_deliveries', 'webhook_deliveries_created', ['created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropIndex(['created_at'], 'webhook_deliveries_created'));
}
