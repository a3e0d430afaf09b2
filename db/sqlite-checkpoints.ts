import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the write-ahead log is copied back into the database file. */
const CHECKPOINT_EVERY_MS = 1_000;

/** A log file this large is made to start again from its beginning (see BODY). */
const RESTART_ABOVE_BYTES = 64 * 1024 * 1024;

// The thread's whole body: its own connection to the file and a passive checkpoint on a timer (it
// never waits on a writer, and skips what a reader still needs), closed when told to. Under a
// steady stream of writes a passive checkpoint never catches up with the log's end, so the log
// never starts again from its beginning: a chat import of 6 000 lines grew it to 650 MB. Once
// the log file is larger than RESTART_ABOVE_BYTES, a restarting checkpoint follows the passive
// one: it copies the few frames written since, holding writers off for that long, and lets the
// next write start the log afresh (the file keeps its size and is written over). It waits for
// nobody (no busy timeout): with a write or a reader in the way, the next tick tries again.
const BODY = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename);
db.pragma('busy_timeout = 0');
const logSize = () => { try { return fs.statSync(workerData.filename + '-wal').size; } catch { return 0; } };
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    if (logSize() > workerData.restartAbove) db.pragma('wal_checkpoint(RESTART)');
  } catch { /* busy or gone: the next tick tries again */ }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(PASSIVE)'); db.close(); } catch { /* closed with the process */ }
  parentPort.close();
});
`;

/**
 * Checkpoints a SQLite database's write-ahead log on a thread of its own. SQLite's automatic
 * checkpoint runs inside the COMMIT of whichever write crosses 1 000 pages, on the event loop
 * (better-sqlite3 is synchronous): after one batch of 1 000 long memories the COMMIT took 1.2 s,
 * all of it copying the log into the file, and /healthz waited that long. The server's own
 * connection turns the automatic checkpoint off (`wal_autocheckpoint = 0`) and this thread does
 * it instead. `stop` ends the thread after a last checkpoint. `everyMs` and `restartAboveBytes`
 * are for tests.
 */
export function startCheckpoints(filename: string, options: { everyMs?: number; restartAboveBytes?: number } = {}): { stop(): Promise<void> } {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const workerData = { filename, driver, everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS, restartAbove: options.restartAboveBytes ?? RESTART_ABOVE_BYTES };
  const worker = new Worker(BODY, { eval: true, workerData });
  worker.unref();
  // a thread that cannot open the file only means the log is checkpointed when the last connection closes
  worker.on('error', () => undefined);
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
        // bounded: a thread stuck on a busy file is ended
        setTimeout(() => void worker.terminate(), 5_000).unref();
      });
      return stopped;
    },
  };
}
