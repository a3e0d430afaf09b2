import type { Knex } from 'knex';
import { dropIndexIfExists, ensureIndex } from './helpers.js';

const ENTITIES = ['agent_id', 'run_id', 'app_id'];

/**
 * On SQLite, the postings indexes of the agent, run and app columns hold only the postings of
 * memories that name one: a search is always pinned to a value, never to "none". A chat line
 * stored for a user has no agent, run or app, and each of its ~20 terms went into each of these
 * three indexes at a place of its own, so a commit wrote some 60 pages that no search reads
 * (writing one memory's postings: ~2.3 → ~0.6 ms of CPU). The user index stays whole: it also
 * serves a search whose filter pins no single entity. MySQL/MariaDB have no partial indexes: theirs stay.
 */
export async function up(knex: Knex): Promise<void> {
  if (isMysql(knex)) return;
  for (const entity of ENTITIES) {
    await ensureIndex(knex, 'memory_terms', `memory_terms_${entity}_pinned`, columns(entity), { predicate: knex.whereNotNull(entity) });
    await dropIndexIfExists(knex, 'memory_terms', `memory_terms_${entity}_postings`);
  }
}

export async function down(knex: Knex): Promise<void> {
  if (isMysql(knex)) return;
  for (const entity of ENTITIES) {
    await ensureIndex(knex, 'memory_terms', `memory_terms_${entity}_postings`, columns(entity));
    await dropIndexIfExists(knex, 'memory_terms', `memory_terms_${entity}_pinned`);
  }
}

/** The columns of an entity's postings index, as 0018 made it. */
const columns = (entity: string): string[] => ['project_id', entity, 'term', 'memory_id', 'tf', 'doc_len'];

const isMysql = (knex: Knex): boolean => knex.client.config.client === 'mysql2';
