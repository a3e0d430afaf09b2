import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import type { PrivateHostAllowance } from '../../lib/config.js';
import type { JsonSchema } from '../../lib/validation.js';
import { normalizeHost } from '../outbound/address-guard.js';
import { checkHop, classifyFailure, REDIRECTS, hostPolicy, redactor, truncate } from '../outbound/call-rules.js';
import { Outbound } from '../outbound/outbound.js';
import { tracedToolCall, type ToolCallStatus, type ToolOutcome } from './tool-call.js';
import type { ToolRateLimiter } from '../../db/tool-rate-limiter.js';

export type { ToolCallStatus, ToolOutcome } from './tool-call.js';

/** An agent's HTTP tool as the runner needs it (DESIGN.md §4, "Tools"). */
export interface ToolDefinition {
  id: string;
  name: string;
  description: string;
  /** May hold `{param}` templates in its path, e.g. `https://api.x.com/orders/{order_id}`. */
  http_url: string;
  /** GET, POST, PUT, PATCH or DELETE. */
  http_method: string;
  /** `{type: 'object', properties, required}`. */
  parameters: JsonSchema;
  /** Header the secret is sent in (default `Authorization`). */
  auth_header: string;
  /** Name of the project secret whose value the caller passes to `run()`. */
  secret_ref: string | null;
  rate_per_min: number;
  /** Effective list (default: the host of `http_url`); `*.example.com` matches subdomains. */
  allowed_hosts: string[];
  /** True when the user sent `allowed_hosts` themselves (kept for export; it grants nothing). */
  hosts_explicit: boolean;
}

export interface ToolRunnerOptions {
  /** Whole call, body read included (default 10 000). */
  timeoutMs?: number;
  /** Response bodies larger than this are an error (default 1 MiB). */
  maxResponseBytes?: number;
  /** `result` is cut to this many characters (default 4 000). */
  maxResultChars?: number;
  /** Redirects followed per call (default 3). */
  maxRedirects?: number;
  /** The operator's non-public hosts and networks tools may reach (default: none). */
  privateHosts?: PrivateHostAllowance;
}

/** One call of a tool: the caller resolves `secret` from the tool's `secret_ref`. */
export interface ToolCall {
  projectId: string;
  agentId: string;
  tool: ToolDefinition;
  args: Record<string, unknown>;
  secret: string | null;
  signal?: AbortSignal;
}

const ACCEPT = 'application/json, text/plain;q=0.9, */*;q=0.1';
const USER_AGENT = 'Cairn-Tool/1';
const METHODS = new Set<Dispatcher.HttpMethod>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const QUERY_METHODS = new Set<Dispatcher.HttpMethod>(['GET', 'DELETE']);

