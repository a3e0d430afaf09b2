import type { Knex } from 'knex';
import { isUniqueViolation } from './indexes.repository.js';

export interface AgentRow {
  id: string;
  project_id: string;
  name: string;
  instructions: string;
  model: string;
  fallback_message: string;
  /** JSON: string[] */
  ui_actions: string;
  /** JSON: Guardrails */
  guardrails: string;
  /** JSON: ToolPolicy */
  tool_policy: string;
  /** JSON: Flow, or null */
  flow: string | null;
  stream_mode: string;
  /** JSON: string[] of knowledge base names */
  knowledge: string;
  created_at: number;
  updated_at: number;
}

export interface ToolRow {
  id: string;
  project_id: string;
  agent_id: string;
  name: string;
  description: string;
  http_url: string;
  http_method: string;
  /** JSON Schema, as JSON */
  parameters: string;
  auth_header: string;
  secret_ref: string | null;
  rate_per_min: number;
  /** JSON: string[] */
  allowed_hosts: string;
  hosts_explicit: boolean | number;
  created_at: number;
  updated_at: number;
}

export interface McpServerRow {
  id: string;
  project_id: string;
  agent_id: string;
  name: string;
  url: string;
  /** JSON: string[] */
  allowed_hosts: string;
  hosts_explicit: boolean | number;
  auth_header: string;
  secret_ref: string | null;
  /** JSON: string[] of the server's tool names the agent is offered; null: all of them */
  tools: string | null;
  rate_per_min: number;
  created_at: number;
  updated_at: number;
}

export interface RuleRow {
  id: string;
  project_id: string;
  agent_id: string;
  rule_type: string;
  condition: string;
  action: string;
  priority: number;
  created_at: number;
  updated_at: number;
}

export interface SecretRow {
  project_id: string;
  name: string;
  sealed: string;
  created_at: number;
  updated_at: number;
}

export type RunStatus = 'ok' | 'escalated' | 'blocked' | 'failed';

export interface RunRow {
  id: string;
  project_id: string;
  agent_id: string;
  conversation_id: string;
  status: RunStatus;
  escalated: boolean | number;
  llm_calls: number;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  /** JSON: the turn's chat messages */
  input: string;
  answer: string;
  /** JSON: the run detail */
  detail: string;
  created_at: number;
}

export type RunSummaryRow = Omit<RunRow, 'input' | 'answer' | 'detail'>;

const SUMMARY_COLUMNS = ['id', 'project_id', 'agent_id', 'conversation_id', 'status', 'escalated', 'llm_calls', 'tokens_in', 'tokens_out', 'latency_ms', 'created_at'];

const NEWEST_FIRST = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
] as const;

/** Agents, their tools and rules, the project's secrets and the agents' runs; every query scoped by project. */
export class AgentsRepository {
  constructor(private readonly db: Knex) {}

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insertAgent(row: AgentRow): Promise<void> {
    await this.db('agents').insert(row);
  }

  async findAgent(projectId: string, name: string, trx: Knex = this.db): Promise<AgentRow | undefined> {
    return (await trx('agents').where({ project_id: projectId, name }).first()) as AgentRow | undefined;
  }

  async listAgents(projectId: string, limit: number, offset: number): Promise<AgentRow[]> {
    return (await this.db('agents').where({ project_id: projectId }).orderBy([...NEWEST_FIRST]).limit(limit).offset(offset)) as AgentRow[];
  }

  async updateAgent(projectId: string, id: string, changes: Partial<AgentRow>): Promise<void> {
    await this.db('agents').where({ project_id: projectId, id }).update(changes);
  }

