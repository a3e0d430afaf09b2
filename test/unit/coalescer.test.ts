import { expect } from 'chai';
import { Coalescer, type CoalescerOptions } from '../../lib/coalescer.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A coalescer of numbers whose calls are recorded and each held until its `release` is called. */
function held(options: CoalescerOptions<number>, answer: (items: number[]) => number[]) {
  const calls: number[][] = [];
  const release: Array<() => void> = [];
  const coalescer = new Coalescer<null, number, number>(async (_, items) => {
    calls.push(items);
    await new Promise<void>((resolve) => release.push(resolve));
    return answer(items);
  }, options);
  return { calls, release, coalescer };
}

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

  it('with isolate, tries a batch that failed for an isolated reason one submission at a time: only the bad one fails', async () => {
    const calls: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const coalescer = new Coalescer<null, number, number>(
      async (_context, items) => {
        calls.push(items);
        if (calls.length === 1) await gate;
        if (items.includes(-1)) throw new Error(items.length > 1 ? 'rejected: batch' : 'rejected: -1');
        return items;
      },
      { maxBatch: 10, parallel: 1, isolate: (err) => err instanceof Error && err.message.startsWith('rejected') },
    );
    const first = coalescer.submit('g', null, [0]);
    const batch = [coalescer.submit('g', null, [1]), coalescer.submit('g', null, [-1]), coalescer.submit('g', null, [2, 3])];
    await tick();
    release();
    expect(await first).to.deep.equal([0]);
    const settled = await Promise.allSettled(batch);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).to.deep.equal([[1], 'rejected: -1', [2, 3]]);
    expect(calls).to.deep.equal([[0], [1, -1, 2, 3], [1], [-1], [2, 3]]);
  });

  it('without an isolated reason, fails every submission of the batch with the call\'s error', async () => {
    let calls = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const coalescer = new Coalescer<null, number, number>(
      async (_context, items) => {
        calls += 1;
        if (calls === 1) await gate;
        else throw new Error('store unavailable');
        return items;
      },
      { maxBatch: 10, parallel: 1, isolate: (err) => err instanceof Error && err.message.startsWith('rejected') },
    );
    const first = coalescer.submit('g', null, [0]);
    const batch = [coalescer.submit('g', null, [1]), coalescer.submit('g', null, [2])];
    await tick();
    release();
    await first;
    const settled = await Promise.allSettled(batch);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).to.deep.equal(['store unavailable', 'store unavailable']);
    expect(calls).to.equal(2);
  });

  it('with similar, sends the oldest waiting item with the items nearest it when more wait than a call takes, and each gets its own result', async () => {
    const { calls, release, coalescer } = held({ maxBatch: 3, parallel: 1, similar: (n) => n }, (items) => items.map((n) => -n));
    const busy = coalescer.submit('g', null, [0]);
    const lengths = [10, 900, 12, 880, 11, 950, 13];
    const waiting = lengths.map((n) => coalescer.submit('g', null, [n]));
    for (let i = 0; i <= lengths.length; i++) {
      await tick();
      release.shift()?.();
    }
    await busy;
    expect(await Promise.all(waiting)).to.deep.equal(lengths.map((n) => [-n]));
    // the oldest (10) goes first, with 11 and 12; then the oldest left (900) with its neighbours
    expect(calls).to.deep.equal([[0], [10, 11, 12], [900, 880, 950], [13]]);
  });

  it('with gather, sends the submissions of one turn together though call slots are free, and later ones in calls of their own', async () => {
    const calls: number[][] = [];
    const make = (gather: boolean) =>
      new Coalescer<null, number, number>(
        async (_, items) => {
          calls.push(items);
          await tick();
          return items.map((n) => n + 1);
        },
        { maxBatch: 10, parallel: 2, gather },
      );
    const together = make(true);
    const turn = [1, 2, 3, 4].map((n) => together.submit('g', null, [n]));
    expect(calls, 'nothing called before the turn ends').to.deep.equal([]);
    expect(await Promise.all(turn)).to.deep.equal([[2], [3], [4], [5]]);
    expect(await together.submit('g', null, [9])).to.deep.equal([10]);
    expect(calls).to.deep.equal([[1, 2, 3, 4], [9]]);
    // without it the first two take the free slots alone
    calls.length = 0;
    const apart = make(false);
    await Promise.all([1, 2, 3, 4].map((n) => apart.submit('g', null, [n])));
    expect(calls).to.deep.equal([[1], [2], [3, 4]]);
  });

  it('with linger, a lone client\'s submissions go at once; after a shared call, a submission waits for others to join it until enough items are waiting', async () => {
    // a linger of an hour: a test that waited for it would time out
    const { calls, release, coalescer } = held({ maxBatch: 10, parallel: 1, linger: { ms: 3_600_000, items: 4 } }, (items) => items);
    const settle = async (submitted: Promise<number[]>) => {
      await tick();
      release.shift()?.();
      return submitted;
    };
    // a lone client: each submission called as it comes
    await settle(coalescer.submit('g', null, [1]));
    coalescer.submit('g', null, [2]).catch(() => undefined);
    expect(calls, 'called without waiting').to.deep.equal([[1], [2]]);
    // clients at once: two wait for the call in flight and share the next
    const shared = [coalescer.submit('g', null, [3]), coalescer.submit('g', null, [4])];
    release.shift()?.();
    await tick();
    release.shift()?.();
    expect(await Promise.all(shared)).to.deep.equal([[3], [4]]);
    await tick();
    // now an idle coalescer lingers: a submission waits, and later ones join it …
    const later = [coalescer.submit('g', null, [5]), coalescer.submit('g', null, [6])];
    await tick();
    expect(calls.length, 'waiting for others').to.equal(3);
    // … until enough items are waiting
    later.push(coalescer.submit('g', null, [7, 8]));
    release.shift()?.();
    await tick();
    release.shift()?.();
    expect(await Promise.all(later)).to.deep.equal([[5], [6], [7, 8]]);
    await tick();
    // a submission that holds enough items goes at once
    coalescer.submit('g', null, [9, 10, 11, 12]).catch(() => undefined);
    expect(calls).to.deep.equal([[1], [2], [3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]);
    release.shift()?.();
  });
});
