import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fetch as undiciFetch } from 'undici';
import type { ToolRateLimiter } from '../../db/tool-rate-limiter.js';
import type { JsonSchema } from '../../lib/validation.js';
import { normalizeHost } from '../outbound/address-guard.js';
import { CallDeniedError, checkHop, classifyFailure, hostPolicy, REDIRECTS, redactor, truncate, type Failure, type HostPolicy } from '../outbound/call-rules.js';
import { Outbound } from '../outbound/outbound.js';
import { tracedToolCall, type ToolCallStatus, type ToolOutcome } from './tool-call.js';
import type { ToolRunnerOptions } from './tool-runner.js';

/** An agent's MCP server as the client needs it. */
export interface McpServerDefinition {
  id: string;
  name: string;
  /** The Streamable HTTP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string;
  /** Effective list (default: the host of `url`); `*.example.com` matches subdomains. */
  allowed_hosts: string[];
  /** True when the user sent `allowed_hosts` themselves (kept for export; it grants nothing). */
  hosts_explicit: boolean;
  /** Header the secret is sent in (default `Authorization`). */
  auth_header: string;
  secret_ref: string | null;
  /** The server's tool names the agent is offered; null: all of them. */
  tools: string[] | null;
  /** Calls per minute of each of the server's tools. */
  rate_per_min: number;
  /** When the server's settings last changed: listings are held per version. */
  updated_at: number;
}

/** One of a server's tools as the model is offered it: named `<server>__<tool>`. */
export interface McpToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  server: McpServerDefinition;
  /** The tool's own name on the server. */
  tool: string;
}

/** A server's tools, or why they could not be listed (the turn goes on without them). */
export type McpListing = { tools: McpToolDefinition[]; skipped: string[] } | { error: string };

export interface McpCall {
  projectId: string;
  agentId: string;
  tool: McpToolDefinition;
  args: Record<string, unknown>;
  secret: string | null;
}

export interface McpClientOptions extends ToolRunnerOptions {
  /** How long a server's tool list is held (default 60 000). */
  listTtlMs?: number;
}

/** Names models accept for a function; a namespaced name must fit. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Most pages of tools/list read, most tools taken from one server. */
const MAX_PAGES = 10;
const MAX_TOOLS = 64;
const MAX_HELD = 1_000;
const USER_AGENT = 'Cairn-MCP/1';
const CLIENT_INFO = { name: 'cairn', version: '1' };

/** The model-facing name of a server's tool. */
export const namespaced = (server: string, tool: string): string => `${server}__${tool}`;

/** One operation against a server (a listing or a call): its deadline and what ended it early. */
interface Operation {
  controller: AbortController;
  /** Set by the fetch or the timer when the rules, the size cap or the clock stopped the operation. */
  failure?: Failure;
}

/** The text of an MCP tool result: its text parts, the JSON of structured content, placeholders for media. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((part) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    if (part.type === 'resource' && typeof part.resource === 'object' && part.resource !== null) {
      const resource = part.resource as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri)}]`;
    }
    if (part.type === 'resource_link') return `[resource ${String(part.uri)}]`;
    return `[${String(part.type)} content${typeof part.mimeType === 'string' ? ` (${part.mimeType})` : ''}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && 'toolResult' in result) return JSON.stringify(result.toolResult);
  return parts.join('\n');
}

/**
 * Uses agents' MCP servers over Streamable HTTP with the official SDK, under the rules HTTP tools
 * follow: every request of the transport goes through a fetch that keeps it to the server's
 * allowed hosts and away from non-public addresses the operator did not allow (checked on the
 * connection's own DNS answer), checks each redirect's target before the SDK may follow it (it
 * follows same-origin ones only), sends the secret to the server's own origin alone, caps the
 * bytes read, and stops the operation at its deadline. Results and errors come back with the
 * secret redacted. Each listing and call is one short session (initialize, request, close).
 * Listings are held per server version for a while; calls draw on the per-minute budget of the
 * tool. Failures are outcomes, never throws (but a rate limiter that cannot be asked: a 503).
 */
export class McpClient {
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxResultChars: number;
  private readonly listTtlMs: number;
  /** The address rule, and the dispatcher that checks every resolved address before connecting. */
  private readonly outbound: Outbound;
  /** Listings by server id, settings version and secret: a PATCH, a new secret value or a DELETE is seen at once. */
  private readonly listings = new Map<string, { expires: number; listing: Promise<McpListing> }>();

  constructor(
    private readonly limiter: ToolRateLimiter,
    options: McpClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024;
    this.maxResultChars = options.maxResultChars ?? 4_000;
    this.listTtlMs = options.listTtlMs ?? 60_000;
    this.outbound = new Outbound(options.privateHosts, this.timeoutMs);
  }

