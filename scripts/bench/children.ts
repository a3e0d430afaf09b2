import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request, type Dispatcher } from 'undici';
import { createDatabase, ensureMysqlDatabase } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';

// Server children of the benchmarks: each server runs in its own process (servers.ts), so a load
// generator never shares an event loop with the server it measures.

export type ProfileName = 'embedded' | 'production';

const READY_TIMEOUT_MS = 60_000;
const KILL_GRACE_MS = 3_000;

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
// Entries relative to a checkout's root, so a bench can start the servers of another checkout (its own code, its own migrations).
const serverEntry = (root: string): string => path.join(root, 'scripts', 'bench', 'servers.ts');
const workerEntry = (root: string): string => path.join(root, 'scripts', 'start-worker.ts');
const READY_POLL_MS = 250;

// BENCH_-prefixed so a DATABASE_URL exported for development is never the one benchmarked (the
// benchmarks delete data of project `bench` in the database they use).
export const production = {
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  milvusAddress: process.env.BENCH_MILVUS_ADDRESS ?? '127.0.0.1:19530',
};

/** A running server child: its port, and for Cairn the API key of project `bench`. */
export interface Child {
  name: string;
  proc: ChildProcess;
  port: number;
  key: string | null;
  /** Its stdout, line by line. */
  lines: readline.Interface;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const proc of children) proc.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void Promise.all([...children].map(stopChild)).then(() => process.exit(130));
  });
}

/** The environment of a Cairn child on a profile; `DATA_DIR` holds the embedded profile's files. */
export function childEnv(profile: ProfileName, dataDir: string, logLevel: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: logLevel, DATA_DIR: dataDir };
  for (const variable of ['DATABASE_URL', 'REDIS_URL', 'MILVUS_ADDRESS', 'PORT', 'BOOTSTRAP_API_KEY']) delete env[variable];
  if (profile === 'production') {
    env.DATABASE_URL = production.databaseUrl;
    env.REDIS_URL = production.redisUrl;
    env.MILVUS_ADDRESS = production.milvusAddress;
    env.QUEUE_PREFIX = 'bench';
  }
  return { ...env, ...extra };
}

