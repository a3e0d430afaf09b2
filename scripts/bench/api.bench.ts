import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reachable } from '../../lib/reachable.js';
import { childEnv, migrateProduction, production, startChild, stopChild, type Child, type ProfileName } from './children.js';
import { openLoop } from './open-loop.js';

// P1 — API overhead: authenticated reads of Cairn against a bare Koa hello-world, each server in
// its own child process, loaded by autocannon from this process. The targets are measured in
// rounds, hello and Cairn interleaved within each round, and ratios are taken within a round, so
// that the shared machine's drift falls on both sides. See BENCHMARKS.md.

type TargetName = 'hello' | 'cairn' | 'cairn-info';

const HOST = '127.0.0.1';
const CONNECTIONS = 32;
const ROUNDS = 3;
const WARMUP_S = 2;
const DURATION_S = 5;
const HALF_LOAD_S = 10;
const TARGET_RATIO = 0.5;
const TARGET_RATIO_AGENT = 0.35;
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

/** One endpoint's figures: each round's maximum-load run, their medians, and one half-load run. */
interface TargetResult {
  target: string;
  path: string;
  rounds: Figures[];
  median: { rps: number; cpuUsPerRequest: number; p50: number; p99: number };
  /** Cairn's endpoints only: hello's half load is the generator's limit, not Koa's. */
  half: HalfFigures | null;
  /** Cairn's endpoints only: throughput and server-CPU ratios against hello, each round's and their median. */
  ratios: { rounds: number[]; median: number; cpuRounds: number[]; cpuMedian: number } | null;
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
}

/** The agent every round reads (servers.ts creates it with a tool and a rule). */
const BENCH_AGENT = 'bench-agent';

/**
 * The cached lookup (`/v1/ping`, key cache only), a database read that is not cached
 * (`/v1/api-keys`), and a configuration read (`/v1/agents/{name}`: the agent, its tools and rules).
 */
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
    {
      label: `cairn agent${suffix}`,
      path: `/v1/agents/${BENCH_AGENT}`,
      headers,
      valid: (b) => b.name === BENCH_AGENT && Array.isArray(b.tools) && b.tools.length === 1 && Array.isArray(b.rules) && b.rules.length === 1,
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

/** A warm-up run, discarded, then one measured run at maximum throughput. */
async function maxLoad(child: Child, endpoint: Endpoint, round: number): Promise<Figures> {
  process.stderr.write(`  round ${round}: ${endpoint.label}: warm-up ${WARMUP_S} s, max load ${DURATION_S} s`);
  await load(child, endpoint, WARMUP_S);
  const figures = await load(child, endpoint, DURATION_S);
  process.stderr.write(` → ${Math.round(figures.rps)} req/s, ${Math.round(figures.cpuUsPerRequest)} µs CPU/req\n`);
  return figures;
}

/** Evenly spaced requests at `rate` for HALF_LOAD_S (latency from each request's due time). */
async function halfLoad(child: Child, endpoint: Endpoint, rate: number): Promise<HalfFigures> {
  process.stderr.write(`  ${endpoint.label}: half load (${rate} req/s, evenly spaced) ${HALF_LOAD_S} s\n`);
  const half = await openLoop({
    origin: `http://${HOST}:${child.port}`,
    path: endpoint.path,
    headers: endpoint.headers,
    rate,
    seconds: HALF_LOAD_S,
    connections: CONNECTIONS,
  });
  if (child.proc.exitCode !== null) throw new Error(`${child.name} server exited during the half-load run`);
  return { rate, p50: half.p50, p99: half.p99, max: half.max, requests: half.completed, non2xx: half.non2xx, errors: half.errors };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
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
    for (const name of names) {
      // Both Cairn children of a profile share its database, like two API processes would.
      const env = childEnv(profile, dataDir, name === 'cairn-info' ? 'info' : 'warn');
      // At warn level any line is worth seeing; at info it is the per-request load being measured.
      started.push(await startChild(name, name === 'hello' ? 'hello' : 'cairn', env, name !== 'cairn-info'));
    }
    const plan = started.flatMap((child) => endpointsOf(child).map((endpoint) => ({ child, endpoint })));
    for (const { child, endpoint } of plan) await checkTarget(child, endpoint);
    // The servers all run throughout; the idle ones only keep their timers (the outbox relay).
    const runs = plan.map(() => [] as Figures[]);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, { child, endpoint }] of plan.entries()) (runs[i] as Figures[]).push(await maxLoad(child, endpoint, round));
    }
    const hello = runs[0] as Figures[];
    const targets: TargetResult[] = [];
    for (const [i, { child, endpoint }] of plan.entries()) {
      const rounds = runs[i] as Figures[];
      const isHello = i === 0;
      const ratioRounds = rounds.map((f, r) => f.rps / (hello[r] as Figures).rps);
      const cpuRounds = rounds.map((f, r) => (hello[r] as Figures).cpuUsPerRequest / f.cpuUsPerRequest);
      const rps = median(rounds.map((f) => f.rps));
      targets.push({
        target: endpoint.label,
        path: endpoint.path,
        rounds,
        median: {
          rps,
          cpuUsPerRequest: median(rounds.map((f) => f.cpuUsPerRequest)),
          p50: median(rounds.map((f) => f.p50)),
          p99: median(rounds.map((f) => f.p99)),
        },
        half: isHello ? null : await halfLoad(child, endpoint, Math.max(1, Math.floor(rps / 2))),
        ratios: isHello ? null : { rounds: ratioRounds, median: median(ratioRounds), cpuRounds, cpuMedian: median(cpuRounds) },
      });
    }
    return { profile, milvusReachable, targets };
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

