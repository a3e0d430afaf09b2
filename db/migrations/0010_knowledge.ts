import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * Knowledge: bases, their documents (the uploaded bytes kept as the source of truth, so a
 * document can be processed again), and the chunks the worker cut them into, with offsets into
 * the document's extracted text. Chunk vectors live in the knowledge collection, keyed by chunk id.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await createTableIfMissing(knex, 'knowledge_bases', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.text('instructions').notNullable();
    t.string('model', 128).notNullable();
    t.string('embed_model', 128).notNullable();
    t.integer('chunk_size').notNullable();
    t.integer('chunk_overlap').notNullable();
    // bumped whenever the base's chunks change, so keyword indexes know when to rebuild
    t.bigInteger('revision').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'knowledge_bases', 'knowledge_bases_project_name', ['project_id', 'name'], { unique: true });

  await createTableIfMissing(knex, 'knowledge_documents', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('kb_id', 36).notNullable();
    t.string('filename', 255).notNullable();
    t.string('source_type', 16).notNullable();
    t.integer('size').notNullable();
    if (mysql) t.specificType('source', 'LONGBLOB').notNullable();
    else t.binary('source').notNullable();
    t.text('metadata').notNullable();
    t.string('status', 16).notNullable();
    t.integer('chunk_count').notNullable().defaultTo(0);
    t.text('error').nullable();
    // bumped by re-processing: a job works only on the revision it was queued for
    t.integer('revision').notNullable().defaultTo(1);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'knowledge_documents', 'knowledge_documents_kb', ['project_id', 'kb_id', 'created_at']);

  await createTableIfMissing(knex, 'knowledge_chunks', (t) => {
    // `<document id>:<ordinal>`: processing a document again rewrites the same ids
    t.string('id', 48).primary();
    t.string('project_id', 36).notNullable();
    t.string('kb_id', 36).notNullable();
    t.string('document_id', 36).notNullable();
    t.integer('ordinal').notNullable();
    t.text('text').notNullable();
    t.integer('start_offset').notNullable();
    t.integer('end_offset').notNullable();
    t.string('heading', 255).nullable();
  });
  await ensureIndex(knex, 'knowledge_chunks', 'knowledge_chunks_document', ['project_id', 'document_id', 'ordinal']);
  await ensureIndex(knex, 'knowledge_chunks', 'knowledge_chunks_kb', ['project_id', 'kb_id']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'knowledge_chunks');
  await dropTableIfExists(knex, 'knowledge_documents');
  await dropTableIfExists(knex, 'knowledge_bases');
}