  /**
   * The server's tools the agent is offered (its `tools` allow-list applied), named
   * `<server>__<tool>`; a tool whose name cannot be namespaced is skipped with the reason.
   * A listing that failed is not held.
   */
  async list(server: McpServerDefinition, secret: string | null): Promise<McpListing> {
    const secretKey = secret === null ? '' : createHash('sha256').update(secret).digest('base64url');
    const key = `${server.id}:${server.updated_at}:${secretKey}`;
    const now = Date.now();
    const held = this.listings.get(key);
    if (held && held.expires > now) return held.listing;
    const listing = this.fetchListing(server, secret);
    this.listings.set(key, { expires: now + this.listTtlMs, listing });
    if (this.listings.size > MAX_HELD) {
      for (const [k, v] of this.listings) if (v.expires <= now || this.listings.size > MAX_HELD) this.listings.delete(k);
    }
    const result = await listing;
    if ('error' in result) this.listings.delete(key);
    return result;
  }

  /** Calls one of a server's tools; an `isError` result is status `error` with its text. */
  run(call: McpCall): Promise<ToolOutcome> {
    return tracedToolCall(call.tool.name, { 'cairn.mcp.server': call.tool.server.name, 'cairn.mcp.tool': call.tool.tool }, () => this.call(call));
  }

  /** Closes the connection pools. The rate limiter belongs to the caller, who closes it. */
  async close(): Promise<void> {
    this.listings.clear();
    await this.outbound.close();
  }

