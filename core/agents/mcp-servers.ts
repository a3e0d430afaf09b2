import type { McpServerRow } from '../../db/repositories/agents.repository.js';
import { badRequest, type FieldError } from '../../lib/errors.js';
import { targetUrlProblems } from '../outbound/outbound.js';
import type { McpServerDefinition } from './mcp-client.js';

/** Settable fields of an agent's MCP server (create and PATCH). */
export interface McpServerInput {
  name?: string;
  url?: string;
  allowed_hosts?: string[];
  auth_header?: string;
  secret_ref?: string | null;
  /** The server's tool names the agent is offered; null (default): all of them. */
  tools?: string[] | null;
  rate_per_min?: number;
}

/** An MCP server as the API shows it. */
export type McpServerView = Omit<McpServerDefinition, 'hosts_explicit' | 'updated_at'> & { created_at: number; updated_at: number };

const parse = <T>(text: string): T => JSON.parse(text) as T;

/** The fields a server's view and its client definition share. */
function serverFields(row: McpServerRow): Omit<McpServerDefinition, 'hosts_explicit' | 'updated_at'> {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    allowed_hosts: parse<string[]>(row.allowed_hosts),
    auth_header: row.auth_header,
    secret_ref: row.secret_ref,
    tools: row.tools === null ? null : parse<string[]>(row.tools),
    rate_per_min: row.rate_per_min,
  };
}

export function mcpServerView(row: McpServerRow): McpServerView {
  return { ...serverFields(row), created_at: Number(row.created_at), updated_at: Number(row.updated_at) };
}

export function mcpServerDefinition(row: McpServerRow): McpServerDefinition {
  return { ...serverFields(row), hosts_explicit: Boolean(row.hosts_explicit), updated_at: Number(row.updated_at) };
}

/**
 * The hosts a target may reach after a change: those sent; else, when the target moved, its own
 * host; else the stored ones. `explicit` says whether the user chose them (kept for export).
 */
export function targetHosts(sent: string[] | undefined, moved: boolean, current: { allowed_hosts: string; hosts_explicit: boolean | number }, host: string): { hosts: string[]; explicit: boolean } {
  const explicit = sent !== undefined ? true : moved ? false : Boolean(current.hosts_explicit);
  const hosts = sent !== undefined ? [...new Set(sent.map((h) => h.trim().toLowerCase()))] : explicit ? parse<string[]>(current.allowed_hosts) : [host];
  return { hosts, explicit };
}

/** Whether `hosts` lets a call reach `host` (exactly, or by a `*.` suffix). */
export const hostListed = (hosts: string[], host: string): boolean => hosts.some((h) => h === host || (h.startsWith('*.') && host.endsWith(h.slice(1))));

/** The stored fields of a server's target. */
export type McpTarget = Pick<McpServerRow, 'url' | 'allowed_hosts' | 'hosts_explicit'>;

/**
 * URL and hosts of an MCP server, `input` over `current`, checked: an http(s) URL without
 * credentials whose host is allowed. Throws 400 listing every problem.
 */
export function checkMcpTarget(input: McpServerInput, current: McpTarget): McpTarget {
  const url = input.url ?? current.url;
  const problems: FieldError[] = [];
  let host = '';
  try {
    const parsed = new URL(url);
    for (const message of targetUrlProblems(parsed)) problems.push({ path: '/url', message });
    host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    problems.push({ path: '/url', message: 'must be an absolute http or https URL' });
  }
  const { hosts, explicit } = targetHosts(input.allowed_hosts, input.url !== undefined, current, host);
  if (host !== '' && !hostListed(hosts, host)) problems.push({ path: '/allowed_hosts', message: `must include the host of url (${host})` });
  if (problems.length > 0) throw badRequest('validation_failed', `The MCP server is not valid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}.`, problems);
  return { url, allowed_hosts: JSON.stringify(hosts), hosts_explicit: explicit };
}
