import type { Knex } from 'knex';
import { termCounts } from '../../contracts/memory-terms.js';
import { addColumnIfMissing, createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The keyword side of memory search: one row per (memory, term) with the term's count in the
 * memory, written in the same transaction as the memory, so every API process and worker reads
 * the same index as the rows. The entity ids are copied into each row so that a search reads only
 * the postings of the entity it is pinned to (one index per entity column). `term_count` on the
 * memory is its length in terms (BM25's document length). Existing memories are indexed here.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'memory_terms', (t) => {
    t.string('memory_id', 36).notNullable();
    t.string('term', 64).notNullable();
    t.string('project_id', 36).notNullable();
    t.string('user_id', 255).nullable();
    t.string('agent_id', 255).nullable();
    t.string('run_id', 255).nullable();
    t.string('app_id', 255).nullable();
    t.integer('tf').notNullable();
    t.integer('doc_len').notNullable();
    t.primary(['memory_id', 'term']);
  });
  for (const entity of ['user_id', 'agent_id', 'run_id', 'app_id']) {
    await ensureIndex(knex, 'memory_terms', `memory_terms_${entity}`, ['project_id', entity, 'term']);
  }
  await addColumnIfMissing(knex, 'memories', 'term_count', (t) => t.integer('term_count').nullable());
  // the scope statistics of a search pinned to one of these (user_id has memories_project_user)
  for (const entity of ['agent_id', 'run_id', 'app_id']) {
    await ensureIndex(knex, 'memories', `memories_project_${entity.replace('_id', '')}`, ['project_id', entity]);
  }
  await backfill(knex);
}

/** Indexes the memories written before this migration, a page at a time. */
async function backfill(knex: Knex): Promise<void> {
  for (;;) {
    const rows = (await knex('memories')
      .whereNull('term_count')
      .orderBy('id')
      .limit(500)
      .select('id', 'project_id', 'memory', 'user_id', 'agent_id', 'run_id', 'app_id')) as Array<Record<string, string | null>>;
    if (rows.length === 0) return;
    await knex.transaction(async (trx) => {
      for (const row of rows) {
        const { counts, length } = termCounts(row.memory as string);
        await trx('memory_terms').where({ memory_id: row.id }).delete();
        const postings = [...counts].map(([term, tf]) => ({
          memory_id: row.id,
          term,
          project_id: row.project_id,
          user_id: row.user_id,
          agent_id: row.agent_id,
          run_id: row.run_id,
          app_id: row.app_id,
          tf,
          doc_len: length,
        }));
        if (postings.length > 0) await trx.batchInsert('memory_terms', postings, 200);
        await trx('memories').where({ id: row.id }).update({ term_count: length });
      }
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'memory_terms');
  if (await knex.schema.hasColumn('memories', 'term_count')) {
    await knex.schema.alterTable('memories', (t) => t.dropColumn('term_count'));
  }
}
