import net from 'node:net';
import { AddressRefusedError, normalizeHost, type AddressGuard } from './address-guard.js';
import { urlFormRefusal } from './outbound.js';

// The rules of a call an agent makes (HTTP tools, MCP servers), hop by hop: the caller's host
// allow-list within the operator's address rule, the secret kept out of results, failures in words.

/** Redirect statuses: each target is checked before it is followed (or the call is refused). */
export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The caller's allowed_hosts: they narrow what the operator's address rule lets through, never widen it. */
export interface HostPolicy {
  exact: Set<string>;
  /** `*.example.com` entries, kept as `.example.com`. */
  suffixes: string[];
  listed: string;
  /** Whose list it is, in denials: "the tool's", "the MCP server's". */
  owner: string;
}

export function hostPolicy(allowedHosts: string[], owner: string): HostPolicy {
  const entries = allowedHosts.map(normalizeHost).filter(Boolean);
  return {
    exact: new Set(entries.filter((e) => !e.startsWith('*.'))),
    suffixes: entries.filter((e) => e.startsWith('*.')).map((e) => e.slice(1)),
    listed: entries.join(', ') || 'none',
    owner,
  };
}

/**
 * Scheme and port, allow-list, and the address of a literal IP host for one hop (no DNS lookup happens
 * for those; the URL parser has already turned numeric forms such as 2130706433, 0x7f.1 or
 * 127.1 into dotted decimal). Host names are checked on their DNS answer when connecting.
 */
export function checkHop(url: URL, policy: HostPolicy, guard: AddressGuard): { denied: string } | null {
  const form = urlFormRefusal(url, 'be called');
  if (form) return { denied: form };
  const host = normalizeHost(url.hostname);
  const literal = net.isIP(host) !== 0;
  const allowed = policy.exact.has(host) || (!literal && policy.suffixes.some((suffix) => host.endsWith(suffix)));
  if (!allowed) {
    return { denied: `host ${host} is not in ${policy.owner} allowed_hosts (${policy.listed}); add it there to let it be called` };
  }
  const refused = guard.hostRefusal(host);
  return refused ? { denied: refused } : null;
}

/** Replaces every occurrence of the secret (as sent, JSON-escaped, and its credential after a scheme like "Bearer"). */
export function redactor(secret: string | null): (value: string) => string {
  if (!secret) return (value) => value;
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1)]);
  const credential = /^[A-Za-z][\w.~+-]*\s+(\S[\s\S]*)$/.exec(secret)?.[1];
  if (credential) {
    forms.add(credential);
    forms.add(JSON.stringify(credential).slice(1, -1));
  }
  const ordered = [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
  return (value) => ordered.reduce((acc, form) => acc.split(form).join('[secret]'), value);
}

export function truncate(value: string, max: number): string {
  if (value.length <= max) return value;
  let cut = value.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}… [truncated, ${value.length} chars]`;
}

/** A call refused by the rules before or between hops (a host not listed, a refused redirect). */
export class CallDeniedError extends Error {
  readonly code = 'ERR_CAIRN_CALL_DENIED';

  constructor(reason: string) {
    super(reason);
    this.name = 'CallDeniedError';
  }
}

/** The error and its causes (undici and Happy Eyeballs wrap the one that says what happened). */
function* errorChain(err: unknown): Generator<Error & { code?: unknown }> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const next = queue.shift();
    if (!(next instanceof Error) || seen.has(next)) continue;
    seen.add(next);
    yield next;
    queue.push(next.cause);
    if (next instanceof AggregateError) queue.push(...(next.errors as unknown[]));
  }
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed by the server',
};
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export type Failure = { status: 'denied' | 'timeout' | 'error'; message: string };

/** A failed call in words: refused by the rules, timed out, or a network or protocol error. */
export function classifyFailure(err: unknown, host: string): Failure {
  const chain = [...errorChain(err)];
  const refused = chain.find((e) => e instanceof AddressRefusedError || e instanceof CallDeniedError);
  if (refused) return { status: 'denied', message: refused.message };
  const codes = chain.map((e) => (typeof e.code === 'string' ? e.code : '')).filter(Boolean);
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return { status: 'timeout', message: `no answer from ${host} in time` };
  const known = codes.find((code) => NETWORK_ERRORS[code]);
  if (known) return { status: 'error', message: `could not reach ${host}: ${NETWORK_ERRORS[known]} (${known})` };
  const first = chain[0];
  const detail = first ? (first.message.split('\n')[0] ?? '').slice(0, 200) || first.name : String(err).slice(0, 200);
  return { status: 'error', message: `request to ${host} failed: ${detail}` };
}
