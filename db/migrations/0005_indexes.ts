import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/** Vector indexes: raw (dimension + metric) or managed (an embedding model embeds text server-side). */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'vector_indexes', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.integer('dimension').notNullable();
    t.string('metric', 16).notNullable();
    t.string('embed_model', 128).nullable();
    // JSON: which record field holds the text to embed, for managed indexes
    t.text('field_map').nullable();
    t.boolean('deletion_protection').notNullable().defaultTo(false);
    t.text('tags').notNullable();
    t.string('collection', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'vector_indexes', 'vector_indexes_project_name', ['project_id', 'name'], { unique: true });
  await ensureIndex(knex, 'vector_indexes', 'vector_indexes_project_created', ['project_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'vector_indexes');
}
