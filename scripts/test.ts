import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hostPort, reachable } from '../lib/reachable.js';

// `npm test`: unit tests, then, two at a time side by side, the integration suite on each profile
// (production against real MariaDB, Redis and Milvus Lite; embedded), the fault suite (production
// processes with a private Redis and Milvus Lite stopped, killed and restarted under load) and the
// schemathesis fuzz run over /openapi.json. A missing service fails the run; nothing is skipped.
// Milvus Lite is installed into .cache/ and started here when nothing answers.
//   --only unit|integration|fault|fuzz   one part;  --profiles embedded,production   integration profiles
//   --lanes N   processes at once after the unit tests (default 2; 1 runs one part after another)

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    profiles: { type: 'string', default: process.env.CAIRN_TEST_PROFILES ?? 'embedded,production' },
    grep: { type: 'string' },
    lanes: { type: 'string', default: process.env.CAIRN_TEST_LANES ?? '2' },
  },
});

interface Tally {
  passed: number;
  failed: number;
}

const begun = performance.now();
const totals: Tally = { passed: 0, failed: 0 };
let failedRuns = 0;

// Each run has a database of its own (dropped at the end), so two runs on one server never meet.
const runDatabase = `cairn_test_${randomBytes(4).toString('hex')}`;
const env = {
  mysql: process.env.TEST_DATABASE_URL ?? `mysql://root@127.0.0.1:3306/${runDatabase}`,
  redis: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  milvus: process.env.TEST_MILVUS_ADDRESS ?? '127.0.0.1:19530',
};

/**
 * How many test processes run side by side after the unit tests (`--lanes`, CAIRN_TEST_LANES):
 * the suites wait on background work much of the time, and one mocha process kept a 2-core
 * machine only about half busy. Two production suites at once are not run: they share one Milvus
 * Lite, which then stopped answering within its time limits (tried with the suite in two halves).
 */
const lanes = Number(values.lanes);
if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`--lanes (CAIRN_TEST_LANES) is a positive whole number, not "${values.lanes}"`);

/** Runs the tasks, at most `width` at once, in the order given. */
async function inLanes(tasks: Array<() => Promise<void>>, width: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: Math.min(width, queue.length) }, async () => {
      for (let task = queue.shift(); task; task = queue.shift()) await task();
    }),
  );
}

