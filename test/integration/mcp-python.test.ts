import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROFILE, repoRoot, startRuntime, unique, type TestRuntime } from '../helpers.js';
import { MCP_TOOLS, mcpProject, serveMcp, type McpProject } from '../mcp-fixtures.js';

// The official MCP Python SDK (PyPI mcp, installed by scripts/mcp-python.sh) against a real Cairn:
// test/mcp_client.py calls every tool through streamablehttp_client + ClientSession and prints
// each result as a JSON line.

const DRIVER = path.join(repoRoot, 'test/mcp_client.py');
/** How long the whole driver may run (it waits for memories to be indexed; nothing else is slow). */
const DRIVER_TIMEOUT_MS = 120_000;

type Json = Record<string, unknown>;
interface Step {
  step: string;
  is_error: boolean;
  result: unknown;
}

/** Runs the driver against `url`: its steps by name (a step run twice keeps its last result). */
async function runDriver(python: string, env: Record<string, string>): Promise<Map<string, Step>> {
  const child = spawn(python, [DRIVER], { env: { PATH: process.env.PATH ?? '', NO_PROXY: '127.0.0.1,localhost', PYTHONUNBUFFERED: '1', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const timer = setTimeout(() => child.kill(), DRIVER_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  const lines = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Json);
  const fatal = lines.find((l) => l.fatal);
  expect(code, `the driver exited ${code}: ${String(fatal?.fatal ?? '')}\n${stderr}`).to.equal(0);
  expect(lines.at(-1), stderr).to.deep.equal({ done: true });
  return new Map(lines.filter((l) => typeof l.step === 'string').map((l) => [l.step as string, l as unknown as Step]));
}

describe(`MCP Python client (${PROFILE})`, function () {
  this.timeout(DRIVER_TIMEOUT_MS + 60_000);
  let t: TestRuntime;
  let served: { url: string; close(): Promise<void> };
  let a: McpProject;
  let steps: Map<string, Step>;
  const user = unique('py-mcp');

  before(async () => {
    const python = process.env.MCP_PYTHON;
    if (!python || !fs.existsSync(python)) {
      throw new Error(
        `MCP_PYTHON must name a python with the MCP Python SDK (got ${python === undefined ? 'nothing' : `"${python}"`}): run scripts/mcp-python.sh, which prints it on its last line.`,
      );
    }
    t = await startRuntime();
    served = await serveMcp(t);
    a = await mcpProject(t);
    const b = await mcpProject(t);
    steps = await runDriver(python, {
      CAIRN_MCP_URL: served.url,
      CAIRN_KEY: a.key,
      CAIRN_OTHER_KEY: b.key,
      CAIRN_SCHEMA: a.schema,
      CAIRN_KB: a.kb,
      CAIRN_INDEX: a.index,
      CAIRN_AGENT: a.agent,
      CAIRN_USER: user,
    });
  });
  after(async () => {
    await served?.close();
    await t?.close();
  });

  /** A step's result, which must not be an error. */
  const ok = (name: string): Json => {
    const step = steps.get(name);
    expect(step, `step ${name} ran`).to.not.equal(undefined);
    expect(step?.is_error, `${name}: ${JSON.stringify(step?.result)}`).to.equal(false);
    return step?.result as Json;
  };
  /** A step's error message, which must be a tool error. */
  const failed = (name: string): string => {
    const step = steps.get(name);
    expect(step?.is_error, `${name} should fail: ${JSON.stringify(step?.result)}`).to.equal(true);
    return ((step?.result as Json).detail as string | undefined) ?? String(step?.result);
  };

  it('initializes and lists every tool with its JSON Schema', () => {
    expect(ok('initialize')).to.include({ name: 'cairn' });
    const tools = ok('list_tools') as unknown as Array<{ name: string; description: string; inputSchema: Json }>;
    expect(tools.map((tool) => tool.name)).to.have.members(MCP_TOOLS);
    for (const tool of tools) expect(tool.inputSchema.type, tool.name).to.equal('object');
  });

  it('adds memories, finds them by search once indexed, lists, reads, updates and deletes them', () => {
    expect((ok('add_memory').results as Json[])[0]).to.include({ memory: 'I drink green tea every morning.', user_id: user, event: 'ADD' });
    expect((ok('add_memory_messages').results as Json[])[0]).to.include({ memory: 'My sister lives in Lisbon.' });
    const found = ok('search_memories').results as Json[];
    expect(found.map((m) => m.memory)).to.deep.equal(['I drink green tea every morning.', 'My sister lives in Lisbon.']);
    expect(ok('list_memories')).to.include({ count: 2 });
    expect(ok('get_memory')).to.include({ memory: 'I drink green tea every morning.', user_id: user });
    expect(ok('update_memory')).to.include({ memory: 'I drink oolong tea every morning.' });
    expect(ok('delete_memory')).to.include({ deleted: true });
    expect(failed('get_deleted')).to.match(/^There is no memory with id/);
  });

  it('searches knowledge, stores and extracts records, queries an index and chats with an agent', () => {
    expect(((ok('search_knowledge').results as Json[])[0] as Json).text).to.match(/Marta/);
    expect((ok('store_record').record as Json)).to.deep.equal({ name: 'Ana Lopez', email: 'ana@example.com' });
    const extracted = ok('extract_record');
    expect(extracted.stored).to.equal(true);
    expect((extracted.record as Json).record).to.deep.equal({ name: 'Jane Doe', email: 'jane@acme.com' });
    expect(((ok('query_index').matches as Json[])[0] as Json).id).to.equal('kitten');
    expect(((ok('chat_agent').message as Json).content as string)).to.match(/Marta/);
  });

  it('lists the project’s cairn:// resources', () => {
    expect(ok('list_resources') as unknown as string[]).to.include.members([`cairn://agents/${a.agent}`, `cairn://knowledge/${a.kb}`, `cairn://schemas/${a.schema}`]);
  });

  it('answers bad arguments, and another project’s ids, with tool errors; a wrong key cannot connect', () => {
    expect(failed('bad_arguments')).to.match(/\/user_id/);
    expect(failed('other_project_get')).to.match(/^There is no memory with id/);
    expect(failed('other_project_agent')).to.match(/in this project\.$/);
    const wrong = steps.get('wrong_key');
    expect(wrong?.is_error, JSON.stringify(wrong?.result)).to.equal(true);
    expect(wrong?.result, JSON.stringify(wrong?.result)).to.include({ status: 401 });
  });
});
