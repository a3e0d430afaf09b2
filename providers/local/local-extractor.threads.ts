import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../../lib/errors.js';
import { siblingModule } from '../../lib/modules.js';
import type { Decision, ExtractionInput, ExtractionMessage, ExtractionSchema, Extractor, FactCandidates } from '../extractor.js';
import type { ExtractorTask } from './local-extractor.worker.js';

/** Linux nice steps the extraction threads give up, so the thread answering requests runs first. */
const NICE_INCREMENT = 10;
/** Heap of an extraction thread: a call that needs more ends that thread, not the process. */
const HEAP_MB = 512;

/**
 * The local language model (`local`) run on worker threads (`local-extractor.worker.ts`), so that
 * its rules, whose work grows with a schema's fields and enum members and the text's clauses,
 * never hold the event loop that answers requests, renews job locks and indexes memories. Each
 * call has `deadlineMs` from the moment a thread takes it: past it, the thread is ended (Piscina
 * starts another) and the call fails for good with a 422 that says why, so its job is never
 * handed on to freeze another worker. Calls beyond the threads wait their turn without their
 * deadline running.
 */
export class LocalExtractorThreads implements Extractor {
  readonly model = 'local';
  private pool: Piscina<ExtractorTask, unknown> | null = null;
  private readonly threads = Math.max(1, os.availableParallelism() - 1);
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  /** A first call without a deadline, on a thread that has just started (see `started`). */
  private warm: Promise<unknown> | null = null;

  constructor(private readonly deadlineMs: number) {}

  extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>> {
    return this.run({ op: 'extract', schema, input }, 'extracting values') as Promise<Record<string, unknown>>;
  }

  facts(messages: readonly ExtractionMessage[]): Promise<string[]> {
    return this.run({ op: 'facts', messages }, 'picking facts') as Promise<string[]>;
  }

  decide(facts: readonly FactCandidates[]): Promise<Decision[]> {
    return this.run({ op: 'decide', facts }, 'deciding what the facts change') as Promise<Decision[]>;
  }

  /** Ends the threads; calls under way are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    this.warm = null;
    for (const wake of this.waiting.splice(0)) wake();
    await pool?.destroy();
  }

  private async run(task: ExtractorTask, what: string): Promise<unknown> {
    await this.turn();
    try {
      if (this.closed) throw new Error('The local language model was closed.');
      await this.started();
      return await this.threadPool().run(task, { signal: AbortSignal.timeout(this.deadlineMs) });
    } catch (err) {
      if ((err as { name?: unknown }).name === 'AbortError') {
        // the ended thread's replacement starts before the next call's deadline begins
        this.warm = null;
        throw new AppError(
          422,
          'extraction_deadline',
          `The local language model did not finish ${what} within ${this.deadlineMs / 1000} s (LOCAL_MODEL_DEADLINE_MS); send a smaller schema (fewer fields or enum members) or less text.`,
        );
      }
      if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new AppError(422, 'extraction_too_large', `The local language model needed more than ${HEAP_MB} MB for ${what}; send a smaller schema or less text.`);
      }
      throw err;
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /**
   * Waits until a thread has started and loaded the model's code (seconds on a busy machine, with
   * no deadline), so that a call's deadline measures its own work only.
   */
  private started(): Promise<unknown> {
    this.warm ??= this.threadPool()
      .run({ op: 'facts', messages: [] })
      .catch(() => undefined);
    return this.warm;
  }

  /** Waits until fewer calls than threads run, so a call's deadline starts when a thread takes it. */
  private turn(): Promise<void> {
    if (this.running < this.threads) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.running += 1;
        resolve();
      }),
    );
  }

  private threadPool(): Piscina<ExtractorTask, unknown> {
    if (this.pool === null) {
      this.pool = new Piscina<ExtractorTask, unknown>({
        filename: fileURLToPath(siblingModule(import.meta.url, 'local-extractor.worker')),
        // threads stay (and one that ends is replaced at once), so calls seldom wait for a start
        minThreads: this.threads,
        maxThreads: this.threads,
        niceIncrement: NICE_INCREMENT,
        resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
      });
      // a thread that dies between tasks is replaced; unheard, the pool's error would end the process
      this.pool.on('error', () => undefined);
    }
    return this.pool;
  }
}
