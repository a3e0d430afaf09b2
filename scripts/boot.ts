import type { Server } from 'node:http';
import { createApp } from '../api/app.js';
import { ConfigError, loadConfig, type Config } from '../lib/config.js';
import { Runtime, type Role } from '../runtime/runtime.js';
import { ShutdownPhase } from '../lib/shutdown.js';

/** Reads the configuration or exits naming every bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

/** Starts a process of the given role: builds the runtime, serves HTTP where the role does. */
export async function boot(role: Role): Promise<Runtime> {
  const config = configOrExit();
  let runtime: Runtime;
  try {
    runtime = await Runtime.create(config, { role, migrate: role === 'all' });
  } catch (err) {
    process.stderr.write(`Cairn could not start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  runtime.shutdown.handleSignals();
  await runtime.start();

  if (role !== 'worker') {
    const server = await listen(runtime);
    runtime.shutdown.add('http', ShutdownPhase.http, () => closeServer(server));
  }
  if (config.profile === 'embedded') await announceFirstKey(runtime);
  runtime.log.info({ profile: config.profile, port: role === 'worker' ? undefined : config.port }, 'cairn started');
  return runtime;
}

async function listen(runtime: Runtime): Promise<Server> {
  const app = createApp(runtime);
  const server = app.listen(runtime.config.port);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** A new embedded install has no key at all: issue one for project `default` and print it once. */
async function announceFirstKey(runtime: Runtime): Promise<void> {
  const anyKey = await runtime.db('api_keys').first('id');
  if (anyKey) return;
  const created = await runtime.apiKeys.createForProject('default', 'first-start');
  process.stdout.write(
    `\nCairn is running at http://localhost:${runtime.config.port} (embedded profile, data in ${runtime.config.dataDir}).\n` +
      `An API key was created for project "default"; it is shown only now:\n\n  ${created.key}\n\n` +
      `Try: curl -H "Authorization: Token ${created.key}" http://localhost:${runtime.config.port}/v1/api-keys\n\n`,
  );
}
