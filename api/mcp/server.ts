import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import type { Agents } from '../../core/agents/agents.js';
import { toView, type Schemas } from '../../core/schemas.js';
import { AppError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { toAppError } from '../middleware/errors.js';
import { cairnTools, readable, type CairnTool, type ToolServices } from './tools.js';

/** What the MCP server is handed: the tools' services, and those its resources read. */
export interface McpServices extends ToolServices {
  agents: Agents;
  schemas: Schemas;
}

/** MCP's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
/**
 * The longest resource URI read. Names are at most 64 characters, so this leaves room for any
 * real one percent-encoded; a longer URI is refused before it is matched, decoded, looked up or
 * quoted back in an answer.
 */
const MAX_RESOURCE_URI = 4096;
/** How many of each kind of resource a listing names (the first, newest first). */
const RESOURCES_LISTED = 100;

const INSTRUCTIONS =
  "Cairn: long-term memory, knowledge and agents of one project. Remember facts about a user with add_memory and recall them with search_memories (always name the user_id); search_knowledge retrieves cited passages from uploaded documents; store_record and extract_record keep typed records; query_index searches vector indexes; chat_agent talks to one of the project's agents. The cairn:// resources describe the project's agents, knowledge bases and record schemas.";

/** One kind of resource: where it lives under cairn://, how to list and read it. */
interface ResourceKind {
  kind: string;
  what: string;
  list(projectId: string): Promise<Array<{ name: string; description?: string }>>;
  read(projectId: string, name: string): Promise<unknown>;
}

/**
 * Builds the MCP side of `/mcp` once per app: the tools (their schemas compiled once), and a
 * function making the protocol server of one request, bound to the caller's project. The
 * low-level `Server` is the SDK's way to serve tools described by JSON Schema, as Cairn's are
 * (its `McpServer` takes Zod shapes).
 */
export function mcpServerFactory(services: McpServices, version: string): (projectId: string, log: Logger) => Server {
  const tools = cairnTools(services);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const kinds: ResourceKind[] = [
    {
      kind: 'agents',
      what: 'agent',
      list: async (projectId) => (await services.agents.list(projectId, RESOURCES_LISTED, 0)).map((a) => ({ name: a.name, description: a.instructions })),
      read: (projectId, name) => services.agents.get(projectId, name),
    },
    {
      kind: 'knowledge',
      what: 'knowledge base',
      list: async (projectId) => (await services.knowledge.list(projectId, RESOURCES_LISTED, 0)).map((b) => ({ name: b.name, description: b.instructions })),
      read: (projectId, name) => services.knowledge.get(projectId, name),
    },
    {
      kind: 'schemas',
      what: 'record schema',
      list: async (projectId) => (await services.schemas.list(projectId, RESOURCES_LISTED, 0)).map((v) => ({ name: v.name, description: v.description ?? undefined })),
      read: async (projectId, name) => toView(await services.schemas.get(projectId, name)),
    },
  ];

  return (projectId, log) => {
    const server = new Server({ name: 'cairn', title: 'Cairn', version }, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema: inputSchema as { type: 'object' }, annotations })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const found = byName.get(request.params.name);
      if (!found) return failure(new AppError(404, 'not_found', `No tool named "${request.params.name}"; the tools are ${tools.map((t) => t.name).join(', ')}.`));
      return callTool(found, projectId, request.params.arguments, log);
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => {
      const listed = await Promise.all(
        kinds.map(async (k) =>
          (await k.list(projectId)).map(
            (item): Resource => ({
              uri: `cairn://${k.kind}/${encodeURIComponent(item.name)}`,
              name: item.name,
              title: `${k.what}: ${item.name}`,
              mimeType: 'application/json',
              ...(item.description ? { description: item.description.slice(0, 500) } : {}),
            }),
          ),
        ),
      );
      return { resources: listed.flat() };
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: kinds.map((k) => ({ uriTemplate: `cairn://${k.kind}/{name}`, name: k.kind, title: `A ${k.what} of the project`, mimeType: 'application/json' })),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const { uri } = request.params;
      if (uri.length > MAX_RESOURCE_URI) {
        throw new McpError(ErrorCode.InvalidParams, `The resource URI is ${uri.length} characters long; Cairn's are at most ${MAX_RESOURCE_URI} characters (cairn://agents/{name}, cairn://knowledge/{name}, cairn://schemas/{name}).`);
      }
      const match = /^cairn:\/\/([a-z]+)\/([^/]+)$/.exec(uri);
      const kind = match ? kinds.find((k) => k.kind === match[1]) : undefined;
      if (!match || !kind) throw new McpError(RESOURCE_NOT_FOUND, `Unknown resource ${uri}: Cairn's are cairn://agents/{name}, cairn://knowledge/{name} and cairn://schemas/{name}.`);
      const name = decodedName(match[2] as string);
      if (name === null) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `The resource URI ${uri} holds percent-encoding that is not UTF-8 text (a "%" not followed by two hex digits, or bytes such as %ED%A0%80 that are no character); encode the name with encodeURIComponent.`,
        );
      }
      try {
        const value = readable(await kind.read(projectId, name));
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] };
      } catch (err) {
        const error = toAppError(err, 'MCP', 'resources/read');
        if (error.status === 404) throw new McpError(RESOURCE_NOT_FOUND, error.detail);
        if (error.status >= 500 && !(err instanceof AppError)) log.error({ err, uri }, 'MCP resource read failed');
        throw new McpError(-32603, error.detail);
      }
    });
    return server;
  };
}

/** The name a resource URI's last segment encodes, or null when its percent-encoding is not UTF-8 text. */
function decodedName(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Runs a tool: its result as JSON text (and as structured content), or a tool error
 * (`isError`) carrying Cairn's message, the field at fault for bad arguments. Errors Cairn did
 * not raise on purpose are logged and answered with the generic message the REST API gives.
 */
async function callTool(tool: CairnTool, projectId: string, args: unknown, log: Logger): Promise<CallToolResult> {
  try {
    const result = await tool.call(projectId, args);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (err) {
    const error = toAppError(err, 'MCP', `tools/call ${tool.name}`);
    if (error.status >= 500 && !(err instanceof AppError)) log.error({ err, tool: tool.name }, 'MCP tool failed');
    return failure(error);
  }
}

function failure(error: AppError): CallToolResult {
  const body = { detail: error.detail, code: error.code, ...(error.errors ? { errors: error.errors } : {}) };
  return { isError: true, content: [{ type: 'text', text: error.detail }], structuredContent: body };
}
