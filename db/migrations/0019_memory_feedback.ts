import type { Knex } from 'knex';
import { addColumnIfMissing } from './helpers.js';

/**
 * mem0's feedback on a memory (POSITIVE, NEGATIVE, VERY_NEGATIVE, or none) and the reason given,
 * kept on the memory itself: it is shown with the memory and goes with it when it is deleted.
 */
export async function up(knex: Knex): Promise<void> {
  await addColumnIfMissing(knex, 'memories', 'feedback', (t) => t.string('feedback', 16).nullable());
  await addColumnIfMissing(knex, 'memories', 'feedback_reason', (t) => t.text('feedback_reason').nullable());
}

export async function down(knex: Knex): Promise<void> {
  for (const column of ['feedback_reason', 'feedback']) {
    if (await knex.schema.hasColumn('memories', column)) await knex.schema.alterTable('memories', (t) => t.dropColumn(column));
  }
}
