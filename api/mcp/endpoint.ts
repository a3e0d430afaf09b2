import type Router from '@koa/router';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Middleware } from 'koa';
import type { KeyPrincipal } from '../../core/api-keys.js';
import type { Logger } from '../../lib/logger.js';
import { packageVersion } from '../../lib/modules.js';
import { jsonBody } from '../middleware/body.js';
import { requestLog } from '../middleware/request-context.js';
import { mcpServerFactory, type McpServices } from './server.js';

/** Where the MCP server answers. */
export const MCP_PATH = '/mcp';

/**
 * `/mcp`: Cairn as a Model Context Protocol server over Streamable HTTP, in the SDK's stateless
 * mode: each POST gets a server and transport of its own, bound to the project of the caller's
 * API key, so any API process behind a load balancer answers any request (no session to stick
 * to). Answers are JSON, not event streams: no tool reports progress. GET (the stream of
 * server-sent notifications) and DELETE (ending a session) have nothing to serve without sessions,
 * and answer 405 as the SDK's stateless examples do. The key is checked first, on every method: a
 * missing or wrong one is a 401 in Cairn's error shape before any MCP processing. A JSON-RPC
 * protocol rather than a REST resource, it stays out of `/openapi.json`.
 */
export function mountMcp(
  router: Router,
  { auth, bodyLimitBytes, services, log }: { auth: Middleware; bodyLimitBytes: number; services: McpServices; log: Logger },
): void {
  const serverFor = mcpServerFactory(services, packageVersion());
  const serve: Middleware = async (ctx) => {
    const principal = ctx.state.principal as KeyPrincipal;
    const requestLogger = requestLog(ctx.state) ?? log;
    const server = serverFor(principal.projectId, requestLogger);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // what the transport calls an error is mostly a client's (a wrong Accept header, a malformed message), which it answers itself
    transport.onerror = (err) => requestLogger.debug({ err: err.message }, 'MCP transport refused a request');
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // the transport writes the response itself
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, ctx.state.rawBody);
  };
  const notAllowed: Middleware = (ctx) => {
    ctx.status = 405;
    ctx.set('Allow', 'POST');
    ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: `${ctx.method} is not allowed on ${MCP_PATH}: this server is stateless (no sessions, no notification stream); send JSON-RPC requests with POST.` }, id: null };
  };
  router.post('mcp', MCP_PATH, auth, jsonBody(bodyLimitBytes), serve);
  router.get(MCP_PATH, auth, notAllowed);
  router.delete(MCP_PATH, auth, notAllowed);
}
