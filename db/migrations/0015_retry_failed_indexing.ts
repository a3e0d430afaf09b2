import type { Knex } from 'knex';

/**
 * Indexing used to end `failed` after five attempts whatever the cause, so a Milvus or model
 * outage left rows failed that would succeed now. They become `pending` (keeping the error) and
 * reconciliation queues them again; those that can never succeed end `failed` once more. Safe to
 * re-run: it only touches rows still `failed`, before any were failed under the current rule.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('memories').where({ embedding_status: 'failed' }).update({ embedding_status: 'pending' });
}

export async function down(): Promise<void> {
  // the old outcome cannot be told apart from a fresh pending row; nothing to undo
}
