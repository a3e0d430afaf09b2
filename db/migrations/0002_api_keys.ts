import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/** API keys, stored only as a SHA-256 hash; `prefix` lets a person recognise a key in a list. */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'api_keys', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 128).notNullable();
    t.string('prefix', 16).notNullable();
    t.string('key_hash', 64).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'api_keys', 'api_keys_key_hash_unique', ['key_hash'], { unique: true });
  await ensureIndex(knex, 'api_keys', 'api_keys_project_created', ['project_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'api_keys');
}
