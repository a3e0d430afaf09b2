import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import readline from 'node:readline';
import Koa from 'koa';
import { createApp } from '../../api/app.js';
import { loadConfig } from '../../lib/config.js';
import { Runtime } from '../../runtime/runtime.js';
import { ShutdownPhase } from '../../lib/shutdown.js';

// Server side of `npm run bench:api`, one process per target so the load generator in the parent
// never shares an event loop with the server it measures.
// Usage: servers.ts hello|cairn|cairn-api <port>   (port 0 = any free port; the chosen one is reported)
// `cairn` runs role 'all' (HTTP and job consumers); `cairn-api` serves HTTP only, for benches whose
// jobs run in separate worker processes.
// Prints one JSON line on stdout when it accepts requests: {"ready":true,"port":N[,"key":"..."]}.
// Cairn targets then take commands on stdin, one a line: `hold` stops the outbox relay (writes wait
// in the outbox; on the embedded profile nothing is indexed meanwhile), `release` starts it again;
// each is answered by {"control":"<command>","done":true} once carried out.

const HOST = '127.0.0.1';
const BENCH_PROJECT = 'bench';
/** The agent bench:api reads: made afresh at each start, with one tool and one rule. */
const BENCH_AGENT = 'bench-agent';

const [target, portArg] = process.argv.slice(2);
const port = Number(portArg ?? '0');
if ((target !== 'hello' && target !== 'cairn' && target !== 'cairn-api') || !Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write('Usage: servers.ts hello|cairn|cairn-api <port>\n');
  process.exit(2);
}

function listen(app: Koa): Promise<Server> {
  const server = app.listen(port, HOST);
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function announce(server: Server, extra: Record<string, string> = {}): void {
  const { port: actual } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: true, port: actual, ...extra })}\n`);
}

async function startHello(): Promise<void> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { hello: 'world' };
  });
  const server = await listen(app);
  const stop = (): void => {
    void closeServer(server).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  announce(server);
}

/** The agent of project `bench` that bench:api reads, as a project would configure it. */
async function benchAgent(runtime: Runtime, projectId: string): Promise<void> {
  await runtime.agents.delete(projectId, BENCH_AGENT).catch(() => undefined);
  await runtime.agents.create(projectId, {
    name: BENCH_AGENT,
    instructions: 'You answer questions about orders. Be brief, and quote the order number you looked up.',
    guardrails: { input: { enabled: true } },
  });
  await runtime.agents.addTool(projectId, BENCH_AGENT, {
    name: 'order_status',
    description: 'The status of an order by its number.',
    http: { url: 'https://orders.example.com/v1/orders/{order_id}' },
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  });
  await runtime.agents.addRule(projectId, BENCH_AGENT, { rule_type: 'escalation', condition: 'message.contains("lawyer")', action: 'A person will contact you.' });
}

/** Carries out the commands on stdin (see the top of this file). */
function takeCommands(runtime: Runtime): void {
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const command = line.trim();
    const answer = (): void => {
      process.stdout.write(`${JSON.stringify({ control: command, done: true })}\n`);
    };
    if (command === 'hold') {
      void runtime.relay.stop().then(answer);
    } else if (command === 'release') {
      runtime.relay.start();
      runtime.relay.kick();
      answer();
    } else {
      process.stderr.write(`bench server: unknown command "${command}" (hold, release)\n`);
    }
  });
}

async function startCairn(role: 'all' | 'api'): Promise<void> {
  const runtime = await Runtime.create(loadConfig(process.env), { role });
  runtime.shutdown.handleSignals();
  await runtime.start();
  const created = await runtime.apiKeys.createForProject(BENCH_PROJECT, 'bench');
  // Keys left by earlier runs against the same database would make the listed page longer run
  // after run; keep exactly one so every run measures the same response.
  const mine = await runtime.db('api_keys').where({ id: created.id }).first('project_id');
  const projectId = (mine as { project_id: string }).project_id;
  await runtime.db('api_keys').where({ project_id: projectId }).whereNot({ id: created.id }).delete();
  await benchAgent(runtime, projectId);
  const server = await listen(createApp(runtime));
  runtime.shutdown.add('http', ShutdownPhase.http, () => closeServer(server));
  announce(server, { key: created.key, profile: runtime.config.profile });
  takeCommands(runtime);
}

try {
  await (target === 'hello' ? startHello() : startCairn(target === 'cairn-api' ? 'api' : 'all'));
} catch (err) {
  process.stderr.write(`bench server ${target} could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
}
