import type { Static, TSchema } from '@sinclair/typebox';
import type { ChatTurns } from '../../core/agents/turn.js';
import type { RecordExtraction } from '../../core/memory/record-extraction.js';
import type { MemoryInference } from '../../core/memory/inference.js';
import type { Indexes } from '../../core/indexes.js';
import type { Knowledge } from '../../core/knowledge/knowledge.js';
import { mem0Add } from '../mem0/add-body.js';
import type { Memories } from '../../core/memory/memories.js';
import type { Records } from '../../core/memory/records.js';
import { ENTITY_IDS, type EntityIds } from '../../core/memory/rows.js';
import type { MemorySearch } from '../../core/memory/search.js';
import { badRequest } from '../../lib/errors.js';
import { iso } from '../../lib/time.js';
import { ajv, assertValid, type JsonSchema } from '../../lib/validation.js';
import {
  ADD_MEMORY_TOOL,
  CHAT_AGENT_TOOL,
  EXTRACT_RECORD_TOOL,
  LIST_MEMORIES_TOOL,
  MEMORY_ID_TOOL,
  QUERY_INDEX_TOOL,
  SEARCH_KNOWLEDGE_TOOL,
  SEARCH_MEMORIES_TOOL,
  STORE_RECORD_TOOL,
  UPDATE_MEMORY_TOOL,
} from '../schemas/mcp.js';

/** The services the MCP tools call: the same ones the REST routes are handed. */
export interface ToolServices {
  memories: Memories;
  memorySearch: MemorySearch;
  extraction: RecordExtraction;
  inference: MemoryInference;
  memoryModel: string;
  records: Records;
  knowledge: Knowledge;
  indexes: Indexes;
  chat: ChatTurns;
}

/** MCP's tool annotations: hints a client shows or acts on (confirming a destructive call, say). */
interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A tool as `/mcp` lists and calls it; `call` validates its arguments first (400 naming the field). */
export interface CairnTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolHints & { title: string };
  call(projectId: string, args: unknown): Promise<Record<string, unknown>>;
}

interface ToolDefinition<S extends TSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  hints: ToolHints;
  run(projectId: string, args: Static<S>): Promise<Record<string, unknown>>;
}

function tool<S extends TSchema>(definition: ToolDefinition<S>): CairnTool {
  const validate = ajv.compile<Static<S>>(definition.input);
  const { name, title, description, input, hints, run } = definition;
  return {
    name,
    title,
    description,
    inputSchema: JSON.parse(JSON.stringify(input)) as JsonSchema,
    annotations: { title, ...hints },
    call: (projectId, args) => run(projectId, assertValid(validate, args ?? {}, '', 'arguments')),
  };
}

/** Timestamps as every response carries them (ISO 8601 UTC), at any depth: agents nest tools and rules. */
export function readable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(readable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, (key === 'created_at' || key === 'updated_at') && typeof v === 'number' ? iso(v) : readable(v)]),
  );
}

const shown = (value: unknown): Record<string, unknown> => readable(value) as Record<string, unknown>;