  /** Removes an agent with its tools, MCP servers, rules and runs. */
  async deleteAgent(projectId: string, id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('agent_tools').where({ project_id: projectId, agent_id: id }).delete();
      await trx('agent_mcp_servers').where({ project_id: projectId, agent_id: id }).delete();
      await trx('agent_rules').where({ project_id: projectId, agent_id: id }).delete();
      await trx('agent_runs').where({ project_id: projectId, agent_id: id }).delete();
      await trx('agents').where({ project_id: projectId, id }).delete();
    });
  }

  /** Tools of these agents, oldest first. */
  async tools(projectId: string, agentIds: string[]): Promise<ToolRow[]> {
    if (agentIds.length === 0) return [];
    return (await this.db('agent_tools')
      .where({ project_id: projectId })
      .whereIn('agent_id', agentIds)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])) as ToolRow[];
  }

  async insertTool(row: ToolRow): Promise<void> {
    await this.db('agent_tools').insert(row);
  }

  async updateTool(projectId: string, id: string, changes: Partial<ToolRow>): Promise<void> {
    await this.db('agent_tools').where({ project_id: projectId, id }).update(changes);
  }

  async deleteTool(projectId: string, id: string): Promise<void> {
    await this.db('agent_tools').where({ project_id: projectId, id }).delete();
  }

  /** MCP servers of these agents, oldest first. */
  async mcpServers(projectId: string, agentIds: string[]): Promise<McpServerRow[]> {
    if (agentIds.length === 0) return [];
    return (await this.db('agent_mcp_servers')
      .where({ project_id: projectId })
      .whereIn('agent_id', agentIds)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])) as McpServerRow[];
  }

  async insertMcpServer(row: McpServerRow): Promise<void> {
    await this.db('agent_mcp_servers').insert(row);
  }

  async updateMcpServer(projectId: string, id: string, changes: Partial<McpServerRow>): Promise<void> {
    await this.db('agent_mcp_servers').where({ project_id: projectId, id }).update(changes);
  }

  async deleteMcpServer(projectId: string, id: string): Promise<void> {
    await this.db('agent_mcp_servers').where({ project_id: projectId, id }).delete();
  }

  /** Rules of these agents, highest priority first (then oldest). */
  async rules(projectId: string, agentIds: string[]): Promise<RuleRow[]> {
    if (agentIds.length === 0) return [];
    return (await this.db('agent_rules')
      .where({ project_id: projectId })
      .whereIn('agent_id', agentIds)
      .orderBy([
        { column: 'priority', order: 'desc' },
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])) as RuleRow[];
  }

  async insertRule(row: RuleRow): Promise<void> {
    await this.db('agent_rules').insert(row);
  }

  async updateRule(projectId: string, id: string, changes: Partial<RuleRow>): Promise<void> {
    await this.db('agent_rules').where({ project_id: projectId, id }).update(changes);
  }

  async deleteRule(projectId: string, id: string): Promise<void> {
    await this.db('agent_rules').where({ project_id: projectId, id }).delete();
  }

  async secret(projectId: string, name: string): Promise<SecretRow | undefined> {
    return (await this.db('secrets').where({ project_id: projectId, name }).first()) as SecretRow | undefined;
  }

  /** Secret names and dates, never the sealed values. */
  async listSecrets(projectId: string, limit: number, offset: number): Promise<Array<Omit<SecretRow, 'sealed'>>> {
    return (await this.db('secrets')
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'name', order: 'asc' },
      ])
      .limit(limit)
      .offset(offset)
      .select('project_id', 'name', 'created_at', 'updated_at')) as Array<Omit<SecretRow, 'sealed'>>;
  }

  /** Inserts or replaces a secret; true when it is new. */
  /**
   * Stores a secret, or replaces its value; true when it was new. Insert first, update on the
   * unique key: an update-then-insert transaction gap-locks the missing row in MariaDB, and two
   * such puts of different new secrets at once deadlocked each other.
   */
  async putSecret(row: SecretRow): Promise<boolean> {
    try {
      await this.db('secrets').insert(row);
      return true;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    await this.db('secrets').where({ project_id: row.project_id, name: row.name }).update({ sealed: row.sealed, updated_at: row.updated_at });
    return false;
  }

  async deleteSecret(projectId: string, name: string): Promise<number> {
    return this.db('secrets').where({ project_id: projectId, name }).delete();
  }

  async insertRun(row: RunRow): Promise<void> {
    await this.db('agent_runs').insert(row);
  }

  async listRuns(projectId: string, agentId: string, limit: number, offset: number, conversationId?: string): Promise<RunSummaryRow[]> {
    const query = this.db('agent_runs').where({ project_id: projectId, agent_id: agentId });
    if (conversationId !== undefined) query.andWhere({ conversation_id: conversationId });
    return (await query.orderBy([...NEWEST_FIRST]).limit(limit).offset(offset).select(SUMMARY_COLUMNS)) as RunSummaryRow[];
  }

  async run(projectId: string, agentId: string, id: string): Promise<RunRow | undefined> {
    return (await this.db('agent_runs').where({ project_id: projectId, agent_id: agentId, id }).first()) as RunRow | undefined;
  }

  /** The last `limit` turns of a conversation, oldest first: what the next turn sees as context. */
  async conversation(projectId: string, agentId: string, conversationId: string, limit: number): Promise<Array<Pick<RunRow, 'input' | 'answer'>>> {
    const rows = (await this.db('agent_runs')
      .where({ project_id: projectId, agent_id: agentId, conversation_id: conversationId })
      .orderBy([...NEWEST_FIRST])
      .limit(limit)
      .select('input', 'answer')) as Array<Pick<RunRow, 'input' | 'answer'>>;
    return rows.reverse();
  }
}
