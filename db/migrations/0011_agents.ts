import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * Agents with their HTTP tools and rules, the project's write-only secrets (encrypted with
 * SECRETS_KEY), and one run per chat turn. An agent's list-valued settings (knowledge, ui_actions)
 * and structured ones (guardrails, tool_policy, flow) are JSON text: they are read and written
 * whole with the agent.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  const longText = (t: Knex.CreateTableBuilder, name: string) => (mysql ? t.specificType(name, 'LONGTEXT') : t.text(name));

  await createTableIfMissing(knex, 'agents', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.text('instructions').notNullable();
    t.string('model', 128).notNullable();
    t.text('fallback_message').notNullable();
    t.text('ui_actions').notNullable();
    t.text('guardrails').notNullable();
    t.text('tool_policy').notNullable();
    t.text('flow').nullable();
    t.string('stream_mode', 16).notNullable();
    t.text('knowledge').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'agents', 'agents_project_name', ['project_id', 'name'], { unique: true });

  await createTableIfMissing(knex, 'agent_tools', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('agent_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.text('description').notNullable();
    t.string('http_url', 2048).notNullable();
    t.string('http_method', 8).notNullable();
    t.text('parameters').notNullable();
    t.string('auth_header', 128).notNullable();
    t.string('secret_ref', 64).nullable();
    t.integer('rate_per_min').notNullable();
    t.text('allowed_hosts').notNullable();
    // whether the user listed the hosts: only then may a tool reach a private address
    t.boolean('hosts_explicit').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'agent_tools', 'agent_tools_agent_name', ['project_id', 'agent_id', 'name'], { unique: true });

  await createTableIfMissing(knex, 'agent_rules', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('agent_id', 36).notNullable();
    t.string('rule_type', 16).notNullable();
    t.text('condition').notNullable();
    t.text('action').notNullable();
    t.integer('priority').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'agent_rules', 'agent_rules_agent', ['project_id', 'agent_id']);

  await createTableIfMissing(knex, 'secrets', (t) => {
    t.string('project_id', 36).notNullable();
    t.string('name', 64).notNullable();
    // AES-256-GCM: base64 of iv | tag | ciphertext
    t.text('sealed').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['project_id', 'name']);
  });

  await createTableIfMissing(knex, 'agent_runs', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('agent_id', 36).notNullable();
    t.string('conversation_id', 128).notNullable();
    t.string('status', 16).notNullable();
    t.boolean('escalated').notNullable();
    t.integer('llm_calls').notNullable();
    t.integer('tokens_in').notNullable();
    t.integer('tokens_out').notNullable();
    t.integer('latency_ms').notNullable();
    // this turn's messages and answer: the context of the conversation's next turns
    longText(t, 'input').notNullable();
    t.text('answer').notNullable();
    longText(t, 'detail').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await ensureIndex(knex, 'agent_runs', 'agent_runs_agent', ['project_id', 'agent_id', 'created_at']);
  await ensureIndex(knex, 'agent_runs', 'agent_runs_conversation', ['project_id', 'agent_id', 'conversation_id', 'created_at']);
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'agent_runs');
  await dropTableIfExists(knex, 'secrets');
  await dropTableIfExists(knex, 'agent_rules');
  await dropTableIfExists(knex, 'agent_tools');
  await dropTableIfExists(knex, 'agents');
}
