import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reachable } from '../../lib/reachable.js';
import { childEnv, migrateProduction, production, startChild, stopChild, type Child, type ProfileName } from './children.js';
import { openLoop } from './open-loop.js';

// P1 — API overhead: an authenticated cheap read of Cairn against a bare Koa hello-world, each in
// its own child process, loaded by autocannon from this process. See BENCHMARKS.md.

type TargetName = 'hello' | 'cairn' | 'cairn-info';

const HOST = '127.0.0.1';
const CONNECTIONS = 32;
const WARMUP_S = 3;
const DURATION_S = 10;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 10;


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
  await migrateProduction();
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
      const env = childEnv(profile, dataDir, name === 'cairn-info' ? 'info' : 'warn');
      // At warn level any line is worth seeing; at info it is the per-request load being measured.
      const child = await startChild(name, name === 'hello' ? 'hello' : 'cairn', env, name !== 'cairn-info');
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
