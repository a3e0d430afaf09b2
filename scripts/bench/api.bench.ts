import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createDatabase, ensureMysqlDatabase } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { reachable } from '../../lib/reachable.js';
import { openLoop } from './open-loop.js';

// P1 — API overhead: an authenticated cheap read of Cairn against a bare Koa hello-world, each in
// its own child process, loaded by autocannon from this process. See BENCHMARKS.md.

type ProfileName = 'embedded' | 'production';
type TargetName = 'hello' | 'cairn' | 'cairn-info';

const HOST = '127.0.0.1';
const CONNECTIONS = 32;
const WARMUP_S = 3;
const DURATION_S = 10;
const READY_TIMEOUT_MS = 60_000;
const KILL_GRACE_MS = 3_000;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 10;

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const serverEntry = path.join(here, 'servers.ts');

const { values } = parseArgs({
  options: {
    profile: { type: 'string' },
    'info-logs': { type: 'boolean', default: false },
  },
});
const profileArg = values.profile ?? process.env.BENCH_PROFILE ?? 'embedded';
if (profileArg !== 'embedded' && profileArg !== 'production' && profileArg !== 'both') {
  process.stderr.write(`--profile must be embedded, production or both (got "${profileArg}")\n`);
  process.exit(2);
}
const profiles: ProfileName[] = profileArg === 'both' ? ['embedded', 'production'] : [profileArg];
const withInfoLogs = values['info-logs'] === true;

// BENCH_-prefixed so a DATABASE_URL exported for development is never the one benchmarked (the
// bench deletes other keys of project `bench` in the database it uses).
const production = {
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/cairn_bench',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  milvusAddress: process.env.BENCH_MILVUS_ADDRESS ?? '127.0.0.1:19530',
};

interface Child {
  name: TargetName;
  proc: ChildProcess;
  port: number;
  key: string | null;
}

