import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { isMainThread } from 'node:worker_threads';

// Plain JavaScript: a worker thread (the local model's) inherits the `--import` before it can load
// TypeScript, and the probe does nothing there.
//
// Loaded into a bench's server child (`--import`, see children.ts) when BENCH_LOOP_PROBE names a
// directory. A 1 ms timer sees each turn of the event loop; for a turn that took 10 ms or more, it
// appends to `<dir>/<pid>.jsonl` when it ended (epoch ms), its length, and how the main thread
// spent it according to the kernel (/proc/thread-self/schedstat): running (CPU: the work the turn
// did) and waiting for a core (runnable, but the machine's other threads had both). prom-client's
// event-loop lag only tells the length; on a machine as busy as its cores, much of that length is
// the wait, which no change to the loop's work removes.

const dir = process.env.BENCH_LOOP_PROBE;
if (dir && isMainThread && process.platform === 'linux') {
  const file = path.join(dir, `${process.pid}.jsonl`);
  const fd = fs.openSync('/proc/thread-self/schedstat', 'r');
  const buffer = Buffer.alloc(128);
  // nanoseconds running, nanoseconds runnable but waiting
  const read = () => {
    const text = buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, buffer.length, 0));
    const [run, wait] = text.split(' ');
    return [Number(run), Number(wait)];
  };
  let lines = [];
  let last = performance.now();
  let [run0, wait0] = read();
  const tick = setInterval(() => {
    const now = performance.now();
    const [run, wait] = read();
    const turnMs = now - last;
    // `monotonicUs`: the clock a V8 CPU profile (--cpu-prof) stamps its samples with
    if (turnMs >= 10) {
      lines.push(JSON.stringify({ at: Date.now(), monotonicUs: Number(process.hrtime.bigint() / 1000n), turnMs, runMs: (run - run0) / 1e6, waitMs: (wait - wait0) / 1e6 }));
    }
    last = now;
    run0 = run;
    wait0 = wait;
  }, 1);
  tick.unref();
  const flush = () => {
    if (lines.length === 0) return;
    fs.appendFileSync(file, `${lines.join('\n')}\n`);
    lines = [];
  };
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
