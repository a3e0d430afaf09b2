import type { Knex } from 'knex';
import { createTableIfMissing, dropTableIfExists, ensureIndex } from './helpers.js';

/**
 * The MCP servers an agent uses tools of: where the server is, the hosts calls may reach, the
 * secret sent to it (by name; the value stays in `secrets`), which of its tools the agent is
 * offered (JSON `string[]`, or null for all of them) and the per-minute budget of each tool.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableIfMissing(knex, 'agent_mcp_servers', (t) => {
    t.string('id', 36).primary();
    t.string('project_id', 36).notNullable();
    t.string('agent_id', 36).notNullable();
    t.string('name', 64).notNullable();
    t.string('url', 2048).notNullable();
    t.text('allowed_hosts').notNullable();
    // whether the user listed the hosts (kept for export; it grants nothing)
    t.boolean('hosts_explicit').notNullable();
    t.string('auth_header', 128).notNullable();
    t.string('secret_ref', 64).nullable();
    t.text('tools').nullable();
    t.integer('rate_per_min').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await ensureIndex(knex, 'agent_mcp_servers', 'agent_mcp_servers_agent_name', ['project_id', 'agent_id', 'name'], { unique: true });
}

export async function down(knex: Knex): Promise<void> {
  await dropTableIfExists(knex, 'agent_mcp_servers');
}
