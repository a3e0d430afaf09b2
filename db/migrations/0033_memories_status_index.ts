import type { Knex } from 'knex';
import { dropIndexIfExists, ensureIndex } from './helpers.js';

/**
 * Lets an owner's indexing progress be polled cheaply: the memories still pending or failed of a
 * project (of a user or an agent, from the index alone; of a run or an app, each row looked up)
 * are read from this index, the owner's total from its entity index. On 100k memories of one
 * owner the counts went from reading every row of the owner (0.4–0.5 s on SQLite and MariaDB) to
 * tens of milliseconds. Both owner columns fit InnoDB's 3072-byte key; run_id and app_id would not.
 */
export async function up(knex: Knex): Promise<void> {
  await ensureIndex(knex, 'memories', 'memories_project_status_owner', ['project_id', 'embedding_status', 'user_id', 'agent_id']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'memories', 'memories_project_status_owner');
}
