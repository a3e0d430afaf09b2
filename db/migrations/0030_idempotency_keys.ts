import type { Knex } from 'knex';
import { createTableIfMissing, dropIndexIfExists, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The answers of writes sent with an `Idempotency-Key`, per project, so a retry (a client's, after
 * a 503 or a dropped connection) gets the first answer instead of storing again. The key is the
 * primary key with its project: every API process and worker of a project shares one row, and the
 * first to insert it owns the work. `request_id` names the job (or request) doing the work;
 * `status` and `response` stay null until its answer is recorded; `started_at` is set when a job
 * starts the work, after which no other request may take the key over; `locked_until` (ms) is when
 * a key whose work never started may be taken over; `expires_at` (ms) when the sweep deletes it.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'idempotency_keys', (t) => {
    t.string('project_id', 64).notNullable();
    t.string('idempotency_key', 255).notNullable();
    t.string('operation', 64).notNullable();
    t.string('fingerprint', 64).notNullable();
    t.string('request_id', 64).notNullable();
    t.bigInteger('started_at').nullable();
    t.integer('status').nullable();
    t.text('response', 'mediumtext').nullable();
    t.bigInteger('locked_until').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.primary(['project_id', 'idempotency_key']);
  });
  await ensureIndex(knex, 'idempotency_keys', 'idempotency_keys_expires_at', ['expires_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'idempotency_keys', 'idempotency_keys_expires_at');
  await dropTableIfExists(knex, 'idempotency_keys');
}