  private async fetchListing(server: McpServerDefinition, secret: string | null): Promise<McpListing> {
    const redact = redactor(secret);
    const done = await this.session(server, secret, async (client, signal) => {
      const found: Array<{ name: string; description?: string | undefined; inputSchema: unknown }> = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: this.timeoutMs });
        found.push(...listed.tools);
        cursor = listed.nextCursor;
        if (cursor === undefined || found.length >= MAX_TOOLS * 4) break;
      }
      return found;
    });
    if ('failure' in done) return { error: truncate(redact(`tools/list of MCP server ${server.name}: ${done.failure.message}`), this.maxResultChars) };
    const allowed = server.tools === null ? null : new Set(server.tools);
    const tools: McpToolDefinition[] = [];
    const skipped: string[] = [];
    for (const tool of done.value) {
      if (allowed !== null && !allowed.has(tool.name)) continue;
      const name = namespaced(server.name, tool.name);
      if (!TOOL_NAME.test(name)) {
        skipped.push(`tool ${JSON.stringify(tool.name.slice(0, 100))} of MCP server ${server.name}: ${name.length > 64 ? 'its namespaced name is longer than 64 characters' : 'its name has characters other than letters, digits, _ and -'}`);
        continue;
      }
      if (tools.length >= MAX_TOOLS) {
        skipped.push(`MCP server ${server.name} lists more than ${MAX_TOOLS} tools; the rest were left out (narrow its tools allow-list)`);
        break;
      }
      const schema = (typeof tool.inputSchema === 'object' && tool.inputSchema !== null ? tool.inputSchema : { type: 'object', properties: {} }) as JsonSchema;
      tools.push({ name, description: redact(tool.description ?? ''), parameters: schema, server, tool: tool.name });
    }
    return { tools, skipped };
  }

  private async call(call: McpCall): Promise<ToolOutcome> {
    const started = performance.now();
    const redact = redactor(call.secret);
    const outcome = (status: ToolCallStatus, result: string): ToolOutcome => ({
      status,
      result: truncate(redact(result), this.maxResultChars),
      duration_ms: Math.round(performance.now() - started),
    });
    const { tool } = call;
    const first = this.firstHop(tool.server);
    if ('denied' in first) return outcome('denied', first.denied);
    // Checked after the cheap refusals, so calls that could never be made do not spend the budget.
    if (!(await this.limiter.take(`${call.projectId}:${call.agentId}:mcp:${tool.server.id}:${tool.tool}`, tool.server.rate_per_min))) {
      return outcome('rate_limited', `this tool may be called ${tool.server.rate_per_min} times per minute; the budget is spent, try again in a minute`);
    }
    const done = await this.session(tool.server, call.secret, (client, signal) =>
      client.callTool({ name: tool.tool, arguments: call.args }, undefined, { signal, timeout: this.timeoutMs }),
    );
    if ('failure' in done) return outcome(done.failure.status, done.failure.message);
    const result = done.value as Record<string, unknown>;
    const text = resultText(result);
    return result.isError === true ? outcome('error', text || 'the tool reported an error') : outcome('ok', text);
  }

  /** The server's URL, checked against its hosts and the operator's rule before anything is sent. */
  private firstHop(server: McpServerDefinition): { url: URL; policy: HostPolicy } | { denied: string } {
    let url: URL;
    try {
      url = new URL(server.url);
    } catch {
      return { denied: `the MCP server's url is not a valid URL` };
    }
    const policy = hostPolicy(server.allowed_hosts, "the MCP server's");
    const check = checkHop(url, policy, this.outbound.guard);
    return check ?? { url, policy };
  }

  /** Connects, runs `work`, closes; whatever stopped it (rules, size, clock, network) comes back as a failure. */
  private async session<T>(server: McpServerDefinition, secret: string | null, work: (client: Client, signal: AbortSignal) => Promise<T>): Promise<{ value: T } | { failure: Failure }> {
    const first = this.firstHop(server);
    if ('denied' in first) return { failure: { status: 'denied', message: first.denied } };
    const operation: Operation = { controller: new AbortController() };
    const stop = (failure: Failure): void => {
      operation.failure ??= failure;
      operation.controller.abort(new Error(failure.message));
    };
    const timer = setTimeout(() => stop({ status: 'timeout', message: `no complete answer within ${this.timeoutMs} ms` }), this.timeoutMs);
    const transport = new StreamableHTTPClientTransport(first.url, { fetch: this.fetcher(server, secret, first.policy, operation, stop) });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const { signal } = operation.controller;
    try {
      await client.connect(transport, { signal, timeout: this.timeoutMs });
      const value = await work(client, signal);
      // a server that keeps sessions is told this one is over (stateless ones have none)
      await transport.terminateSession().catch(() => undefined);
      return { value };
    } catch (err) {
      if (operation.failure) return { failure: operation.failure };
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return { failure: { status: 'timeout', message: `no complete answer within ${this.timeoutMs} ms` } };
      return { failure: classifyFailure(err, normalizeHost(first.url.hostname)) };
    } finally {
      clearTimeout(timer);
      operation.controller.abort();
      await client.close().catch(() => undefined);
    }
  }

  /**
   * The transport's fetch: each request's URL checked, the secret added for the server's origin
   * only, redirects left unfollowed here and their targets checked (the SDK follows same-origin
   * ones through this fetch again), the body cut off past the size cap.
   */
  private fetcher(server: McpServerDefinition, secret: string | null, policy: HostPolicy, operation: Operation, stop: (failure: Failure) => void): FetchLike {
    const origin = new URL(server.url).origin;
    const header = (server.auth_header || 'Authorization').toLowerCase();
    const max = this.maxResponseBytes;
    return async (input, init) => {
      const url = new URL(String(input));
      const hop = checkHop(url, policy, this.outbound.guard);
      if (hop) {
        stop({ status: 'denied', message: hop.denied });
        throw new CallDeniedError(hop.denied);
      }
      const headers = new Headers(init?.headers);
      headers.set('user-agent', USER_AGENT);
      headers.delete(header);
      if (secret !== null && url.origin === origin) headers.set(header, secret);
      const signal = init?.signal ? AbortSignal.any([init.signal, operation.controller.signal]) : operation.controller.signal;
      const response = await undiciFetch(url, {
        method: init?.method ?? 'GET',
        headers: [...headers],
        body: init?.body as string | undefined,
        signal,
        redirect: 'manual',
        dispatcher: this.outbound.dispatcher,
      });
      if (REDIRECTS.has(response.status)) {
        const location = response.headers.get('location');
        await response.body?.cancel().catch(() => undefined);
        let next: URL | null;
        try {
          next = location ? new URL(location, url) : null;
        } catch {
          next = null;
        }
        const check = next ? checkHop(next, policy, this.outbound.guard) : { denied: 'to an invalid URL' };
        if (check) {
          const message = `redirected (HTTP ${response.status}): ${check.denied}`;
          stop({ status: 'denied', message });
          throw new CallDeniedError(message);
        }
        return new Response(null, { status: response.status, headers: [['location', (next as URL).href]] });
      }
      const declared = Number(response.headers.get('content-length'));
      const tooLarge: Failure = { status: 'error', message: `response larger than ${max} bytes` };
      if (declared > max) {
        await response.body?.cancel().catch(() => undefined);
        stop(tooLarge);
        throw new Error(tooLarge.message);
      }
      let size = 0;
      const body =
        response.body === null || response.status === 204 || response.status === 304
          ? null
          : (response.body as ReadableStream<Uint8Array>).pipeThrough(
              new TransformStream<Uint8Array, Uint8Array>({
                transform(chunk, controller) {
                  size += chunk.byteLength;
                  if (size > max) {
                    stop(tooLarge);
                    controller.error(new Error(tooLarge.message));
                  } else controller.enqueue(chunk);
                },
              }),
            );
      return new Response(body, { status: response.status, statusText: response.statusText, headers: [...response.headers] });
    };
  }
}
