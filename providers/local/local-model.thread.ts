import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { EmbedTask } from './local-model.worker.js';

export type { EmbedTask } from './local-model.worker.js';

/**
 * Priority the model thread gives up to the rest of the process (Linux nice steps): on a machine
 * as busy as its cores, the thread that answers HTTP requests runs first and the model takes the
 * remaining CPU.
 */
const NICE_INCREMENT = 10;

/**
 * The worker thread that runs local embedding models (`local-model.worker.ts`): started on the
 * first batch, one model instance per thread, batches run one at a time in the order posted.
 * The model's CPU work never runs on the event loop that serves requests. `close()` ends the
 * thread for good; later batches are refused.
 */
export class LocalModelThread {
  private pool: Piscina<EmbedTask, Float32Array> | null = null;
  private closed = false;

  /** True once `close()` was called. */
  get closing(): boolean {
    return this.closed;
  }

  /** The batch's vectors back to back (`texts.length × dimension` floats). */
  run(task: EmbedTask): Promise<Float32Array> {
    if (this.closed) return Promise.reject(new Error('The local model thread was closed.'));
    if (this.pool === null) {
      this.pool = new Piscina<EmbedTask, Float32Array>({
        filename: fileURLToPath(new URL('./local-model.worker.ts', import.meta.url)),
        minThreads: 1,
        maxThreads: 1,
        // the loaded model lives as long as its thread: keep it
        idleTimeout: Number.POSITIVE_INFINITY,
        niceIncrement: NICE_INCREMENT,
      });
      // a thread that dies between batches is replaced; unheard, the pool's error would end the process
      this.pool.on('error', () => undefined);
    }
    return this.pool.run(task);
  }

  /**
   * Ends the thread: batches still queued are rejected, the one running is let finish first
   * (onnxruntime aborts the whole process when its thread is terminated in the middle of a run).
   */
  async close(): Promise<void> {
    const pool = this.pool;
    this.closed = true;
    if (pool === null) return;
    this.pool = null;
    await pool.close({ force: true });
  }
}
