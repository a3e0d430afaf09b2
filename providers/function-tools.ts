import type { ToolSpec } from './language-model.js';

// Tools in the function format both remote chat APIs use (OpenAI's, which Cohere v2 shares):
// the tools offered, and the arguments a call comes back with.

/** The tools offered, as `{type: 'function', function: {name, description, parameters}}`. */
export function functionTools(tools: readonly ToolSpec[]): Array<{ type: 'function'; function: { name: string; description: string; parameters: ToolSpec['parameters'] } }> {
  return tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** A tool call's arguments as a provider sent them (a JSON string): the object, or `{}` when it is not one. */
export function parseArguments(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