/** Creates and migrates the production benchmark database. */
export async function migrateProduction(): Promise<void> {
  await ensureMysqlDatabase(production.databaseUrl);
  const db = createDatabase({ databaseUrl: production.databaseUrl, dataDir: '' });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Starts one server child (`hello` or `cairn`) of the checkout at `root` (this one by default) and
 * resolves once it reports `{"ready":true}` on stdout. Other stdout lines are forwarded to stderr
 * unless `forwardLogs` is false.
 */
export function startChild(name: string, target: 'hello' | 'cairn' | 'cairn-api', env: NodeJS.ProcessEnv, forwardLogs = true, root = repoRoot): Promise<Child> {
  // BENCH_API_PROFILE=<dir>: each server writes a V8 CPU profile there when it exits;
  // BENCH_LOOP_PROBE=<dir>: each server logs its long event-loop turns there (loop-probe.mjs)
  const probe = process.env.BENCH_LOOP_PROBE;
  const proc = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_API_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_API_PROFILE}`] : []),
      '--import',
      'tsx',
      ...(probe ? ['--import', path.join(repoRoot, 'scripts', 'bench', 'loop-probe.mjs')] : []),
      serverEntry(root),
      target,
      '0',
    ],
    {
      cwd: root,
      env: probe ? { ...env, BENCH_LOOP_PROBE: probe } : env,
      // stdin carries `control` commands
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return new Promise((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      reject(new Error(`${name} server did not report ready within ${READY_TIMEOUT_MS / 1000} s`));
    }, READY_TIMEOUT_MS);
    const lines = readline.createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (!ready) {
        const message = parseReady(line);
        if (message) {
          ready = true;
          clearTimeout(timer);
          resolve({ name, proc, port: message.port, key: message.key ?? null, lines });
          return;
        }
      }
      if (forwardLogs && !line.startsWith(CONTROL_ANSWER)) process.stderr.write(`[${name}] ${line}\n`);
    });
    proc.once('exit', (code, signal) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`${name} server exited before it was ready (code ${code ?? 'none'}, signal ${signal ?? 'none'})`));
      }
    });
  });
}

/**
 * Starts a Cairn worker process (`scripts/start-worker.ts` of the checkout at `root`, as
 * `npm run start:worker` does) and resolves once it logs that it started or, since at LOG_LEVEL=warn it logs nothing then, once
 * `ready()` (polled) says it consumes jobs. Its stdout is forwarded to stderr.
 */
export function startWorker(name: string, env: NodeJS.ProcessEnv, ready: () => Promise<boolean>, root = repoRoot): Promise<ChildProcess> {
  // BENCH_WORKER_PROFILE=<dir>: each worker writes a V8 CPU profile there when it exits
  const proc = spawn(process.execPath, [...(process.env.BENCH_WORKER_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROFILE}`] : []), '--import', 'tsx', workerEntry(root)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      if (err) reject(err);
      else resolve(proc);
    };
    const timer = setTimeout(() => settle(new Error(`${name} did not start within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
    const poll = setInterval(() => {
      ready().then(
        (ok) => ok && settle(null),
        () => undefined,
      );
    }, READY_POLL_MS);
    const lines = readline.createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (line.includes('"msg":"cairn started"')) settle(null);
      process.stderr.write(`[${name}] ${line}\n`);
    });
    proc.once('exit', (code, signal) => {
      settle(new Error(`${name} exited before it was ready (code ${code ?? 'none'}, signal ${signal ?? 'none'})`));
    });
  });
}

const CONTROL_ANSWER = '{"control"';
const CONTROL_TIMEOUT_MS = 60_000;

/**
 * Sends a Cairn child one command of `servers.ts` (`hold`, `release`: its outbox relay) and
 * resolves once the child answers that it was carried out.
 */
export function control(child: Child, command: 'hold' | 'release'): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null): void => {
      clearTimeout(timer);
      child.lines.off('line', onLine);
      child.proc.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onLine = (line: string): void => {
      if (line.startsWith(CONTROL_ANSWER) && (JSON.parse(line) as { control?: unknown }).control === command) done(null);
    };
    const onExit = (): void => done(new Error(`${child.name} exited before it carried out "${command}"`));
    const timer = setTimeout(() => done(new Error(`${child.name} did not carry out "${command}" within ${CONTROL_TIMEOUT_MS / 1000} s`)), CONTROL_TIMEOUT_MS);
    child.lines.on('line', onLine);
    child.proc.once('exit', onExit);
    child.proc.stdin?.write(`${command}\n`);
  });
}

/**
 * Runs a script (`tsx`) in a child process, in the checkout at `root` (this one by default), to its
 * end and resolves with its stdout; its stderr goes to the bench's. Rejects when it exits otherwise
 * than with code 0.
 */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv, root = repoRoot): Promise<string> {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(proc);
  let out = '';
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code, signal) => {
      children.delete(proc);
      if (code === 0) resolve(out);
      else reject(new Error(`${path.basename(script)} exited with code ${code ?? 'none'}, signal ${signal ?? 'none'}`));
    });
  });
}

function parseReady(line: string): { port: number; key?: string } | null {
  if (!line.startsWith('{"ready"')) return null;
  try {
    const parsed = JSON.parse(line) as { ready?: unknown; port?: unknown; key?: unknown };
    if (parsed.ready !== true || typeof parsed.port !== 'number') return null;
    return typeof parsed.key === 'string' ? { port: parsed.port, key: parsed.key } : { port: parsed.port };
  } catch {
    return null;
  }
}

/** SIGTERM, then SIGKILL if the child is still there after the grace period. */
export function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), KILL_GRACE_MS);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** `p` in [0, 1] of sorted numbers (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

/** Median, 99th percentile and mean of latency samples (ms). */
export interface Latency {
  p50: number;
  p99: number;
  mean: number;
}

export function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), mean: samples.reduce((s, x) => s + x, 0) / samples.length };
}

/** Milliseconds `fn` took. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Kept-alive connections for every `Api`, through undici's request API (as `openLoop` uses it):
 * the load generator shares the cores it measures, and fetch, on the same library, cost about
 * 1.3 ms of CPU a request (bench:import, chat lines), as much as a third of what Cairn's API spends
 * answering it.
 */
const dispatcher = new Agent({ connections: 64 });

/** A Cairn child's HTTP API, called with its bootstrap key or another project's key. */
export class Api {
  constructor(
    private readonly child: Child,
    private readonly key: string = child.key as string,
  ) {}

  /** Answers 2xx and the statuses in `accept`; anything else throws. */
  async call(method: string, route: string, body?: unknown, accept: number[] = []): Promise<Record<string, unknown>> {
    const response = await request(`http://127.0.0.1:${this.child.port}${route}`, {
      method: method as Dispatcher.HttpMethod,
      headers: { authorization: `Token ${this.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher,
    });
    const status = response.statusCode;
    const text = await response.body.text();
    if (status >= 300 && !accept.includes(status)) {
      throw new Error(`${method} ${route} answered ${status}: ${text.slice(0, 300)}`);
    }
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  }
}

/** Clock ticks a second of `/proc` CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The fields of a `/proc/.../stat` line after the command name (field 3, the state, is index 0). */
function statFields(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return text.slice(text.lastIndexOf(') ') + 2).split(' ');
}

/** CPU seconds (user + system) a process has used, from /proc; NaN once it is gone. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = statFields(`/proc/${pid}/stat`);
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds of a process, and of those of its threads that run at a lower priority than its main
 * thread: the local model's thread is niced (`LocalModelThread`) and onnxruntime's own threads,
 * started from it, inherit that, so `model` is what the embedding model used. NaN once it is gone.
 */
export function processCpu(pid: number | undefined): { total: number; model: number } {
  try {
    const nice = (fields: string[]): number => Number(fields[16]);
    const main = nice(statFields(`/proc/${pid}/stat`));
    let model = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      let fields: string[];
      try {
        fields = statFields(`/proc/${pid}/task/${tid}/stat`);
      } catch {
        continue; // the thread ended meanwhile
      }
      if (nice(fields) > main) model += Number(fields[11]) + Number(fields[12]);
    }
    return { total: cpuSeconds(pid), model: model / TICKS_PER_SECOND };
  } catch {
    return { total: NaN, model: NaN };
  }
}

/** Busy and total CPU time of the machine, from /proc/stat (clock ticks). */
export function machineTicks(): { busy: number; total: number } {
  const [cpu] = fs.readFileSync('/proc/stat', 'utf8').split('\n');
  const ticks = (cpu ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((s, x) => s + x, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/** Resident memory (kB) of a process and all its descendants, from /proc. */
export function treeRssKb(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  let total = 0;
  const visit = (p: number): void => {
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      total += Number(rss?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return total;
}
