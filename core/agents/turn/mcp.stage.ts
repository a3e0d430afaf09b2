import type { Secrets } from '../../secrets.js';
import type { McpClient, McpServerDefinition, McpToolDefinition } from '../mcp-client.js';
import type { Turn } from './turn-state.js';

/** Whether the tool policy could let any tool of `server` through (so that listing it is worth it). */
function mayOffer(turn: Turn, server: McpServerDefinition): boolean {
  const allow = turn.agent.view.tool_policy.allow;
  return allow.includes('*') || allow.some((name) => name.startsWith(`${server.name}__`));
}

/**
 * Lists the tools of the agent's MCP servers for the turn (`turn.mcpTools`). A server that
 * cannot be listed — down, refused by the host rules, its secret unset — is left out with the
 * reason in the turn's errors; the turn goes on without it. So are tools whose namespaced name
 * is taken by one of the agent's HTTP tools.
 */
export async function listMcpTools(client: McpClient, secrets: Secrets, turn: Turn): Promise<void> {
  const { agent } = turn;
  if (agent.mcpServers.length === 0 || agent.view.tool_policy.maxCallsPerTurn === 0) return;
  const servers = agent.mcpServers.filter((server) => mayOffer(turn, server));
  const listings = await turn.timed('tools', () =>
    Promise.all(
      servers.map(async (server) => {
        const secret = server.secret_ref !== null ? await secrets.reveal(agent.projectId, server.secret_ref) : null;
        if (server.secret_ref !== null && secret === null) return { server, listing: { error: `MCP server ${server.name}: the secret "${server.secret_ref}" it uses is not set` } };
        return { server, listing: await client.list(server, secret) };
      }),
    ),
  );
  const taken = new Set(agent.tools.map((t) => t.name));
  const tools: McpToolDefinition[] = [];
  for (const { listing } of listings) {
    if ('error' in listing) {
      turn.errors.push({ where: 'mcp', message: listing.error });
      continue;
    }
    for (const reason of listing.skipped) turn.errors.push({ where: 'mcp', message: reason });
    for (const tool of listing.tools) {
      if (taken.has(tool.name)) {
        turn.errors.push({ where: 'mcp', message: `tool ${tool.name} of MCP server ${tool.server.name} left out: the agent has an HTTP tool of that name` });
        continue;
      }
      taken.add(tool.name);
      tools.push(tool);
    }
  }
  turn.mcpTools = tools;
}
