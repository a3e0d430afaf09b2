import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The entity index: each named entity (person, place, organisation, product, date) a memory's text
 * mentions, written when the memory is indexed, with the memory's owner and event time copied so
 * an owner's entities are listed, and the memories mentioning one found, from this table alone.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'memory_entities', (t) => {
    t.string('memory_id', 36).notNullable();
    t.string('kind', 16).notNullable();
    t.string('entity_key', 200).notNullable();
    t.string('name', 200).notNullable();
    t.string('project_id', 36).notNullable();
    t.string('user_id', 255).nullable();
    t.string('agent_id', 255).nullable();
    t.string('run_id', 255).nullable();
    t.string('app_id', 255).nullable();
    t.bigInteger('seen_at').notNullable();
    t.primary(['memory_id', 'kind', 'entity_key']);
  });
  await ensureIndex(knex, 'memory_entities', 'memory_entities_user', ['project_id', 'user_id', 'entity_key']);
  await ensureIndex(knex, 'memory_entities', 'memory_entities_agent', ['project_id', 'agent_id', 'entity_key']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'memory_entities');
}
