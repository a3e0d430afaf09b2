import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { isSource } from '../../lib/modules.js';
import type { EmbedTask, Embedded, ModelThreadOptions, ModelThreadReply, ModelThreadRequest } from './local-model.worker.js';

export type { EmbedTask } from './local-model.worker.js';

/**
 * Priority the model threads give up to the rest of the process (Linux nice steps): on a machine
 * as busy as its cores, the thread that answers HTTP requests runs first and the model takes the
 * remaining CPU.
 */
const NICE_INCREMENT = 10;

/** The message a batch is refused with once the pool is closing. */
const CLOSED = 'The local model thread was closed.';

/**
 * A thread's entry file. Compiled (dist/), the worker's own JavaScript. From the sources, a
 * CommonJS file that requires the TypeScript one: Node reads a worker's entry file before the
 * loader the process was started with (`--import tsx`) applies to the thread.
 */
const THREAD_ENTRY = isSource(import.meta.url)
  ? new URL('./local-model.thread.cjs', import.meta.url)
  : new URL('./local-model.worker.js', import.meta.url);

/** A batch's vectors and the thread that made them. */
export interface PoolResult extends Embedded {
  /** The thread's number in this pool (1, 2, …; a thread started to replace one that died gets a new one). */
  thread: number;
}

interface Batch {
  task: EmbedTask;
  resolve: (result: PoolResult) => void;
  reject: (err: Error) => void;
}

interface ModelThread {
  id: number;
  worker: Worker;
  /** The batch the thread is running; null while it waits for one. */
  batch: Batch | null;
  /** Settles when the thread has ended. */
  exited: Promise<void>;
}

/**
 * The worker threads that run local embedding models (`local-model.worker.ts`): up to `threads`
 * of them, started as batches queue up, each with its own loaded model and `cores / threads`
 * onnxruntime threads, so together they use every core and no more. A thread runs one batch at
 * a time; batches wait here, in the order posted, for the first free thread. The model's CPU work
 * never runs on the event loop that serves requests. `close()` ends the pool for good.
 */
export class LocalModelPool {
  private readonly running: ModelThread[] = [];
  private readonly queue: Batch[] = [];
  private readonly intraOpThreads: number;
  private started = 0;
  private closed = false;
  private ended: Promise<void> | null = null;

  constructor(
    /** Model threads at most (`LOCAL_EMBED_THREADS`). */
    readonly threads: number,
    cores = os.availableParallelism(),
  ) {
    this.intraOpThreads = Math.max(1, Math.floor(cores / threads));
  }

  /** True once `close()` was called. */
  get closing(): boolean {
    return this.closed;
  }

  /** Runs one batch on the first free thread. */
  run(task: EmbedTask): Promise<PoolResult> {
    if (this.closed) return Promise.reject(new Error(CLOSED));
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Ends the threads: batches still queued are rejected; each thread finishes the batch it runs
   * (or the model it loads), releases its onnxruntime sessions and ends by itself. Never
   * `worker.terminate()`: onnxruntime can abort the whole process when a thread is terminated in
   * the middle of a batch. Later calls return the first call's promise.
   */
  close(): Promise<void> {
    this.ended ??= this.end();
    return this.ended;
  }

  private async end(): Promise<void> {
    this.closed = true;
    for (const batch of this.queue.splice(0)) batch.reject(new Error(CLOSED));
    for (const thread of this.running) thread.worker.postMessage({ kind: 'close' } satisfies ModelThreadRequest);
    await Promise.all(this.running.map((thread) => thread.exited));
  }

  /** Hands queued batches to free threads, starting threads while there are fewer than `threads`. */
  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const thread = this.running.find((t) => t.batch === null) ?? (this.running.length < this.threads ? this.start() : null);
      if (thread === null) return;
      const batch = this.queue.shift() as Batch;
      thread.batch = batch;
      thread.worker.postMessage({ kind: 'embed', task: batch.task } satisfies ModelThreadRequest);
    }
  }

  private start(): ModelThread {
    const worker = new Worker(THREAD_ENTRY, {
      workerData: { intraOpThreads: this.intraOpThreads, niceIncrement: NICE_INCREMENT } satisfies ModelThreadOptions,
    });
    let ended: () => void = () => undefined;
    this.started += 1;
    const thread: ModelThread = { id: this.started, worker, batch: null, exited: new Promise((resolve) => (ended = resolve)) };
    worker.on('message', (reply: ModelThreadReply) => {
      const batch = thread.batch;
      thread.batch = null;
      if (reply.ok) batch?.resolve({ data: reply.data, loadMs: reply.loadMs, thread: thread.id });
      else batch?.reject(new Error(reply.message));
      this.dispatch();
    });
    // a thread that fails (out of memory, a crash in its code) fails its batch; the next batch starts another
    worker.on('error', (err) => {
      thread.batch?.reject(err);
      thread.batch = null;
    });
    worker.on('exit', () => {
      thread.batch?.reject(new Error(this.closed ? CLOSED : 'The local model thread ended unexpectedly.'));
      thread.batch = null;
      this.running.splice(this.running.indexOf(thread), 1);
      ended();
      this.dispatch();
    });
    this.running.push(thread);
    return thread;
  }
}
