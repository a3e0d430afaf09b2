import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { pino } from 'pino';
import { PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';
import { MCP_TOOLS, mcpProject, serveMcp, type McpProject } from '../mcp-fixtures.js';

// The official MCP TypeScript SDK's client against Cairn's /mcp (Streamable HTTP), with real services.

const MISSING_ID = '0190f5e2-0000-7000-8000-000000000000';

type Json = Record<string, unknown>;

describe(`MCP server at /mcp (${PROFILE})`, function () {
  this.timeout(90_000);
  let t: TestRuntime;
  let served: { url: string; close(): Promise<void> };
  let a: McpProject;
  let b: McpProject;
  let client: Client;
  let other: Client;
  const opened: Client[] = [];

  async function connect(authorization: string): Promise<Client> {
    const c = new Client({ name: 'cairn-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { Authorization: authorization } } }));
    opened.push(c);
    return c;
  }

  /** A tool call that must succeed: its structured result, checked against its JSON text. */
  async function ok(c: Client, name: string, args: Json): Promise<Json> {
    const result = (await c.callTool({ name, arguments: args })) as CallToolResult;
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError, `${name}: ${text}`).to.not.equal(true);
    expect(JSON.parse(text)).to.deep.equal(result.structuredContent);
    return result.structuredContent as Json;
  }

  /** A tool call that must fail: the message it carries. */
  async function refused(c: Client, name: string, args: Json): Promise<string> {
    const result = (await c.callTool({ name, arguments: args })) as CallToolResult;
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError, `${name} should fail: ${text}`).to.equal(true);
    expect(text).to.not.match(/\n\s+at /);
    return text;
  }

  // what the server logged at warn and above, one JSON line each
  const logged: string[] = [];

  before(async () => {
    t = await startRuntime({ logger: pino({ level: 'warn' }, { write: (line: string) => logged.push(line) }) });
    served = await serveMcp(t);
    a = await mcpProject(t);
    b = await mcpProject(t);
    client = await connect(token(a.key));
    other = await connect(`Bearer ${b.key}`);
  });
  after(async () => {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
    await served?.close();
    await t?.close();
  });

  it('lists every tool with a description and a JSON Schema of its arguments', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).to.have.members(MCP_TOOLS);
    for (const tool of tools) {
      expect(tool.description, tool.name).to.have.length.greaterThan(40);
      expect(tool.inputSchema.type, tool.name).to.equal('object');
      expect((tool.inputSchema as Json).additionalProperties, tool.name).to.equal(false);
    }
    const add = tools.find((tool) => tool.name === 'add_memory');
    expect(Object.keys(add?.inputSchema.properties ?? {})).to.include.members(['text', 'messages', 'user_id', 'metadata', 'infer']);
    expect(tools.find((tool) => tool.name === 'delete_memory')?.annotations).to.include({ destructiveHint: true });
    expect(tools.find((tool) => tool.name === 'search_memories')?.inputSchema.required).to.deep.equal(['query']);
    expect(client.getServerVersion()).to.include({ name: 'cairn' });
  });

  it('memories: add, found by search once indexed, listed, read, updated and deleted', async () => {
    const user = unique('mcp-user');
    const added = await ok(client, 'add_memory', { text: 'I drink green tea every morning.', user_id: user, metadata: { source: 'mcp' }, infer: false });
    const tea = (added.results as Json[])[0] as Json;
    expect(tea).to.include({ memory: 'I drink green tea every morning.', user_id: user, event: 'ADD' });
    await ok(client, 'add_memory', { messages: [{ role: 'user', content: 'My sister lives in Lisbon.' }], user_id: user, infer: false });
    const found = await waitFor(
      async () => {
        const res = await ok(client, 'search_memories', { query: 'what does the user drink in the morning?', user_id: user });
        return (res.results as Json[]).length === 2 && (res.results as Json[]);
      },
      { timeoutMs: 60_000, message: 'both memories searchable' },
    );
    expect(found[0]).to.include({ id: tea.id });
    expect(found[0]?.score).to.be.a('number');
    const top = await ok(client, 'search_memories', { query: 'sister', filters: { user_id: user }, top_k: 1, mode: 'keyword' });
    expect((top.results as Json[]).map((m) => m.memory)).to.deep.equal(['My sister lives in Lisbon.']);

    const listed = await ok(client, 'list_memories', { user_id: user, page_size: 1 });
    expect(listed).to.include({ count: 2, page: 1, page_size: 1 });
    expect(listed.results).to.have.length(1);

    const got = await ok(client, 'get_memory', { memory_id: tea.id as string });
    expect(got).to.include({ id: tea.id, memory: 'I drink green tea every morning.' });
    expect(got.metadata).to.deep.equal({ source: 'mcp' });
    expect(got.created_at).to.match(/Z$/);

    const updated = await ok(client, 'update_memory', { memory_id: tea.id as string, text: 'I drink oolong tea every morning.' });
    expect(updated).to.include({ id: tea.id, memory: 'I drink oolong tea every morning.' });

    expect(await ok(client, 'delete_memory', { memory_id: tea.id as string })).to.deep.equal({ deleted: true, memory_id: tea.id });
    expect(await refused(client, 'get_memory', { memory_id: tea.id as string })).to.match(/not found|no memory/i);
    expect((await ok(client, 'list_memories', { user_id: user })).count).to.equal(1);
  });

  it('add_memory with infer picks out the facts the user stated', async () => {
    const user = unique('mcp-infer');
    const added = await ok(client, 'add_memory', { text: 'I restore old sailboats.', user_id: user });
    expect((added.results as Json[]).map((m) => [m.event, m.memory])).to.deep.equal([['ADD', 'I restore old sailboats']]);
  });

  it('search_knowledge retrieves the passage of an uploaded document that answers', async () => {
    const res = await ok(client, 'search_knowledge', { knowledge_bases: [a.kb], query: 'who gives out food for the goats?', top_k: 2 });
    const results = res.results as Json[];
    expect(results[0]?.text).to.match(/Marta/);
    expect(results[0]).to.include({ filename: 'handbook.md', knowledge_base: a.kb });
  });

  it('store_record validates against the schema; extract_record fills it from text', async () => {
    const user = unique('mcp-rec');
    const stored = await ok(client, 'store_record', { schema: a.schema, record: { name: 'Ana Lopez', email: 'ana@example.com' }, user_id: user });
    expect(stored).to.include({ schema: a.schema, schema_version: 1, user_id: user });
    expect(stored.record).to.deep.equal({ name: 'Ana Lopez', email: 'ana@example.com' });
    const invalid = await refused(client, 'store_record', { schema: a.schema, record: { name: 'Ana Lopez' }, user_id: user });
    expect(invalid).to.match(/\/email/);

    const extracted = await ok(client, 'extract_record', { schema: a.schema, text: "Hi, I'm Jane Doe. Reach me at jane@acme.com.", user_id: user });
    expect(extracted.stored).to.equal(true);
    expect((extracted.record as Json).record).to.deep.equal({ name: 'Jane Doe', email: 'jane@acme.com' });
    const partial = await ok(client, 'extract_record', { schema: a.schema, messages: [{ role: 'user', content: 'Write to me at bo@acme.com.' }], user_id: user });
    expect(partial).to.deep.equal({ stored: false, record: { email: 'bo@acme.com' }, missing: ['name'] });
  });

  it('query_index finds the nearest items by text', async () => {
    const res = await ok(client, 'query_index', { index: a.index, text: 'a kitten by the window', top_k: 2, include_metadata: true });
    const matches = res.matches as Json[];
    expect(matches).to.have.length(2);
    expect(matches[0]).to.include({ id: 'kitten' });
    expect(matches[0]?.metadata).to.deep.include({ topic: 'kitten' });
  });

  it('chat_agent has one turn with a local-model agent, answering from its knowledge and continuing its conversation', async () => {
    const first = await ok(client, 'chat_agent', { agent: a.agent, message: 'Who do I ask before feeding the goats?', user_id: 'visitor-1' });
    expect((first.message as Json).content).to.match(/Marta/);
    expect(first.run_id).to.be.a('string');
    expect((first.citations as Json[])[0]).to.include({ filename: 'handbook.md' });
    const second = await ok(client, 'chat_agent', { agent: a.agent, messages: [{ role: 'user', content: 'When does the greenhouse open?' }], conversation_id: first.conversation_id as string });
    expect(second.conversation_id).to.equal(first.conversation_id);
    expect((second.message as Json).content).to.match(/seven/);
  });

  it('reads the project’s agents, knowledge bases and record schemas as cairn:// resources', async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).to.include.members([`cairn://agents/${a.agent}`, `cairn://knowledge/${a.kb}`, `cairn://schemas/${a.schema}`]);
    expect(uris).to.not.include(`cairn://agents/${b.agent}`);
    const agent = await client.readResource({ uri: `cairn://agents/${a.agent}` });
    expect(JSON.parse((agent.contents[0] as { text: string }).text)).to.include({ name: a.agent, model: 'local' });
    const schema = JSON.parse(((await client.readResource({ uri: `cairn://schemas/${a.schema}` })).contents[0] as { text: string }).text);
    expect(schema.json_schema.required).to.deep.equal(['name', 'email']);
    let missing: unknown;
    await other.readResource({ uri: `cairn://agents/${a.agent}` }).catch((err: unknown) => (missing = err));
    expect(String(missing)).to.match(/not found|no agent/i);
  });

  it('a resource URI that is not UTF-8 text or is too long is invalid params (-32602), said plainly and logged without a stack', async () => {
    const before = logged.length;
    const read = async (uri: string) => {
      const res = await t.http
        .post('/mcp')
        .set('Authorization', token(a.key))
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri } });
      expect(res.status, uri.slice(0, 80)).to.equal(200);
      return res.body.error as { code: number; message: string };
    };
    for (const uri of ['cairn://agents/%E0%A4%A', 'cairn://agents/%ED%A0%80', 'cairn://schemas/%FF', 'cairn://knowledge/100%']) {
      const error = await read(uri);
      expect(error.code, uri).to.equal(-32602);
      expect(error.message, uri).to.match(/percent-encoding .* not UTF-8/);
    }
    const long = await read(`cairn://agents/${'a'.repeat(5 * 1024 * 1024)}`);
    expect(long.code).to.equal(-32602);
    expect(long.message).to.match(/at most 4096 characters/);
    expect(long.message.length).to.be.below(500);
    let refused: unknown;
    await client.readResource({ uri: 'cairn://agents/%E0%A4%A' }).catch((err: unknown) => (refused = err));
    expect((refused as { code?: number }).code).to.equal(-32602);
    expect(logged.slice(before).join('\n')).to.not.match(/URIError|call stack|"stack"/);
    // the encoded name of an agent that exists still reads
    const agent = await client.readResource({ uri: `cairn://agents/${encodeURIComponent(a.agent)}` });
    expect(JSON.parse((agent.contents[0] as { text: string }).text)).to.include({ name: a.agent });
  });

  it('refuses a missing or wrong key with a 401 before any MCP processing: the client cannot connect', async () => {
    for (const authorization of [token('cairn_not_a_real_key'), '']) {
      let failed: unknown;
      await connect(authorization).catch((err: unknown) => (failed = err));
      expect((failed as { code?: number }).code, String(failed)).to.equal(401);
    }
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const res = await t.http.post('/mcp').set('Accept', 'application/json, text/event-stream').send(body);
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ code: 'missing_credentials' });
    expect(res.body.detail).to.match(/Authorization: Token <API_KEY>/);
    const wrong = await t.http.post('/mcp').set('Authorization', 'Bearer cairn_not_a_real_key').set('Accept', 'application/json, text/event-stream').send(body);
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.deep.equal({ detail: 'Invalid API key.', code: 'invalid_api_key' });
  });

  it("another project's ids are not found, by every tool that takes one", async () => {
    const user = unique('mcp-tenant');
    const [memory] = (await ok(client, 'add_memory', { text: 'My PIN is in the blue notebook.', user_id: user, infer: false })).results as Json[];
    const id = memory?.id as string;
    for (const [name, args] of [
      ['get_memory', { memory_id: id }],
      ['update_memory', { memory_id: id, text: 'changed' }],
      ['delete_memory', { memory_id: id }],
      ['get_memory', { memory_id: MISSING_ID }],
      ['search_knowledge', { knowledge_bases: [a.kb], query: 'goats' }],
      ['store_record', { schema: a.schema, record: { name: 'X', email: 'x@example.com' }, user_id: user }],
      ['extract_record', { schema: a.schema, text: 'I am X.', user_id: user }],
      ['query_index', { index: a.index, text: 'kitten' }],
      ['chat_agent', { agent: a.agent, message: 'hello' }],
    ] as const) {
      expect(await refused(other, name, args), name).to.match(/^(There is no|No) .* in this project\.$/);
    }
    expect((await ok(other, 'list_memories', { user_id: user })).count).to.equal(0);
    expect((await ok(other, 'search_memories', { query: 'PIN notebook', user_id: user })).results).to.deep.equal([]);
    expect(await ok(client, 'get_memory', { memory_id: id })).to.include({ memory: 'My PIN is in the blue notebook.' });
  });

  it('bad arguments are a tool error naming the field', async () => {
    const cases: Array<[string, Json, RegExp]> = [
      ['add_memory', { text: 'hello', user_id: 5 }, /\/user_id/],
      ['add_memory', { text: 'hello', user_id: 'u', colour: 'blue' }, /\/colour/],
      ['add_memory', { user_id: 'u' }, /\/text/],
      ['add_memory', { text: 'hello' }, /user_id/],
      ['search_memories', { user_id: 'u' }, /\/query/],
      ['search_memories', { query: 'tea' }, /\/user_id/],
      ['search_memories', { query: 'tea', user_id: 'u', top_k: 0 }, /\/top_k/],
      ['update_memory', { memory_id: MISSING_ID }, /memory_id|fewer than 2|properties/],
      ['search_knowledge', { query: 'goats' }, /\/knowledge_bases/],
      ['query_index', { index: a.index, text: 'x', vector: [1, 2] }, /vector|text|one of/],
      ['chat_agent', { agent: a.agent }, /\/message/],
      ['extract_record', { schema: a.schema, text: 'a', messages: [{ role: 'user', content: 'b' }] }, /\/text/],
    ];
    for (const [name, args, field] of cases) {
      expect(await refused(client, name, args), `${name} ${JSON.stringify(args)}`).to.match(field);
    }
    expect(await refused(client, 'no_such_tool', {})).to.match(/no tool named/i);
  });

  it('is stateless: GET and DELETE answer 405, and a body over the limit is refused', async () => {
    for (const method of ['get', 'delete'] as const) {
      const res = await t.http[method]('/mcp').set('Authorization', token(a.key));
      expect(res.status, method).to.equal(405);
      expect(res.headers.allow).to.equal('POST');
      expect(res.body.error.code).to.equal(-32000);
    }
    const huge = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add_memory', arguments: { text: 'x'.repeat(t.runtime.config.bodyLimitBytes), user_id: 'u' } } };
    const res = await t.http.post('/mcp').set('Authorization', token(a.key)).set('Accept', 'application/json, text/event-stream').send(huge);
    expect(res.status).to.equal(413);
    expect(res.body.code).to.equal('payload_too_large');
    // the trailing slash is the same endpoint, as everywhere in Cairn
    const listed = await t.http
      .post('/mcp/')
      .set('Authorization', token(a.key))
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(listed.status).to.equal(200);
    expect(listed.body.result.serverInfo.name).to.equal('cairn');
    // one route label for the endpoint in the request metrics
    expect((await t.http.get('/metrics')).text).to.match(/cairn_http_request_duration_seconds_count\{method="POST",route="\/mcp",status="200"\} \d+/);
  });
});