/** An argument as text: strings as they are, other scalars via String, objects and arrays as JSON; null/undefined as null. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? null;
}

interface Prepared {
  url: URL;
  method: Dispatcher.HttpMethod;
  body?: string;
}

/** Rule 1: path templates, then the remaining arguments as query string (GET, DELETE) or JSON body. */
function prepare(tool: ToolDefinition, args: Record<string, unknown>): Prepared | { error: string } {
  const method = tool.http_method.toUpperCase() as Dispatcher.HttpMethod;
  if (!METHODS.has(method)) return { error: `unsupported http_method ${tool.http_method}; use GET, POST, PUT, PATCH or DELETE` };
  const raw = tool.http_url;
  const authority = raw.indexOf('://');
  if (authority < 0) return { error: 'the tool’s http_url is not an absolute URL' };
  const authorityEnd = raw.slice(authority + 3).search(/[/?#]/);
  const pathStart = authorityEnd < 0 ? raw.length : authority + 3 + authorityEnd;
  const pathLength = raw.slice(pathStart).search(/[?#]/);
  const pathEnd = pathLength < 0 ? raw.length : pathStart + pathLength;

  const used = new Set<string>();
  const missing: string[] = [];
  const invalid: string[] = [];
  const path = raw.slice(pathStart, pathEnd).replace(/\{([^{}/]+)\}/g, (_match, name: string) => {
    used.add(name);
    const value = Object.hasOwn(args, name) ? text(args[name]) : null;
    if (value === null || value === '') {
      missing.push(name);
      return '';
    }
    // URL parsing resolves "." and ".." segments (even percent-encoded), which would leave the templated path.
    if (value === '.' || value === '..') invalid.push(name);
    return encodeURIComponent(value);
  });
  if (missing.length > 0) return { error: `missing path parameter${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` };
  if (invalid.length > 0) return { error: `path parameter ${invalid.join(', ')} may not be "." or ".."` };

  let url: URL;
  try {
    url = new URL(raw.slice(0, pathStart) + path + raw.slice(pathEnd));
  } catch {
    return { error: 'the tool’s http_url is not a valid URL' };
  }
  const rest = Object.entries(args).filter(([name]) => !used.has(name));
  if (QUERY_METHODS.has(method)) {
    for (const [name, value] of rest) {
      for (const item of Array.isArray(value) ? value : [value]) {
        const itemText = text(item);
        if (itemText !== null) url.searchParams.append(name, itemText);
      }
    }
    return { url, method };
  }
  return { url, method, body: JSON.stringify(Object.fromEntries(rest)) };
}

/** Reads at most `max` bytes of a body; null when it is larger. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) {
      body.destroy();
      return null;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Runs agents' HTTP tools: fills the request from the model's arguments, keeps it to the tool's
 * allowed hosts and away from non-public addresses the operator did not allow (checked on the
 * connection's own DNS answer, on every redirect hop), enforces the per-minute budget, a timeout
 * and a response-size cap, and returns the outcome with the secret redacted. Tool-side failures are outcomes, never throws;
 * `run` throws only when the rate limiter cannot be asked (a 503 `AppError` from Redis).
 */
export class ToolRunner {
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxResultChars: number;
  private readonly maxRedirects: number;
  /** The address rule, and the dispatcher that checks every resolved address before connecting. */
  private readonly outbound: Outbound;

  constructor(
    private readonly limiter: ToolRateLimiter,
    options: ToolRunnerOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024;
    this.maxResultChars = options.maxResultChars ?? 4_000;
    this.maxRedirects = options.maxRedirects ?? 3;
    this.outbound = new Outbound(options.privateHosts, this.timeoutMs);
  }

  /**
   * Makes the call. While tracing is on it is an `execute_tool <name>` span (the GenAI semantic
   * conventions' tool call) with the outcome's status and HTTP status; a call that failed is an error.
   */
  run(call: ToolCall): Promise<ToolOutcome> {
    return tracedToolCall(call.tool.name, { 'http.request.method': call.tool.http_method }, () => this.call(call));
  }

  private async call(call: ToolCall): Promise<ToolOutcome> {
    const started = performance.now();
    const redact = redactor(call.secret);
    const outcome = (status: ToolCallStatus, result: string, httpStatus?: number): ToolOutcome => ({
      status,
      result: truncate(redact(result), this.maxResultChars),
      ...(httpStatus === undefined ? {} : { http_status: httpStatus }),
      duration_ms: Math.round(performance.now() - started),
    });

    const { tool } = call;
    const prepared = prepare(tool, call.args);
    if ('error' in prepared) return outcome('error', prepared.error);
    const policy = hostPolicy(tool.allowed_hosts, "the tool's");
    const first = checkHop(prepared.url, policy, this.outbound.guard);
    if (first) return outcome('denied', first.denied);

    // Checked after the cheap refusals, so calls that could never be made do not spend the budget.
    if (!(await this.limiter.take(`${call.projectId}:${call.agentId}:${tool.id}`, tool.rate_per_min))) {
      return outcome('rate_limited', `this tool may be called ${tool.rate_per_min} times per minute; the budget is spent, try again in a minute`);
    }
    if (call.signal?.aborted) return outcome('error', 'the call was cancelled');

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('tool call timed out'));
    }, this.timeoutMs);
    const cancel = (): void => controller.abort(call.signal?.reason);
    call.signal?.addEventListener('abort', cancel, { once: true });

    const origin = prepared.url.origin;
    let { url, method, body } = prepared;
    try {
      for (let hop = 0; ; hop += 1) {
        const headers: Record<string, string> = { accept: ACCEPT, 'user-agent': USER_AGENT };
        if (body !== undefined) headers['content-type'] = 'application/json';
        // The secret goes to the tool's own origin only, never to where a redirect points elsewhere.
        if (call.secret !== null && url.origin === origin) headers[(tool.auth_header || 'Authorization').toLowerCase()] = call.secret;

        const response = await request(url, {
          dispatcher: this.outbound.dispatcher,
          method,
          headers,
          body,
          signal: controller.signal,
          maxRedirections: 0,
        });
        const location = response.headers.location;
        const target = Array.isArray(location) ? location[0] : location;
        if (REDIRECTS.has(response.statusCode) && target) {
          await response.body.dump();
          if (hop >= this.maxRedirects) return outcome('error', `more than ${this.maxRedirects} redirects`, response.statusCode);
          let next: URL;
          try {
            next = new URL(target, url);
          } catch {
            return outcome('error', `redirect to an invalid URL`, response.statusCode);
          }
          const check = checkHop(next, policy, this.outbound.guard);
          if (check) return outcome('denied', `redirected: ${check.denied}`, response.statusCode);
          if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          url = next;
          continue;
        }

        const declared = Number(response.headers['content-length']);
        const content = declared > this.maxResponseBytes ? null : await readCapped(response.body, this.maxResponseBytes);
        if (content === null) {
          response.body.destroy();
          return outcome('error', `response larger than ${this.maxResponseBytes} bytes`, response.statusCode);
        }
        if (response.statusCode >= 200 && response.statusCode < 300) return outcome('ok', content, response.statusCode);
        return outcome('error', `HTTP ${response.statusCode}${content ? `: ${content}` : ''}`, response.statusCode);
      }
    } catch (err) {
      if (timedOut) return outcome('timeout', `no complete answer within ${this.timeoutMs} ms`);
      if (call.signal?.aborted) return outcome('error', 'the call was cancelled');
      const failure = classifyFailure(err, normalizeHost(url.hostname));
      return outcome(failure.status, failure.message);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', cancel);
    }
  }

  /** Closes the runner's connection pools. The rate limiter belongs to the caller, who closes it. */
  async close(): Promise<void> {
    await this.outbound.close();
  }
}
