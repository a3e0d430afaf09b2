import { inSpan, SpanKind, SpanStatusCode, tracingEnabled } from '../../lib/tracing.js';

// What an agent's tool call (an HTTP tool or an MCP server's tool) comes to, as the model and the
// turn's trace see it.

export type ToolCallStatus = 'ok' | 'error' | 'timeout' | 'denied' | 'rate_limited';

/** What one tool call came to; `result` is what the model sees (secret redacted, truncated). */
export interface ToolOutcome {
  status: ToolCallStatus;
  result: string;
  http_status?: number;
  duration_ms: number;
}

/**
 * Runs a tool call as an `execute_tool <name>` span while tracing is on (the GenAI semantic
 * conventions' tool call), with the outcome's status and HTTP status; a call that failed is an error.
 */
export function tracedToolCall(name: string, attributes: Record<string, string>, call: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  if (!tracingEnabled()) return call();
  const all = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': 'extension', ...attributes };
  return inSpan(`execute_tool ${name}`, { kind: SpanKind.CLIENT, attributes: all }, async (span) => {
    const outcome = await call();
    span.setAttribute('cairn.tool.status', outcome.status);
    if (outcome.http_status !== undefined) span.setAttribute('http.response.status_code', outcome.http_status);
    if (outcome.status !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.status });
    return outcome;
  });
}
