import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

// A real MCP server for the tests of agents' MCP tools: the official SDK's server over Streamable
// HTTP (stateless: a server and transport per request) on a loopback port, recording every
// HTTP request it gets and every tool call it runs.

/** One HTTP request the server got. */
export interface McpSeen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** One tool call the server ran, with the headers of the request that carried it. */
export interface McpCallSeen {
  tool: string;
  arguments: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

export interface TestMcpServer {
  /** `http://127.0.0.1:PORT/mcp`: the endpoint to attach. */
  url: string;
  port: number;
  requests: McpSeen[];
  calls: McpCallSeen[];
  close(): Promise<void>;
}

const integerParam = (name: string, description: string) => ({
  type: 'object' as const,
  properties: { [name]: { type: 'integer', description } },
  required: [name],
});

/** The tools, each named by a noun of its own so the local model routes a message to one alone. */
export const MCP_TEST_TOOLS = [
  { name: 'get_order', description: 'Look up an order by its order id', inputSchema: integerParam('order_id', 'The order id') },
  { name: 'show_headers', description: 'Show the request headers of a ticket by its ticket id', inputSchema: integerParam('ticket_id', 'The ticket id') },
  { name: 'huge_report', description: 'Produce the full report for a report id', inputSchema: integerParam('report_id', 'The report id') },
  { name: 'slow_invoice', description: 'Fetch an invoice by its invoice id', inputSchema: integerParam('invoice_id', 'The invoice id') },
  { name: 'refund_payment', description: 'Refund a payment by its payment id', inputSchema: integerParam('payment_id', 'The payment id') },
];

/** Bytes of the huge report: past the 1 MiB response cap. */
export const HUGE_REPORT_CHARS = 2 * 1024 * 1024;

function answer(name: string, args: Record<string, unknown>, headers: http.IncomingHttpHeaders): Promise<CallToolResult> {
  const text = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }] });
  switch (name) {
    case 'get_order':
      return Promise.resolve(text({ order_id: args.order_id, status: 'shipped', tracking: `TRK-${String(args.order_id)}` }));
    case 'show_headers':
      return Promise.resolve(text({ ticket: args.ticket_id, headers }));
    case 'huge_report':
      return Promise.resolve(text('x'.repeat(HUGE_REPORT_CHARS)));
    case 'slow_invoice':
      // never answers: the caller's timeout ends the call
      return new Promise<CallToolResult>(() => undefined);
    case 'refund_payment':
      return Promise.resolve({ isError: true, content: [{ type: 'text', text: `refund refused: payment ${String(args.payment_id)} is locked` }] });
    default:
      return Promise.resolve({ isError: true, content: [{ type: 'text', text: `no tool ${name}` }] });
  }
}

/** Starts the server on 127.0.0.1 at a free port. */
export async function mcpServer(): Promise<TestMcpServer> {
  const requests: McpSeen[] = [];
  const calls: McpCallSeen[] = [];
  const listener = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    if (!(req.url ?? '').startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const server = new Server({ name: 'cairn-test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: MCP_TEST_TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const args = request.params.arguments ?? {};
      calls.push({ tool: request.params.name, arguments: args, headers: req.headers });
      return answer(request.params.name, args, req.headers);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections();
        listener.close(() => resolve());
      }),
  };
}
