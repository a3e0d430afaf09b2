import type { Knex } from 'knex';
import { addColumnIfMissing, dropIndexIfExists, ensureIndex } from './helpers.js';

/**
 * Facts that keep what was true when: a memory's validity in event time (`valid_from`, null: its
 * created_at; `valid_to`, null: still valid) and, on a version an update superseded, the memory
 * that superseded it (`superseded_by`). Indexed by successor, so a memory's chain of versions is
 * read, and deleted with it, without a scan.
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'valid_from', (t) => t.bigInteger('valid_from').nullable());
  await addColumnIfMissing(knex, 'memories', 'valid_to', (t) => t.bigInteger('valid_to').nullable());
  await addColumnIfMissing(knex, 'memories', 'superseded_by', (t) => t.string('superseded_by', 36).nullable());
  await ensureIndex(knex, 'memories', 'memories_superseded_by', ['project_id', 'superseded_by']);
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexIfExists(knex, 'memories', 'memories_superseded_by');
  for (const column of ['superseded_by', 'valid_to', 'valid_from']) {
    if (await knex.schema.hasColumn('memories', column)) await knex.schema.alterTable('memories', (t) => t.dropColumn(column));
  }
}
