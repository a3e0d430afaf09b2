import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * Typed-memory record schemas: one row per named schema (its latest version number) and one row
 * per published version. Versions are immutable; records pin the version they were written with.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'record_schemas', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.text('description').nullable();
    t.integer('latest_version').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'record_schemas', 'record_schemas_project_name', ['project_id', 'name'], { unique: true });
  await ensureIndex(knex, 'record_schemas', 'record_schemas_project_created', ['project_id', 'created_at']);

  await createTableIfMissing(knex, 'record_schema_versions', (t) => {
    t.string('schema_id', 36).notNullable();
    t.string('project_id', 36).notNullable();
    t.integer('version').notNullable();
    // JSON of the restricted subset; MEDIUMTEXT on MySQL because 32 described properties can outgrow 64 KB.
    t.text('json_schema', 'mediumtext').notNullable();
    // null: the default template (one `field: {{field}}` line per property), derived on read.
    t.text('embed_template').nullable();
    // JSON {max_age_days?, max_count?}, or null for no retention.
    t.text('retention').nullable();
    t.text('description').nullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['schema_id', 'version']);
  });
  await ensureIndex(knex, 'record_schema_versions', 'record_schema_versions_project', ['project_id', 'schema_id']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'record_schema_versions');
  await dropTableIfExists(knex, 'record_schemas');
}
