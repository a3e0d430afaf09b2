import net, { type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import type { PrivateHostAllowance } from '../../lib/config.js';
import { AddressGuard, guardedLookup, normalizeHost, resolvedRefusal } from './address-guard.js';

/**
 * Why a URL cannot be sent to whatever its host: a scheme other than http(s), or port 0 (no
 * server listens there, so every call would fail to connect). `what` finishes the sentence:
 * "only http: and https: URLs may <what>".
 */
export function urlFormRefusal(url: URL, what: string): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `only http: and https: URLs may ${what}, not ${url.protocol}`;
  if (url.port === '0') return 'port 0 is not a port a server can listen on';
  return null;
}

/** What is wrong with a URL an agent's tool or MCP server is saved with, whatever its host: one message per problem. */
export function targetUrlProblems(url: URL): string[] {
  const problems: string[] = [];
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('must be an http or https URL');
  if (url.username !== '' || url.password !== '') problems.push('must not carry credentials; use secret_ref');
  if (url.port === '0') problems.push('must not use port 0, where no server can listen');
  return problems;
}

/**
 * Where every connection to an address a tenant names starts: agents' HTTP tools, MCP servers
 * and webhooks. It holds the operator's address rule (TOOL_ALLOW_PRIVATE_HOSTS), checked on a
 * literal address before anything is sent and on every DNS answer when connecting, and the one
 * undici dispatcher that does so. Nothing a tenant configures widens the rule.
 */
export class Outbound {
  readonly guard: AddressGuard;
  /** The dispatcher every such request is sent with: each connection checks the address it resolves to first. */
  readonly dispatcher: Agent;
  /** The connections' own DNS lookup, which refuses a host with any address the rule refuses. */
  private readonly lookup: LookupFunction;

  constructor(privateHosts: PrivateHostAllowance | undefined, connectTimeoutMs: number) {
    this.guard = new AddressGuard(privateHosts);
    this.lookup = guardedLookup(this.guard);
    this.dispatcher = new Agent({ connect: { timeout: connectTimeoutMs, lookup: this.lookup } });
  }

  /**
   * Why a host may not be connected to, as the connection would decide: a literal address or a
   * metadata name at once, a name on the addresses it resolves to now; null if it may. A name that
   * does not resolve rejects.
   */
  async refusal(hostname: string): Promise<string | null> {
    const host = normalizeHost(hostname);
    if (net.isIP(host) !== 0) return this.guard.hostRefusal(host);
    return this.guard.nameRefusal(host) ?? (await resolvedRefusal(this.lookup, host));
  }

  /** Closes the connection pools. */
  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