/** Runs one child to its end, its output shown with `prefix` on each line (when given) and returned. */
function runChild(command: string, args: string[], extraEnv: Record<string, string>, prefix = ''): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const show = (chunk: Buffer): void => {
      const text = chunk.toString();
      output += text;
      process.stdout.write(prefix ? text.replace(/^(?=.)/gm, prefix) : text);
    };
    child.stdout.on('data', show);
    child.stderr.on('data', show);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Minutes and seconds since `started`, for the summary lines (CI's budget is in minutes). */
function elapsed(started: number): string {
  const seconds = Math.round((performance.now() - started) / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function runMocha(config: string, extraEnv: Record<string, string>, label: string, prefix = ''): Promise<void> {
  const args = ['mocha', '--config', config, ...(values.grep ? ['--grep', values.grep] : [])];
  const started = performance.now();
  return runChild('npx', args, extraEnv, prefix).then(({ code, output }) => {
    const passed = Number(/(\d+) passing/.exec(output)?.[1] ?? 0);
    const failed = Number(/(\d+) failing/.exec(output)?.[1] ?? 0);
    totals.passed += passed;
    totals.failed += failed;
    if (code !== 0) failedRuns += 1;
    process.stdout.write(`\n${label}: ${passed} passed, ${failed} failed${code !== 0 && failed === 0 ? ` (mocha exited ${code})` : ''}; ${elapsed(started)}\n\n`);
  });
}

/** schemathesis over every operation of /openapi.json (scripts/schemathesis.sh), counted as one test. */
async function runFuzz(): Promise<void> {
  const started = performance.now();
  const { code } = await runChild(path.join(root, 'scripts/schemathesis.sh'), [], {}, '[fuzz] ');
  if (code === 0) totals.passed += 1;
  else totals.failed += 1;
  process.stdout.write(`\nfuzz (schemathesis): ${code === 0 ? '1 passed, 0 failed' : `0 passed, 1 failed (exit ${code})`}; ${elapsed(started)}\n\n`);
}

/** LOCAL_MODEL_DIR for the tests: the caller's, else the folder scripts/model-files.sh fills (idempotent). */
function localModelDir(): string {
  if (process.env.LOCAL_MODEL_DIR) return process.env.LOCAL_MODEL_DIR;
  const result = spawnSync(path.join(root, 'scripts/model-files.sh'), [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = result.stdout?.trim().split('\n').at(-1);
  if (result.status !== 0 || !dir) throw new Error('The local embedding model could not be prepared (scripts/model-files.sh); set LOCAL_MODEL_DIR to a folder that has it.');
  return dir;
}

/**
 * The python of a Python client's venv for the tests: the caller's `variable` (MEM0_PYTHON,
 * MCP_PYTHON), else the one `script` fills (idempotent) and prints on its last line.
 */
function clientPython(variable: string, script: string, client: string): string {
  const given = process.env[variable];
  if (given) return given;
  const result = spawnSync(path.join(root, script), [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const python = result.stdout?.trim().split('\n').at(-1);
  if (result.status !== 0 || !python) throw new Error(`${client} could not be installed (${script}); set ${variable} to a python that has it.`);
  return python;
}

/** Drops this run's database, if the production suite created it. */
async function dropRunDatabase(): Promise<void> {
  if (!(await reachable(env.mysql, 3306))) return;
  const { createDatabase } = await import('../db/knex.js');
  const server = new URL(env.mysql);
  server.pathname = '/mysql';
  const db = createDatabase({ databaseUrl: server.toString(), dataDir: '' });
  try {
    await db.raw('DROP DATABASE IF EXISTS ??', [runDatabase]);
  } catch (err) {
    process.stderr.write(`Could not drop the test database ${runDatabase}: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    await db.destroy();
  }
}

let startedMilvus = false;

/** Installs Milvus Lite into .cache/ (idempotent: a matching install is kept). */
function installMilvusLite(): void {
  const install = spawnSync(path.join(root, 'scripts/milvus-lite.sh'), ['install'], { stdio: 'inherit' });
  if (install.status !== 0) throw new Error('Milvus Lite could not be installed (scripts/milvus-lite.sh install).');
}

async function ensureProductionServices(): Promise<void> {
  const missing: string[] = [];
  if (!(await reachable(env.mysql, 3306))) missing.push(`MariaDB/MySQL at ${env.mysql}`);
  if (!(await reachable(env.redis, 6379))) missing.push(`Redis at ${env.redis}`);
  if (missing.length > 0) {
    throw new Error(
      `The production-profile tests need ${missing.join(' and ')}, and nothing answers there. Start them (see README, "Tests") or run only the embedded profile with CAIRN_TEST_PROFILES=embedded.`,
    );
  }
  // installed whatever answers on the port: tests that stop and start a Milvus of their own
  // (indexing-recovery) run it from .cache/, so it must be there even when another one answers
  installMilvusLite();
  const { host: milvusHost, port: milvusPort } = hostPort(env.milvus, 19530);
  if (!(await reachable(env.milvus, 19530))) {
    if (milvusHost !== '127.0.0.1' && milvusHost !== 'localhost') {
      throw new Error(`Milvus at ${env.milvus} does not answer.`);
    }
    const result = spawnSync(path.join(root, 'scripts/milvus-lite.sh'), ['start', String(milvusPort)], { stdio: 'inherit' });
    if (result.status !== 0) throw new Error('Milvus Lite could not be started (scripts/milvus-lite.sh start).');
    startedMilvus = true;
  }
}

try {
  const LOCAL_MODEL_DIR = localModelDir();
  if (values.only !== undefined && !['unit', 'integration', 'fault', 'fuzz'].includes(values.only)) throw new Error(`Unknown part "${values.only}"`);
  const part = (name: string): boolean => values.only === undefined || values.only === name;
  const profiles = (values.profiles ?? '').split(',').map((p) => p.trim());
  if (part('unit')) {
    await runMocha('test/.mocharc.unit.json', { LOCAL_MODEL_DIR }, 'unit');
  }
  // Everything after the unit tests runs in `lanes` side by side, in this order: the integration
  // suites, then the fault suite and the fuzz run, which own their services and data.
  const tasks: Array<() => Promise<void>> = [];
  if (part('integration')) {
    const MEM0_PYTHON = clientPython('MEM0_PYTHON', 'scripts/mem0-python.sh', "mem0's Python client (mem0ai)");
    const MCP_PYTHON = clientPython('MCP_PYTHON', 'scripts/mcp-python.sh', 'The MCP Python SDK (mcp)');
    const unknown = profiles.filter((p) => p !== '' && p !== 'embedded' && p !== 'production');
    if (unknown.length > 0) throw new Error(`Unknown profile "${unknown[0]}"`);
    // production first: the longest part
    for (const profile of (['production', 'embedded'] as const).filter((p) => profiles.includes(p))) {
      if (profile === 'production') await ensureProductionServices();
      const suiteEnv = { CAIRN_TEST_PROFILE: profile, TEST_DATABASE_URL: env.mysql, TEST_REDIS_URL: env.redis, TEST_MILVUS_ADDRESS: env.milvus, LOCAL_MODEL_DIR, MEM0_PYTHON, MCP_PYTHON };
      // the output lines of processes running side by side say whose they are
      tasks.push(() => runMocha('test/.mocharc.integration.json', suiteEnv, `integration (${profile})`, lanes > 1 ? `[${profile}] ` : ''));
    }
  }
  // The fault suite is production-profile only: CAIRN_TEST_PROFILES=embedded leaves it out with the rest of that profile.
  if (part('fault') && (values.only === 'fault' || profiles.includes('production'))) {
    if (!(await reachable(env.mysql, 3306))) throw new Error(`The fault suite needs MariaDB/MySQL at ${env.mysql}, and nothing answers there.`);
    installMilvusLite();
    tasks.push(() => runMocha('test/.mocharc.fault.json', { CAIRN_TEST_PROFILE: 'production', TEST_DATABASE_URL: env.mysql, LOCAL_MODEL_DIR }, 'faults (production)', '[fault] '));
  }
  if (part('fuzz')) tasks.push(runFuzz);
  await inLanes(tasks, lanes);
} catch (err) {
  failedRuns += 1;
  process.stderr.write(`\n${err instanceof Error ? err.message : String(err)}\n`);
} finally {
  if (!process.env.TEST_DATABASE_URL) await dropRunDatabase();
  if (startedMilvus) {
    spawnSync(path.join(root, 'scripts/milvus-lite.sh'), ['stop', String(hostPort(env.milvus, 19530).port)], { stdio: 'inherit' });
  }
}

process.stdout.write(`${totals.passed} passed, ${totals.failed} failed; ${elapsed(begun)}\n`);
process.exitCode = failedRuns > 0 || totals.failed > 0 ? 1 : 0;
