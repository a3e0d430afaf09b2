import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { newProject, token, unique, waitFor, type TestRuntime } from './helpers.js';

/** A project with one of everything the MCP tools reach: a record schema, a knowledge base with a ready document, an index that embeds text, an agent on the local model. */
export interface McpProject {
  key: string;
  projectId: string;
  schema: string;
  kb: string;
  index: string;
  agent: string;
}

/** The tools /mcp lists. */
export const MCP_TOOLS = [
  'add_memory',
  'search_memories',
  'list_memories',
  'get_memory',
  'update_memory',
  'delete_memory',
  'search_knowledge',
  'store_record',
  'extract_record',
  'query_index',
  'chat_agent',
];

/** The document the knowledge base holds: search_knowledge must find its second paragraph. */
export const GUIDE = [
  '# Station handbook',
  'The greenhouse opens at seven in the morning and closes at dusk.',
  'Visitors who want to feed the goats must ask the keeper, Marta, for a bucket of pellets first.',
  'The library keeps its maps of the valley in the third drawer.',
].join('\n\n');

/** The sentences the index holds, by id. */
export const SENTENCES: Record<string, string> = {
  kitten: 'A small cat sleeps on the warm windowsill.',
  revenue: 'Quarterly revenue grew by twelve percent.',
  hiking: 'We walked up the mountain trail before sunrise.',
};

/** Sets up an `McpProject` through the REST API, waiting for the document to be ready. */
export async function mcpProject(t: TestRuntime): Promise<McpProject> {
  const { key, projectId } = await newProject(t);
  const post = async (path: string, body: object, status = 201) => {
    const res = await t.http.post(path).set('Authorization', token(key)).send(body);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body as Record<string, unknown>;
  };
  const schema = unique('contact').toLowerCase();
  await post('/v1/schemas', {
    name: schema,
    json_schema: {
      type: 'object',
      required: ['name', 'email'],
      additionalProperties: false,
      properties: { name: { type: 'string', description: 'full name' }, email: { type: 'string', description: 'email address' } },
    },
  });
  const kb = unique('handbook');
  await post('/v1/knowledge', { name: kb });
  const doc = await post(`/v1/knowledge/${kb}/documents`, { filename: 'handbook.md', content: GUIDE, source_type: 'markdown' }, 202);
  await waitFor(
    async () => {
      const res = await t.http.get(`/v1/knowledge/${kb}/documents/${doc.id as string}`).set('Authorization', token(key));
      if (res.body.status === 'failed') throw new Error(`the document failed: ${res.body.error}`);
      return res.body.status === 'ready';
    },
    { timeoutMs: 60_000, message: 'the handbook is ready' },
  );
  const index = unique('notes');
  await post('/v1/indexes', { name: index, embed: { model: 'local' } });
  await post(`/v1/indexes/${index}/records/upsert`, { records: Object.entries(SENTENCES).map(([id, text]) => ({ _id: id, text, topic: id })) }, 200);
  const agent = unique('guide');
  await post('/v1/agents', { name: agent, model: 'local', instructions: 'Answer from the station handbook.', knowledge: [kb] });
  return { key, projectId, schema, kb, index, agent };
}

/** Serves the test runtime's app on a local port: its `/mcp` URL, and `close()`. */
export async function serveMcp(t: TestRuntime): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
