import type { Embedder, InputType } from './embedder.js';

interface Waiting {
  texts: string[];
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

/**
 * Coalesces concurrent `embed` calls into provider calls of up to `maxBatch` texts. While
 * `parallel` calls are in flight, new texts wait; when one finishes, everything waiting (up to a
 * batch) goes in the next call. An idle embedder adds no delay; a busy one (many jobs embedding
 * one record each) batches by itself, which is where the throughput of batch 32 comes from.
 */
export class BatchingEmbedder implements Embedder {
  private readonly waiting: Record<InputType, Waiting[]> = { document: [], query: [] };
  private inFlight = 0;

  constructor(
    private readonly inner: Embedder,
    /** Provider calls at once: 1 for an in-process model (it already uses every core), more for remote ones. */
    private readonly parallel: number,
  ) {}

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
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting[inputType].push({ texts, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.parallel) {
      // queries first: a person is waiting on those
      const type: InputType | null = this.waiting.query.length > 0 ? 'query' : this.waiting.document.length > 0 ? 'document' : null;
      if (type === null) return;
      const queue = this.waiting[type];
      const taken: Waiting[] = [];
      let size = 0;
      while (queue.length > 0 && (taken.length === 0 || size + (queue[0] as Waiting).texts.length <= this.inner.maxBatch)) {
        const next = queue.shift() as Waiting;
        taken.push(next);
        size += next.texts.length;
      }
      this.inFlight += 1;
      this.inner
        .embed(
          taken.flatMap((w) => w.texts),
          type,
        )
        .then(
          (vectors) => {
            let offset = 0;
            for (const w of taken) {
              w.resolve(vectors.slice(offset, offset + w.texts.length));
              offset += w.texts.length;
            }
          },
          (err: unknown) => {
            for (const w of taken) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
