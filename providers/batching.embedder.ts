import { Coalescer } from '../lib/coalescer.js';
import type { Embedder, InputType } from './embedder.js';

/**
 * Coalesces concurrent `embed` calls into provider calls of up to `maxBatch` texts (`Coalescer`),
 * queries before documents since a person is waiting on those. An idle embedder adds no delay; a
 * busy one (many jobs embedding one record each) batches by itself, which is where the
 * throughput of batch 32 comes from. Each text waits on its own, so that when more are waiting
 * than a call takes, texts of like length go together (a model pads a batch to its longest text:
 * one 2 KB answer among 31 short lines made the whole batch cost 32 long texts).
 */
export class BatchingEmbedder implements Embedder {
  private readonly calls: Coalescer<InputType, string, Float32Array>;

  constructor(
    private readonly inner: Embedder,
    /** Provider calls at once: one per model thread for an in-process model, more for remote ones. */
    parallel: number,
  ) {
    this.calls = new Coalescer((type, texts) => inner.embed(texts, type), {
      maxBatch: inner.maxBatch,
      parallel,
      next: (groups) => (groups.includes('query') ? 'query' : (groups[0] as string)),
      similar: (text) => text.length,
    });
  }

  get model(): string {
    return this.inner.model;
  }

  get maxBatch(): number {
    return this.inner.maxBatch;
  }

  dimension(): Promise<number> {
    return this.inner.dimension();
  }

  embed(texts: string[], inputType: InputType): Promise<Float32Array[]> {
    return this.calls.submitEach(inputType, inputType, texts);
  }
}
