import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * Memories: typed records (a schema, its pinned version and the typed values) and free-form
 * memories (text only), side by side, so one search covers both. The row is the source of truth;
 * its vector in the memories collection is derived by a job and rewritten on every change.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'memories', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    // null for free-form memories
    t.string('schema_id', 36).nullable();
    t.string('schema_name', 64).nullable();
    t.integer('schema_version').nullable();
    t.text('record').nullable();
    // the text that is embedded: the rendered template, or the free-form memory
    t.text('memory').notNullable();
    t.string('user_id', 255).nullable();
    t.string('agent_id', 255).nullable();
    t.string('run_id', 255).nullable();
    t.string('app_id', 255).nullable();
    t.text('metadata').notNullable();
    // bumped on every change; a job indexes only the revision it was queued for
    t.integer('revision').notNullable().defaultTo(1);
    t.string('embedding_status', 16).notNullable();
    t.text('embedding_error').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'memories', 'memories_project_schema_user', ['project_id', 'schema_name', 'user_id', 'created_at']);
  await ensureIndex(knex, 'memories', 'memories_project_user', ['project_id', 'user_id', 'created_at']);
  await ensureIndex(knex, 'memories', 'memories_project_created', ['project_id', 'created_at']);
  await createTableIfMissing(knex, 'memory_history', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('memory_id', 36).notNullable();
    t.string('event', 16).notNullable();
    t.text('old_memory').nullable();
    t.text('new_memory').nullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'memory_history', 'memory_history_memory', ['project_id', 'memory_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'memory_history');
  await dropTableIfExists(knex, 'memories');
}
