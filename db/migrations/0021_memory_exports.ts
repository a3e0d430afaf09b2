import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * mem0's memory exports: the schema a project asked its memories to be filled into, the filter
 * choosing the memories (with the entity ids it pins, which a get by filters looks up), and how
 * the `memory.export` job went: its status, the filled object or why it failed, and how many
 * memories it read.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'memory_exports', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.text('schema', 'mediumtext').notNullable();
    t.text('filters').notNullable();
    t.string('user_id', 255).nullable();
    t.string('agent_id', 255).nullable();
    t.string('run_id', 255).nullable();
    t.string('app_id', 255).nullable();
    t.string('status', 16).notNullable();
    t.text('result', 'mediumtext').nullable();
    t.text('error').nullable();
    t.integer('memory_count').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'memory_exports', 'memory_exports_project', ['project_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'memory_exports');
}