/** The entity ids given at the top level of a tool's arguments. */
function ownerOf(args: EntityIds): EntityIds {
  return Object.fromEntries(ENTITY_IDS.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
}

/** A memory filter: the top-level entity ids and `filters`, joined with AND. */
function memoryFilter(args: EntityIds & { filters?: Record<string, unknown> }): unknown {
  const conditions: unknown[] = Object.entries(ownerOf(args)).map(([k, v]) => ({ [k]: v }));
  if (args.filters !== undefined) conditions.push(args.filters);
  if (conditions.length === 0) {
    throw badRequest('validation_failed', 'Invalid arguments: /user_id is required (or agent_id, run_id, app_id, or filters naming one of them): memories always belong to someone.', [
      { path: '/user_id', message: 'is required (or agent_id, run_id, app_id)' },
    ]);
  }
  return conditions.length === 1 ? conditions[0] : { AND: conditions };
}

/** Refuses arguments that give both or neither of two alternative fields, naming them. */
function requireOneOf(args: Record<string, unknown>, first: string, second: string): void {
  if ((args[first] === undefined) === (args[second] === undefined)) {
    throw badRequest('validation_failed', `Invalid arguments: give either /${first} or /${second} (one of them, not both).`, [
      { path: `/${first}`, message: `or /${second} is required, not both` },
    ]);
  }
}

type Message = { role: 'user' | 'assistant' | 'system'; content: string };

/** The messages of a tool given either a text (one user message, in `textField`) or `messages`. */
function messagesOf(args: { messages?: Message[] } & Record<string, unknown>, textField = 'text'): Message[] {
  requireOneOf(args, textField, 'messages');
  return args.messages ?? [{ role: 'user', content: args[textField] as string }];
}

/** Hints of a tool that only reads the project's data. */
const READS: ToolHints = { readOnlyHint: true, openWorldHint: false };
/** Hints of a tool that adds to the project's data. */
const WRITES: ToolHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** Cairn's MCP tools, each calling the service its REST endpoint calls, scoped to the caller's project. */
export function cairnTools(s: ToolServices): CairnTool[] {
  return [
    tool({
      name: 'add_memory',
      title: 'Add memory',
      description:
        'Remember something about a user (or an agent, run or app) for later. Give text (what the user said) or messages (a conversation), and at least one of user_id, agent_id, run_id, app_id. By default (infer true) the facts stated are picked out and merged with what is already remembered: each result says ADD, UPDATE (previous_memory holds the old text), DELETE or NOOP. infer false stores each message as given. New memories become searchable within seconds, once indexed.',
      input: ADD_MEMORY_TOOL,
      hints: WRITES,
      async run(projectId, args) {
        const body = { messages: messagesOf(args), ...ownerOf(args), metadata: args.metadata, infer: args.infer };
        const added = await s.inference.addMemories(projectId, mem0Add(body), s.memoryModel);
        return { results: added.map(shown) };
      },
    }),
    tool({
      name: 'search_memories',
      title: 'Search memories',
      description:
        "Find what is remembered about someone that is relevant to a query (semantic and keyword search, best first, each with a score). Name whose memories with user_id, agent_id, run_id or app_id (or filters naming one); filters may add conditions on schema, categories, created_at and metadata. Covers free-form memories and typed records.",
      input: SEARCH_MEMORIES_TOOL,
      hints: READS,
      async run(projectId, args) {
        const { query, top_k, threshold, mode } = args;
        const results = await s.memorySearch.search(projectId, { query, filters: memoryFilter(args), top_k, threshold, mode });
        return { results: results.map(shown) };
      },
    }),
    tool({
      name: 'list_memories',
      title: 'List memories',
      description:
        'List the memories of a user (or agent, run, app), newest first, a page at a time: count is the total, results the page. Name whose with user_id, agent_id, run_id or app_id (or filters naming one).',
      input: LIST_MEMORIES_TOOL,
      hints: READS,
      async run(projectId, args) {
        const { count, results } = await s.memories.list(projectId, memoryFilter(args), args.page ?? 1, args.page_size ?? 50);
        return { count, page: args.page ?? 1, page_size: args.page_size ?? 50, results: results.map(shown) };
      },
    }),
    tool({
      name: 'get_memory',
      title: 'Get memory',
      description: 'Get one memory by its id: its text, owner ids, metadata, categories and times.',
      input: MEMORY_ID_TOOL,
      hints: READS,
      run: async (projectId, args) => shown(await s.memories.get(projectId, args.memory_id)),
    }),
    tool({
      name: 'update_memory',
      title: 'Update memory',
      description:
        "Change a memory's text, metadata and/or expiration_date (YYYY-MM-DD, null for never) by its id; the change is kept in its history and the memory is indexed again. A typed record's values change through store_record instead.",
      input: UPDATE_MEMORY_TOOL,
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (projectId, { memory_id, ...change }) => shown(await s.memories.update(projectId, memory_id, change)),
    }),
    tool({
      name: 'delete_memory',
      title: 'Delete memory',
      description: 'Forget one memory by its id (a typed record included); it is gone from search and lists at once.',
      input: MEMORY_ID_TOOL,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run(projectId, args) {
        await s.memories.delete(projectId, args.memory_id);
        return { deleted: true, memory_id: args.memory_id };
      },
    }),
    tool({
      name: 'search_knowledge',
      title: 'Search knowledge',
      description:
        "Retrieve passages from the project's knowledge bases (uploaded documents) that answer a query, best first, each with its text, score, document and filename to cite. mode hybrid (default) fuses semantic and keyword search; filter narrows by document_id, filename, source_type or metadata.<key>.",
      input: SEARCH_KNOWLEDGE_TOOL,
      hints: READS,
      run: async (projectId, { knowledge_bases, ...input }) => ({ results: await s.knowledge.search(projectId, knowledge_bases, input) }),
    }),
    tool({
      name: 'store_record',
      title: 'Store typed record',
      description:
        "Store a typed record: values (record) validated against a registered schema, for a user (or agent, run, app). An invalid record is refused with the field at fault. The record is also a memory, found by search_memories once indexed.",
      input: STORE_RECORD_TOOL,
      hints: WRITES,
      run: async (projectId, { schema, ...input }) => shown(await s.records.store(projectId, schema, input)),
    }),
    tool({
      name: 'extract_record',
      title: 'Extract typed record',
      description:
        "Fill a registered schema's fields from text or a conversation with a language model (only values stated explicitly). When the values satisfy the schema the record is stored: stored true and the record. Otherwise stored false, record holds the values found (null if none) and missing the required fields not stated, so you can ask for them.",
      input: EXTRACT_RECORD_TOOL,
      hints: WRITES,
      async run(projectId, { schema, ...input }) {
        requireOneOf(input, 'text', 'messages');
        const outcome = await s.extraction.request(projectId, schema, input);
        return outcome.stored ? { stored: true, record: shown(outcome.record) } : { ...outcome };
      },
    }),
    tool({
      name: 'query_index',
      title: 'Query vector index',
      description:
        'Find the nearest items of a vector index, best first: by text (for an index that embeds text), by vector, or by the id of a stored item; filter narrows by metadata. include_metadata returns what was stored with each match.',
      input: QUERY_INDEX_TOOL,
      hints: READS,
      run: async (projectId, { index, ...input }) => ({ matches: await s.indexes.query(projectId, index, input) }),
    }),
    tool({
      name: 'chat_agent',
      title: 'Chat with agent',
      description:
        "Have one turn with a named Cairn agent: it applies its rules and guardrails, retrieves from its knowledge, may call its tools, and answers. Give message (the user's text) or messages; pass the conversation_id of the answer back to continue the same conversation. The answer is message.content, with citations and a trace.",
      input: CHAT_AGENT_TOOL,
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      async run(projectId, { agent, message, messages, ...input }) {
        const turn = await s.chat.open(projectId, agent, { ...input, messages: messagesOf({ message, messages }, 'message') });
        return shown(await turn.run());
      },
    }),
  ];
}
