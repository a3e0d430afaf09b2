import type { Knex } from 'knex';
import { createTableIfMissing, dropIndexIfExists, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * A project's settings (one row per project that changed one; a project without a row has every
 * default): the embedding model its memories use, and the re-embedding that moves them to another
 * one — its target, the cursor it has reached, its progress, the models whose vectors are left to
 * remove, and the lease of the job running it. Also an index that walks a project's memories in id
 * order, which is how the re-embedding pages through them.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'project_settings', (t) => {
    t.string('project_id', 36).primary();
    // what the project asked for (null: the server's MEMORY_EMBED_MODEL)
    t.string('memory_embed_setting', 160).nullable();
    // what its memories are embedded with now (null: the server's MEMORY_EMBED_MODEL)
    t.string('memory_embed_model', 160).nullable();
    t.string('memory_embed_target', 160).nullable();
    t.string('memory_embed_migration', 36).nullable();
    t.string('memory_embed_status', 16).notNullable().defaultTo('ready');
    t.string('memory_embed_cursor', 36).notNullable().defaultTo('');
    t.integer('memory_embed_done').notNullable().defaultTo(0);
    t.integer('memory_embed_total').nullable();
    t.bigInteger('memory_embed_started_at').nullable();
    t.text('memory_embed_error').nullable();
    t.text('memory_embed_drop').nullable();
    t.string('memory_embed_lease', 64).nullable();
    t.bigInteger('memory_embed_lease_until').nullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'memories', 'memories_project_id', ['project_id', 'id']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'memories', 'memories_project_id');
  await dropTableIfExists(knex, 'project_settings');
}
