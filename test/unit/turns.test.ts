import { expect } from 'chai';
import { nextTurn, sliced, SLICE_MS } from '../../lib/turns.js';

/** Counts the event loop's turns: a timer ticking through them, one a turn at most. */
function turnCounter(): { turns: () => number; stop: () => void } {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    turns += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => (running = false) };
}

describe('turns', () => {
  it('resumes callers waiting at once one a turn, in the order they came, with timers and I/O between', async () => {
    const order: string[] = [];
    const turnOf: number[] = [];
    const counter = turnCounter();
    let timerRan = -1;
    // eight "requests", each three slices of work with a turn between
    const requests = Array.from({ length: 8 }, async (_, r) => {
      for (let slice = 0; slice < 3; slice += 1) {
        await nextTurn();
        order.push(`${r}.${slice}`);
        turnOf.push(counter.turns());
        const start = performance.now();
        while (performance.now() - start < 0.3); // the slice's work
      }
    });
    setTimeout(() => (timerRan = order.length), 0);
    await Promise.all(requests);
    counter.stop();
    // round robin: every request's first slice before any second one
    expect(order.slice(0, 8)).to.deep.equal(['0.0', '1.0', '2.0', '3.0', '4.0', '5.0', '6.0', '7.0']);
    expect(order.slice(8, 16)).to.deep.equal(['0.1', '1.1', '2.1', '3.1', '4.1', '5.1', '6.1', '7.1']);
    // never two slices in one turn: with a plain setImmediate, all eight would share one
    expect(new Set(turnOf).size).to.equal(24);
    // a timer due meanwhile ran between slices, long before the last one
    expect(timerRan).to.be.within(0, 16);
  });

  it('sliced() goes on in the same turn within a slice, and lets the loop turn past it', async () => {
    await nextTurn(); // a slice begins
    const counter = turnCounter();
    const before = counter.turns();
    await sliced();
    expect(counter.turns()).to.equal(before, 'a fresh slice goes on in the same turn');
    const start = performance.now();
    while (performance.now() - start < SLICE_MS + 1);
    await sliced();
    expect(counter.turns()).to.be.greaterThan(before, 'a spent slice lets the loop turn');
    counter.stop();
  });
});