interface Figures {
  rps: number;
  /** Server process CPU time per request (user + system), in microseconds. */
  cpuUsPerRequest: number;
  p50: number;
  p97_5: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface HalfFigures {
  rate: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
}

interface TargetResult {
  target: string;
  path: string;
  max: Figures;
  half: HalfFigures;
}

/** One request shape to load a server with. */
interface Endpoint {
  label: string;
  path: string;
  headers: Record<string, string>;
  valid: (body: Record<string, unknown>) => boolean;
}

interface ProfileResult {
  profile: ProfileName;
  /** Production only: Milvus is configured but not on the measured path. */
  milvusReachable: boolean | null;
  targets: TargetResult[];
  /** Cairn's cached authenticated read (GET /v1/ping) over hello. */
  ratio: number;
  /** Cairn's database-backed read (GET /v1/api-keys) over hello. */
  ratioDbRead: number;
  halfLoadP99: number;
  halfLoadP99DbRead: number;
  /** Server-only ratio: hello's CPU per request over Cairn's. */
  cpuRatio: number;
  cpuRatioDbRead: number;
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

function childEnv(name: TargetName, profile: ProfileName, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: name === 'cairn-info' ? 'info' : 'warn', DATA_DIR: dataDir };
  for (const variable of ['DATABASE_URL', 'REDIS_URL', 'MILVUS_ADDRESS', 'PORT', 'BOOTSTRAP_API_KEY']) delete env[variable];
  if (profile === 'production') {
    env.DATABASE_URL = production.databaseUrl;
    env.REDIS_URL = production.redisUrl;
    env.MILVUS_ADDRESS = production.milvusAddress;
    env.QUEUE_PREFIX = 'bench';
  }
  return env;
}

/** Starts one server child and resolves once it reports `{"ready":true}` on stdout. */
function startChild(name: TargetName, env: NodeJS.ProcessEnv): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', serverEntry, name === 'hello' ? 'hello' : 'cairn', '0'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  const forwardLogs = name !== 'cairn-info';
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
          resolve({ name, proc, port: message.port, key: message.key ?? null });
          return;
        }
      }
      // At warn level any line is worth seeing; at info it is the per-request load being measured.
      if (forwardLogs) process.stderr.write(`[${name}] ${line}\n`);
    });
    proc.once('exit', (code, signal) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`${name} server exited before it was ready (code ${code ?? 'none'}, signal ${signal ?? 'none'})`));
      }
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
function stopChild(proc: ChildProcess): Promise<void> {
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

/** The cached lookup (`/v1/ping`, key cache only) and a database read (`/v1/api-keys`). */
function endpointsOf(child: Child): Endpoint[] {
  if (child.name === 'hello') return [{ label: 'hello', path: '/', headers: {}, valid: (b) => b.hello === 'world' }];
  const headers = { authorization: `Token ${child.key as string}` };
  const suffix = child.name === 'cairn-info' ? ', LOG_LEVEL=info' : '';
  return [
    { label: `cairn ping${suffix}`, path: '/v1/ping', headers, valid: (b) => b.status === 'ok' },
    {
      label: `cairn api-keys${suffix}`,
      path: '/v1/api-keys',
      headers,
      valid: (b) => Array.isArray(b.api_keys) && b.api_keys.length === 1,
    },
  ];
}

/** One request before the load, so a misconfigured target fails loudly instead of benchmarking 401s. */
async function checkTarget(child: Child, endpoint: Endpoint): Promise<void> {
  const response = await fetch(`http://${HOST}:${child.port}${endpoint.path}`, { headers: endpoint.headers });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200 || !endpoint.valid(body)) {
    throw new Error(`${endpoint.label}: GET ${endpoint.path} answered ${response.status} ${JSON.stringify(body)}`);
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, i.e. 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/** One autocannon run at maximum throughput; throws if the server process dies under it. */
function load(child: Child, endpoint: Endpoint, seconds: number): Promise<Figures> {
  const cpuBefore = cpuSeconds(child.proc.pid as number);
  return new Promise((resolve, reject) => {
    let died: string | null = null;
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      died = `${child.name} server exited during the run (code ${code ?? 'none'}, signal ${signal ?? 'none'})`;
      instance.stop();
    };
    const instance = autocannon(
      {
        url: `http://${HOST}:${child.port}${endpoint.path}`,
        headers: endpoint.headers,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
      },
      (err, result) => {
        child.proc.off('exit', onExit);
        if (died !== null) return reject(new Error(died));
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        const cpu = cpuSeconds(child.proc.pid as number) - cpuBefore;
        resolve({
          rps: result.requests.average,
          cpuUsPerRequest: (cpu * 1e6) / Math.max(1, result.requests.total),
          p50: result.latency.p50,
          p97_5: result.latency.p97_5,
          p99: result.latency.p99,
          max: result.latency.max,
          requests: result.requests.total,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
        });
      },
    );
    child.proc.once('exit', onExit);
  });
}

async function measure(child: Child, endpoint: Endpoint): Promise<TargetResult> {
  await checkTarget(child, endpoint);
  process.stderr.write(`  ${endpoint.label}: warm-up ${WARMUP_S} s, max load ${DURATION_S} s`);
  await load(child, endpoint, WARMUP_S);
  const max = await load(child, endpoint, DURATION_S);
  const rate = Math.max(1, Math.floor(max.rps / 2));
  process.stderr.write(`, half load (${rate} req/s, evenly spaced) ${DURATION_S} s\n`);
  const half = await openLoop({
    origin: `http://${HOST}:${child.port}`,
    path: endpoint.path,
    headers: endpoint.headers,
    rate,
    seconds: DURATION_S,
    connections: CONNECTIONS,
  });
  if (child.proc.exitCode !== null) throw new Error(`${child.name} server exited during the half-load run`);
  return {
    target: endpoint.label,
    path: endpoint.path,
    max,
    half: { rate, p50: half.p50, p99: half.p99, max: half.max, requests: half.completed, non2xx: half.non2xx, errors: half.errors },
  };
}

async function prepareProduction(): Promise<boolean> {
  const milvusUp = await reachable(production.milvusAddress, 19530, 1_000);
  process.stderr.write(
    `  MariaDB ${production.databaseUrl}, Redis ${production.redisUrl}, Milvus ${production.milvusAddress} ` +
      `(${milvusUp ? 'reachable' : 'NOT reachable: not on the measured path'})\n`,
  );
  await ensureMysqlDatabase(production.databaseUrl);
  const db = createDatabase({ databaseUrl: production.databaseUrl, dataDir: '' });
  try {
    await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  return milvusUp;
}

async function runProfile(profile: ProfileName): Promise<ProfileResult> {
  process.stderr.write(`\n[${profile}] starting servers\n`);
  const milvusReachable = profile === 'production' ? await prepareProduction() : null;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const names: TargetName[] = withInfoLogs ? ['hello', 'cairn', 'cairn-info'] : ['hello', 'cairn'];
  const started: Child[] = [];
  try {
    // One at a time: an idle server still runs timers (outbox relay), and each target should
    // have both cores to itself and autocannon.
    const targets: TargetResult[] = [];
    for (const name of names) {
      // Both Cairn children of a profile share its database, like two API processes would.
      const child = await startChild(name, childEnv(name, profile, dataDir));
      started.push(child);
      for (const endpoint of endpointsOf(child)) targets.push(await measure(child, endpoint));
      await stopChild(child.proc);
    }
    const hello = targets.find((t) => t.target === 'hello') as TargetResult;
    const ping = targets.find((t) => t.target === 'cairn ping') as TargetResult;
    const list = targets.find((t) => t.target === 'cairn api-keys') as TargetResult;
    return {
      profile,
      milvusReachable,
      targets,
      ratio: ping.max.rps / hello.max.rps,
      ratioDbRead: list.max.rps / hello.max.rps,
      halfLoadP99: ping.half.p99,
      halfLoadP99DbRead: list.half.p99,
      cpuRatio: hello.max.cpuUsPerRequest / ping.max.cpuUsPerRequest,
      cpuRatioDbRead: hello.max.cpuUsPerRequest / list.max.cpuUsPerRequest,
    };
  } finally {
    await Promise.all(started.map((c) => stopChild(c.proc)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((row, index) => {
      const line = row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
      return index === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

const fmt = (n: number, digits = 0): string => n.toFixed(digits);

function report(result: ProfileResult): void {
  const rows = [
    ['target', 'req/s', 'CPU µs/req', 'p50 ms', 'p99 ms', 'half-load req/s', 'p50 ms @half', 'p99 ms @half'],
    ...result.targets.map((t) => [
      `${t.target} (GET ${t.path})`,
      fmt(t.max.rps),
      fmt(t.max.cpuUsPerRequest),
      fmt(t.max.p50),
      fmt(t.max.p99),
      String(t.half.rate),
      fmt(t.half.p50, 2),
      fmt(t.half.p99, 2),
    ]),
  ];
  const ratioMet = result.ratio >= TARGET_RATIO;
  const p99Met = result.halfLoadP99 <= TARGET_P99_MS;
  process.stdout.write(
    `\n## ${result.profile} profile${result.milvusReachable === false ? ' (Milvus not reachable)' : ''}\n\n${table(rows)}\n\n` +
      `ratio (cairn ping/hello throughput): ${fmt(result.ratio, 2)} (target >= ${TARGET_RATIO})${ratioMet ? '' : '  <-- target missed'}\n` +
      `p99 at half load (ping): ${fmt(result.halfLoadP99, 2)} ms (target <= ${TARGET_P99_MS} ms)${p99Met ? '' : '  <-- target missed'}\n` +
      `database read (api-keys): ratio ${fmt(result.ratioDbRead, 2)}, p99 at half load ${fmt(result.halfLoadP99DbRead, 2)} ms\n` +
      `server CPU per request, hello/cairn (the ratio without the load generator's share of the 2 cores): ` +
      `ping ${fmt(result.cpuRatio, 2)}, api-keys ${fmt(result.cpuRatioDbRead, 2)}\n`,
  );
}

async function main(): Promise<number> {
  process.stdout.write(
    `Cairn API overhead — node ${process.version}, ${os.cpus().length} cores, ${CONNECTIONS} connections, ` +
      `${WARMUP_S} s warm-up + ${DURATION_S} s per phase\n` +
      `Servers run with LOG_LEVEL=warn (info-level request logging is per-request I/O` +
      `${withInfoLogs ? '; measured separately as cairn-info' : '; add --info-logs to measure it as well'}).\n` +
      `Maximum throughput: autocannon (latencies in whole ms). Half load: an open-loop generator sending\n` +
      `evenly spaced requests, latency measured from each request's due time.\n`,
  );
  const results: ProfileResult[] = [];
  for (const profile of profiles) {
    const result = await runProfile(profile);
    report(result);
    results.push(result);
  }
  const failures = results.flatMap((r) =>
    r.targets.flatMap((t) =>
      (
        [
          ['max load', t.max],
          ['half load', t.half],
        ] as const
      )
        .filter(([, f]) => f.non2xx > 0 || f.errors > 0)
        .map(([phase, f]) => `${r.profile}/${t.target} ${phase}: ${f.non2xx} non-2xx, ${f.errors} errors`),
    ),
  );
  const summary = {
    bench: 'api',
    node: process.version,
    cores: os.cpus().length,
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    profiles: results.map((r) => ({
      profile: r.profile,
      milvusReachable: r.milvusReachable,
      ratio: Number(r.ratio.toFixed(3)),
      ratioDbRead: Number(r.ratioDbRead.toFixed(3)),
      halfLoadP99Ms: Number(r.halfLoadP99.toFixed(2)),
      halfLoadP99DbReadMs: Number(r.halfLoadP99DbRead.toFixed(2)),
      cpuRatio: Number(r.cpuRatio.toFixed(3)),
      cpuRatioDbRead: Number(r.cpuRatioDbRead.toFixed(3)),
      ratioMet: r.ratio >= TARGET_RATIO,
      halfLoadP99Met: r.halfLoadP99 <= TARGET_P99_MS,
      targets: r.targets,
    })),
    failures,
  };
  process.stdout.write(`\n${JSON.stringify(summary)}\n`);
  if (failures.length > 0) {
    process.stderr.write(`\nFAILED: responses were not all 2xx:\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:api failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
