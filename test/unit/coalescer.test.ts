import { expect } from 'chai';
import { Coalescer } from '../../lib/coalescer.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescer', () => {
  it('never mixes groups in one call, and calls each group with its own context', async () => {
    const calls: Array<{ context: string; items: number[] }> = [];
    const release: Array<() => void> = [];
    const coalescer = new Coalescer<string, number, number>(
      async (context, items) => {
        calls.push({ context, items });
        await new Promise<void>((resolve) => release.push(resolve));
        return items.map((n) => n * 10);
      },
      { maxBatch: 10, parallel: 1 },
    );
    const first = coalescer.submit('a', 'ctx-a', [1]);
    const b = coalescer.submit('b', 'ctx-b', [2]);
    const a = coalescer.submit('a', 'ctx-a', [3, 4]);
    const b2 = coalescer.submit('b', 'ctx-b', [5]);
    await tick();
    release.shift()?.();
    expect(await first).to.deep.equal([10]);
    await tick();
    release.shift()?.();
    await tick();
    release.shift()?.();
    expect(await Promise.all([b, a, b2])).to.deep.equal([[20], [30, 40], [50]]);
    expect(calls).to.deep.equal([
      { context: 'ctx-a', items: [1] },
      { context: 'ctx-b', items: [2, 5] },
      { context: 'ctx-a', items: [3, 4] },
    ]);
  });
});
