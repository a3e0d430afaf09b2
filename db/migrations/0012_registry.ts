import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The registry: projects (`{owner}/{name}`, created by their owner's first publish), members with
 * write access, and published versions. A version row is immutable but for its deprecation; its
 * spec is stored as the canonical JSON its digest was computed from. The unique indexes are what
 * make a name or a version taken, also under concurrent requests.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';

  await createTableIfMissing(knex, 'registry_projects', (t) => {
    t.string('id', 36).primary();
    t.string('owner', 255).notNullable();
    t.string('name', 100).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'registry_projects', 'registry_projects_owner_name', ['owner', 'name'], { unique: true });

  await createTableIfMissing(knex, 'registry_members', (t) => {
    t.string('project_id', 36).notNullable();
    t.string('username', 255).notNullable();
    t.string('added_by', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['project_id', 'username']);
  });

  await createTableIfMissing(knex, 'registry_versions', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    // normalised semver (semver.valid): at most 256 characters
    t.string('version', 256).notNullable();
    if (mysql) t.specificType('spec', 'LONGTEXT').notNullable();
    else t.text('spec').notNullable();
    t.string('spec_digest', 71).notNullable();
    t.text('release_notes').notNullable();
    t.string('published_by', 255).notNullable();
    t.bigInteger('published_at').notNullable();
    t.bigInteger('deprecated_at').nullable();
    t.text('deprecation_reason').nullable();
  });
  await ensureIndex(knex, 'registry_versions', 'registry_versions_project_version', ['project_id', 'version'], { unique: true });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'registry_versions');
  await dropTableIfExists(knex, 'registry_members');
  await dropTableIfExists(knex, 'registry_projects');
}
