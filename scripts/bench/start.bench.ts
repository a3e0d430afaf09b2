import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { treeRssKb } from './children.js';

// `npm run bench:start`: how long `npm start` (embedded profile) takes from process start until
// /healthz answers 200, and the resident memory once it is up, for the compiled build (dist/)
// against the TypeScript sources run through tsx (what `npm start` ran before dist/).
//
//   npm run bench:start [-- --rounds 3] [--busy]
//
// Each round starts both, one after the other, each on a fresh DATA_DIR (the order alternates
// between rounds); the figures are medians over the rounds. --busy keeps one core busy throughout
// (a `node -e 'for(;;){}'` child), as another process under load would. LOCAL_MODEL_DIR (default
// .cache/models) holds the embedding model, so nothing is fetched. dist/ is built first if stale.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 3) || 3;
const busy = args.includes('--busy');
const IDLE_WAIT_MS = 3_000;
const READY_TIMEOUT_MS = 120_000;

const MODES = {
  // what package.json's `start` ran before: the tsx command (which starts a node child of its own)
  tsx: [path.join(root, 'node_modules', '.bin', 'tsx'), path.join(root, 'scripts', 'start.ts')],
  compiled: [process.execPath, '--enable-source-maps', path.join(root, 'dist', 'scripts', 'start.js')],
} as const;
type Mode = keyof typeof MODES;

async function healthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

let nextPort = 19_000 + Math.floor(Math.random() * 500);

async function startOnce(mode: Mode): Promise<{ readyMs: number; rssMb: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-start-bench-'));
  const port = nextPort++;
  const [command, ...rest] = MODES[mode];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    LOCAL_MODEL_DIR: process.env.LOCAL_MODEL_DIR ?? path.join(root, '.cache', 'models'),
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'MILVUS_ADDRESS']) delete env[name];
  const started = performance.now();
  const child = spawn(command, rest, { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    while (!(await healthy(port))) {
      if (child.exitCode !== null) throw new Error(`${mode} exited with ${child.exitCode} before it was ready`);
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${mode} not ready after ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
    return { readyMs, rssMb: treeRssKb(child.pid as number) / 1024 };
  } finally {
    await stop(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const build = spawn(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, stdio: 'inherit' });
await new Promise((resolve) => build.once('exit', resolve));

const load = busy ? spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }) : null;
const results: Record<Mode, Array<{ readyMs: number; rssMb: number }>> = { tsx: [], compiled: [] };
try {
  for (let round = 0; round < rounds; round++) {
    const order: Mode[] = round % 2 === 0 ? ['tsx', 'compiled'] : ['compiled', 'tsx'];
    for (const mode of order) {
      const r = await startOnce(mode);
      results[mode].push(r);
      console.log(`round ${round + 1} ${mode.padEnd(8)} ready ${r.readyMs.toFixed(0).padStart(6)} ms  idle RSS ${r.rssMb.toFixed(0)} MB`);
    }
  }
} finally {
  if (load) await stop(load);
}

const summary = Object.fromEntries(
  (Object.keys(results) as Mode[]).map((mode) => [
    mode,
    { readyMs: Math.round(median(results[mode].map((r) => r.readyMs))), rssMb: Math.round(median(results[mode].map((r) => r.rssMb))) },
  ]),
);
console.log(`\n| ${busy ? 'one core busy' : 'quiet'} | ready (median ms) | idle RSS (median MB) |\n|---|---|---|`);
for (const [mode, s] of Object.entries(summary)) console.log(`| ${mode} | ${s.readyMs} | ${s.rssMb} |`);
console.log(JSON.stringify({ bench: 'start', busy, rounds, cpus: os.availableParallelism(), summary }));
