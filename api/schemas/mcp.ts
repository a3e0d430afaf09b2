import { Type } from '@sinclair/typebox';
import { CHAT } from './agents.js';
import { AnyObject } from './common.js';
import { QUERY_INDEX } from './indexes.js';
import { KNOWLEDGE_NAME, SEARCH_KNOWLEDGE } from './knowledge.js';
import { UPDATE_MEMORY } from './mem0.js';
import { ENTITY_PROPS, EXTRACT_RECORD, MESSAGES, SEARCH_MEMORIES, STORE_RECORD } from './records.js';

/*
 * The input schemas of the MCP tools (`/mcp`). Each reuses the fields of the REST body it stands
 * for, so a tool accepts what its endpoint accepts; the rest is what a model finds easier to fill
 * (a plain `text` beside `messages`, entity ids at the top level beside `filters`). The tools'
 * names take the place of path parameters (`schema`, `index`, `agent`, `memory_id`).
 */

const OWNER_NOTE = 'Whose memories: give at least one of user_id, agent_id, run_id, app_id.';
const ID = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });
const MEMORY_ID = ID('The id of a memory (as add_memory, search_memories or list_memories return it).');
const TEXT = (description: string) => Type.String({ minLength: 1, maxLength: 32_768, description });
const OWNER = {
  user_id: Type.Optional(ID('The user the memories belong to.')),
  agent_id: Type.Optional(ID('The agent the memories belong to.')),
  run_id: Type.Optional(ID('The run (session) the memories belong to.')),
  app_id: Type.Optional(ID('The application the memories belong to.')),
} satisfies typeof ENTITY_PROPS;
const FILTERS = AnyObject({
  description:
    'Extra conditions in the filter language of search: {"AND": [...]}, {"OR": [...]}, {"NOT": {...}}, fields user_id, agent_id, run_id, app_id, schema, categories, created_at, metadata.<key>; operators eq, ne, in, gt, gte, lt, lte, contains. Joined with AND to the ids given at the top level.',
});

export const ADD_MEMORY_TOOL = Type.Object(
  {
    text: Type.Optional(TEXT('What to remember, as the user said it (one user message). Give text or messages.')),
    messages: Type.Optional({ ...MESSAGES, description: 'A conversation to remember from. Give text or messages.' }),
    ...OWNER,
    metadata: Type.Optional(AnyObject({ description: 'Your own fields, kept with each memory and filterable as metadata.<key>.' })),
    infer: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'true (default): the facts are picked out of the messages and merged with what is already remembered; false: each message is stored as given.',
      }),
    ),
  },
  { additionalProperties: false, description: OWNER_NOTE },
);

export const SEARCH_MEMORIES_TOOL = Type.Object(
  {
    query: SEARCH_MEMORIES.properties.query,
    ...OWNER,
    filters: Type.Optional(FILTERS),
    top_k: SEARCH_MEMORIES.properties.top_k,
    threshold: SEARCH_MEMORIES.properties.threshold,
    mode: SEARCH_MEMORIES.properties.mode,
  },
  { additionalProperties: false },
);

export const LIST_MEMORIES_TOOL = Type.Object(
  {
    ...OWNER,
    filters: Type.Optional(FILTERS),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const MEMORY_ID_TOOL = Type.Object({ memory_id: MEMORY_ID }, { additionalProperties: false });

export const UPDATE_MEMORY_TOOL = Type.Object(
  {
    memory_id: MEMORY_ID,
    text: Type.Optional({ ...UPDATE_MEMORY.properties.text, description: 'The new text of the memory.' }),
    metadata: Type.Optional(AnyObject({ description: "Replaces the memory's metadata." })),
    expiration_date: UPDATE_MEMORY.properties.expiration_date,
  },
  { additionalProperties: false, minProperties: 2 },
);

export const SEARCH_KNOWLEDGE_TOOL = Type.Object(
  {
    knowledge_bases: Type.Array(Type.String({ pattern: KNOWLEDGE_NAME }), {
      minItems: 1,
      maxItems: 20,
      description: 'The names of the knowledge bases to search (the cairn://knowledge resources list them).',
    }),
    ...SEARCH_KNOWLEDGE.properties,
  },
  { additionalProperties: false },
);

const SCHEMA_NAME = Type.String({ minLength: 1, maxLength: 64, description: 'The name of a registered record schema (the cairn://schemas resources list them).' });

export const STORE_RECORD_TOOL = Type.Object(
  {
    schema: SCHEMA_NAME,
    record: AnyObject({ description: "The record's values, which must satisfy the schema." }),
    ...OWNER,
    metadata: STORE_RECORD.properties.metadata,
  },
  { additionalProperties: false },
);

export const EXTRACT_RECORD_TOOL = Type.Object(
  {
    schema: SCHEMA_NAME,
    text: Type.Optional({ ...EXTRACT_RECORD.properties.text, description: 'The text to extract from. Give text or messages.' }),
    messages: Type.Optional({ ...MESSAGES, description: 'A conversation to extract from. Give text or messages.' }),
    ...OWNER,
    metadata: EXTRACT_RECORD.properties.metadata,
    model: EXTRACT_RECORD.properties.model,
  },
  { additionalProperties: false },
);

export const QUERY_INDEX_TOOL = Type.Object(
  {
    index: Type.String({ minLength: 1, maxLength: 64, description: 'The name of a vector index.' }),
    ...QUERY_INDEX.properties,
  },
  { additionalProperties: false, description: 'Give exactly one of vector, text (indexes that embed text) or id.' },
);

export const CHAT_AGENT_TOOL = Type.Object(
  {
    agent: Type.String({ minLength: 1, maxLength: 64, description: 'The name of the agent (the cairn://agents resources list them).' }),
    message: Type.Optional(TEXT("The user's message. Give message or messages.")),
    messages: Type.Optional({ ...CHAT.properties.messages, description: 'The turn\u2019s messages, the last user message being what the agent answers. Give message or messages.' }),
    conversation_id: CHAT.properties.conversation_id,
    user_id: CHAT.properties.user_id,
    metadata: CHAT.properties.metadata,
  },
  { additionalProperties: false },
);

