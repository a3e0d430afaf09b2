import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import supertest from 'supertest';
import { createDatabase, ensureMysqlDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { reachable } from '../../lib/reachable.js';
import { freePort, LOCAL_MODEL_DIR, repoRoot, spawnCairn, tempDir, TEST_DATABASE_URL, token, waitFor, type CairnProcess } from '../helpers.js';

// A production stack of its own for one fault case: a fresh MariaDB database on the shared server,
// and a private Redis and a private Milvus Lite that the case may stop and start again, with real
// `start:api` and `start:worker` processes. Nothing here touches the services other tests use.

const MILVUS_LITE = path.join(repoRoot, '.cache/milvus-venv/bin/milvus-lite');

/** A service process this stack started (Redis or Milvus Lite), stoppable and restartable on the same port and data. */
export class Service {
  private child: ChildProcess | undefined;
  private log = '';

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly command: string,
    private readonly args: string[],
  ) {}

  async start(): Promise<void> {
    const child = spawn(this.command, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-4000)));
    child.stderr?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-4000)));
    this.child = child;
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`${this.name} exited ${child.exitCode}: ${this.log}`);
      return reachable(`127.0.0.1:${this.port}`, this.port, 500);
    }, { timeoutMs: 60_000, intervalMs: 200, message: `${this.name} listening on ${this.port}` });
  }

  /** Stops the process (SIGKILL: a crash, not a goodbye) and waits until the port is closed. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    await waitFor(async () => !(await reachable(`127.0.0.1:${this.port}`, this.port, 300)), { timeoutMs: 10_000, message: `${this.name} port closed` });
  }
}

export interface StackOptions {
  workers?: number;
  /** Extra environment for every Cairn process. */
  env?: Record<string, string>;
  /** The local model folder the workers and the API start with (default: the real one). */
  modelDir?: string;
}

/** One Cairn deployment on the production profile, with services it owns. */
export class Stack {
  readonly key = `fault-${randomBytes(12).toString('hex')}`;
  api!: CairnProcess;
  workers: CairnProcess[] = [];
  redis!: Service;
  milvus!: Service;
  db!: Knex;
  env: Record<string, string> = {};
  apiPort = 0;
  private databaseUrl = '';
  private dirs: string[] = [];

  static async start(options: StackOptions = {}): Promise<Stack> {
    const stack = new Stack();
    await stack.boot(options);
    return stack;
  }

  private async boot(options: StackOptions): Promise<void> {
    const redisDir = tempDir('cairn-fault-redis-');
    const milvusDir = tempDir('cairn-fault-milvus-');
    this.dirs.push(redisDir, milvusDir);
    const redisPort = await freePort();
    // As docker-compose.yml runs it: AOF on (fsync every second) and noeviction.
    this.redis = new Service('Redis', redisPort, 'redis-server', [
      '--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec',
      '--maxmemory-policy', 'noeviction', '--dir', redisDir,
    ]);
    if (!fs.existsSync(MILVUS_LITE)) throw new Error(`Milvus Lite is not installed at ${MILVUS_LITE} (scripts/milvus-lite.sh install)`);
    const milvusPort = await freePort();
    this.milvus = new Service('Milvus Lite', milvusPort, MILVUS_LITE, ['server', '--data-dir', milvusDir, '--host', '127.0.0.1', '--port', String(milvusPort)]);
    await Promise.all([this.redis.start(), this.milvus.start()]);

    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/cairn_fault_${randomBytes(5).toString('hex')}`;
    this.databaseUrl = url.toString();
    await ensureMysqlDatabase(this.databaseUrl);
    this.db = createDatabase({ databaseUrl: this.databaseUrl, dataDir: '' });
    await migrateLatest(this.db);

    this.apiPort = await freePort();
    this.env = {
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      MILVUS_ADDRESS: `127.0.0.1:${milvusPort}`,
      MILVUS_TIMEOUT_MS: '3000',
      QUEUE_PREFIX: 'fault',
      BOOTSTRAP_API_KEY: this.key,
      LOCAL_MODEL_DIR: options.modelDir ?? LOCAL_MODEL_DIR,
      LOG_LEVEL: 'info',
      JOB_LOCK_MS: '5000',
      RECONCILE_INTERVAL_MS: '2000',
      ...options.env,
    };
    await this.startApi();
    for (let i = 0; i < (options.workers ?? 1); i++) await this.startWorker();
    await waitFor(async () => (await this.http().get('/readyz')).status === 200, { timeoutMs: 60_000, message: 'stack ready' });
  }

  http(): ReturnType<typeof supertest> {
    return supertest(`http://127.0.0.1:${this.apiPort}`);
  }

  auth(): string {
    return token(this.key);
  }

  async startApi(): Promise<void> {
    this.api = await spawnCairn('start-api.ts', { ...this.env, PORT: String(this.apiPort) });
    await this.api.waitForOutput(/cairn started/, 60_000);
  }

  async startWorker(env: Record<string, string> = {}): Promise<CairnProcess> {
    const worker = await spawnCairn('start-worker.ts', { ...this.env, ...env });
    await worker.waitForOutput(/cairn started/, 60_000);
    this.workers.push(worker);
    return worker;
  }

  async stop(): Promise<void> {
    await Promise.all([this.api, ...this.workers].filter(Boolean).map((p) => p.kill('SIGKILL')));
    await Promise.all([this.redis?.stop(), this.milvus?.stop()]);
    if (this.db) {
      await this.db.raw('DROP DATABASE IF EXISTS ??', [new URL(this.databaseUrl).pathname.slice(1)]).catch(() => undefined);
      await this.db.destroy();
    }
    for (const dir of this.dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}