const target = (result: ProfileResult, label: string): TargetResult => result.targets.find((t) => t.target === label) as TargetResult;

function report(result: ProfileResult): void {
  const rows = [
    ['target', 'req/s', 'CPU µs/req', 'p50 ms', 'p99 ms', 'ratio', 'CPU ratio', 'ratio per round', 'half-load req/s', 'p50 ms @half', 'p99 ms @half'],
    ...result.targets.map((t) => [
      `${t.target} (GET ${t.path})`,
      fmt(t.median.rps),
      fmt(t.median.cpuUsPerRequest),
      fmt(t.median.p50),
      fmt(t.median.p99),
      t.ratios ? fmt(t.ratios.median, 2) : '',
      t.ratios ? fmt(t.ratios.cpuMedian, 2) : '',
      t.ratios ? t.ratios.rounds.map((r) => fmt(r, 2)).join(' ') : '',
      t.half ? String(t.half.rate) : '',
      t.half ? fmt(t.half.p50, 2) : '',
      t.half ? fmt(t.half.p99, 2) : '',
    ]),
  ];
  const ping = target(result, 'cairn ping');
  const list = target(result, 'cairn api-keys');
  const agent = target(result, 'cairn agent');
  const missed = (met: boolean): string => (met ? '' : '  <-- target missed');
  const pingRatio = ping.ratios?.median ?? 0;
  const agentRatio = agent.ratios?.median ?? 0;
  const pingP99 = ping.half?.p99 ?? Infinity;
  process.stdout.write(
    `\n## ${result.profile} profile${result.milvusReachable === false ? ' (Milvus not reachable)' : ''}\n\n${table(rows)}\n\n` +
      `Medians of ${ROUNDS} rounds; a ratio is Cairn's req/s over hello's in the same round, the CPU ratio hello's CPU per request over Cairn's.\n` +
      `cached read (ping) ratio: ${fmt(pingRatio, 2)} (target >= ${TARGET_RATIO})${missed(pingRatio >= TARGET_RATIO)}\n` +
      `p99 at half load (ping): ${fmt(pingP99, 2)} ms (target <= ${TARGET_P99_MS} ms)${missed(pingP99 <= TARGET_P99_MS)}\n` +
      `configuration read (agent) ratio: ${fmt(agentRatio, 2)} (target >= ${TARGET_RATIO_AGENT})${missed(agentRatio >= TARGET_RATIO_AGENT)}, ` +
      `p99 at half load ${fmt(agent.half?.p99 ?? Infinity, 2)} ms\n` +
      `database read (api-keys) ratio: ${fmt(list.ratios?.median ?? 0, 2)}, p99 at half load ${fmt(list.half?.p99 ?? Infinity, 2)} ms\n`,
  );
}

async function main(): Promise<number> {
  process.stdout.write(
    `Cairn API overhead — node ${process.version}, ${os.cpus().length} cores, ${CONNECTIONS} connections, ` +
      `${ROUNDS} rounds of ${WARMUP_S} s warm-up + ${DURATION_S} s per target, then ${HALF_LOAD_S} s at half load\n` +
      `Servers run with LOG_LEVEL=warn (info-level request logging is per-request I/O` +
      `${withInfoLogs ? '; measured separately as cairn-info' : '; add --info-logs to measure it as well'}).\n` +
      `Maximum throughput: autocannon (latencies in whole ms). Half load: an open-loop generator sending\n` +
      `evenly spaced requests at half the median maximum, latency measured from each request's due time.\n`,
  );
  const results: ProfileResult[] = [];
  for (const profile of profiles) {
    const result = await runProfile(profile);
    report(result);
    results.push(result);
  }
  const failures = results.flatMap((r) =>
    r.targets.flatMap((t) =>
      [...t.rounds.map((f, i) => [`round ${i + 1}`, f] as const), ...(t.half ? [['half load', t.half] as const] : [])]
        .filter(([, f]) => f.non2xx > 0 || f.errors > 0)
        .map(([phase, f]) => `${r.profile}/${t.target} ${phase}: ${f.non2xx} non-2xx, ${f.errors} errors`),
    ),
  );
  const summary = {
    bench: 'api',
    node: process.version,
    cores: os.cpus().length,
    connections: CONNECTIONS,
    rounds: ROUNDS,
    durationSeconds: DURATION_S,
    profiles: results.map((r) => {
      const ratio = (label: string): number => Number((target(r, label).ratios?.median ?? 0).toFixed(3));
      const cpuRatio = (label: string): number => Number((target(r, label).ratios?.cpuMedian ?? 0).toFixed(3));
      return {
        profile: r.profile,
        milvusReachable: r.milvusReachable,
        ratio: ratio('cairn ping'),
        ratioDbRead: ratio('cairn api-keys'),
        ratioAgent: ratio('cairn agent'),
        cpuRatio: cpuRatio('cairn ping'),
        cpuRatioDbRead: cpuRatio('cairn api-keys'),
        cpuRatioAgent: cpuRatio('cairn agent'),
        halfLoadP99Ms: Number((target(r, 'cairn ping').half?.p99 ?? 0).toFixed(2)),
        ratioMet: ratio('cairn ping') >= TARGET_RATIO,
        ratioAgentMet: ratio('cairn agent') >= TARGET_RATIO_AGENT,
        targets: r.targets,
      };
    }),
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
