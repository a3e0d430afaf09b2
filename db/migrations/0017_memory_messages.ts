import type { Knex } from 'knex';
import { addColumnIfMissing } from './helpers.js';

/**
 * Marks memories stored as the messages of a conversation (mem0 add with `infer: false`): such a
 * memory is embedded with the message before it as context, since a reply ("Mostly on Mondays")
 * means little without what it answers. Memories written before this stay unmarked.
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'is_message', (t) => t.boolean('is_message').notNullable().defaultTo(false));
}

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasColumn('memories', 'is_message')) {
    await knex.schema.alterTable('memories', (t) => t.dropColumn('is_message'));
  }
}
