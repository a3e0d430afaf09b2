import { expect } from 'chai';
import { BatchingEmbedder } from '../../providers/batching.embedder.js';
import type { Embedder, InputType } from '../../providers/embedder.js';

/** An embedder whose vector for a text is [text length]; it records every call it gets. */
class Recording implements Embedder {
  readonly model = 'test/len';
  readonly maxBatch = 4;
  readonly calls: Array<{ texts: string[]; type: InputType }> = [];
  private release: Array<() => void> = [];

  dimension(): Promise<number> {
    return Promise.resolve(1);
  }

  async embed(texts: string[], type: InputType): Promise<Float32Array[]> {
    this.calls.push({ texts, type });
    if (texts.includes('boom')) throw new Error('provider down');
    await new Promise<void>((resolve) => this.release.push(resolve));
    return texts.map((t) => Float32Array.of(t.length));
  }

  /** Lets the oldest pending call finish. */
  finishOne(): void {
    this.release.shift()?.();
  }
}

const lengths = (vectors: Float32Array[]) => vectors.map((v) => v[0]);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('batching embedder', () => {
  it('sends the first call at once and batches what arrives while it runs, up to maxBatch', async () => {
    const inner = new Recording();
    const batching = new BatchingEmbedder(inner, 1);
    const first = batching.embed(['a'], 'document');
    const rest = ['bb', 'ccc', 'dddd', 'eeeee', 'ffffff'].map((t) => batching.embed([t], 'document'));
    await tick();
    expect(inner.calls.map((c) => c.texts)).to.deep.equal([['a']]);
    inner.finishOne();
    expect(lengths(await first)).to.deep.equal([1]);
    await tick();
    expect(inner.calls.map((c) => c.texts)).to.deep.equal([['a'], ['bb', 'ccc', 'dddd', 'eeeee']]);
    inner.finishOne();
    await tick();
    inner.finishOne();
    const results = await Promise.all(rest);
    expect(results.map(lengths)).to.deep.equal([[2], [3], [4], [5], [6]]);
    expect(inner.calls.map((c) => c.texts)).to.deep.equal([['a'], ['bb', 'ccc', 'dddd', 'eeeee'], ['ffffff']]);
  });

  it('serves waiting queries before documents, and fails only the callers of a failed call', async () => {
    const inner = new Recording();
    const batching = new BatchingEmbedder(inner, 1);
    const busy = batching.embed(['x'], 'document');
    const doc = batching.embed(['boom'], 'document');
    const query = batching.embed(['q'], 'query');
    await tick();
    inner.finishOne();
    await busy;
    await tick();
    expect(inner.calls[1]).to.deep.include({ type: 'query', texts: ['q'] });
    inner.finishOne();
    expect(lengths(await query)).to.deep.equal([1]);
    let failed: unknown;
    await doc.catch((err: unknown) => (failed = err));
    expect((failed as Error).message).to.equal('provider down');
  });
});
