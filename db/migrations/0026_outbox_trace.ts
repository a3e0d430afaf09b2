import type { Knex } from 'knex';
import { addColumnIfMissing } from './helpers.js';

/**
 * The trace context an outbox entry's job was queued in (W3C `traceparent`/`tracestate` as JSON;
 * null while tracing is off), handed to the queue with the job so its run continues the trace.
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'outbox', 'trace', (t) => t.string('trace', 1024).nullable());
}

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasColumn('outbox', 'trace')) await knex.schema.alterTable('outbox', (t) => t.dropColumn('trace'));
}
