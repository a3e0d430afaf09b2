import type { Knex } from 'knex';
import { dropIndexIfExists, ensureIndex } from './helpers.js';

/**
 * Lets an owner's indexing progress be polled cheaply: the memories still pending or failed of a
 * project (of one user, from the index alone) are read from this index, the owner's total from its
 * entity index. On 100k memories of one owner the counts went from a scan of every row of the
 * owner (~0.4 s on SQLite and MariaDB) to a few milliseconds.
 */
export async function up(knex: Knex): Promise<void> {
  await ensureIndex(knex, 'memories', 'memories_project_status_user', ['project_id', 'embedding_status', 'user_id']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'memories', 'memories_project_status_user');
}
