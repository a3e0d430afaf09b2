import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists } from './helpers.js';

/**
 * The embedded vector store's table: vectors persisted in the SQLite file. Only the embedded
 * profile (SQLite) has it; on MySQL the vectors live in Milvus.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') return;
  await createTableIfMissing(knex, 'embedded_vectors', (t) => {
    t.string('collection', 200).notNullable();
    t.string('project_id', 36).notNullable();
    t.string('id', 512).notNullable();
    // float32 little-endian
    t.binary('vector').notNullable();
    t.text('columns').notNullable();
    t.text('metadata').notNullable();
    t.primary(['collection', 'project_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'embedded_vectors');
}
