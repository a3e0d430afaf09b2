/**
 * Long work on the event loop, done a slice at a time with the loop free between slices.
 *
 * `nextTurn()` resolves in a later turn of the loop, after the timers and I/O due before it. All
 * the work that slices itself with it shares one queue: callers waiting at once resume one a turn,
 * in the order they came. Eight requests importing at once, each yielding between its statements,
 * then hold a turn for one slice, not eight — with a plain `setImmediate` each, their slices all
 * land in the same check phase and the turn is as long as all of them together.
 *
 * `sliced()` lets the loop turn only once the slice running has had `SLICE_MS`: for steps that
 * are usually short (a statement on SQLite, which runs on the event loop) but chain into long
 * runs of synchronous work.
 */

/** How long a slice of work may hold the event loop before `sliced()` lets it turn. */
export const SLICE_MS = 8;

const waiting: Array<() => void> = [];
let due = false;
/** When the slice now running began: the last resumption, or the last `sliced()` that found none running. */
let sliceStart = -Infinity;

function resumeNext(): void {
  const resume = waiting.shift() as () => void;
  // queued while the check phase runs, the next one runs in the next turn, after its I/O
  if (waiting.length > 0) setImmediate(resumeNext);
  else due = false;
  sliceStart = performance.now();
  // its slice runs in the microtasks that follow this callback, before the next immediate
  resume();
}

/** Resolves in a later turn of the event loop, after every slice that was waiting before it. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!due) {
      due = true;
      setImmediate(resumeNext);
    }
  });
}

/**
 * Goes on at once while the slice running is under `SLICE_MS`; past it, waits for the next turn
 * (`nextTurn`). A slice is timed from the last resumption: work that began since in an I/O
 * callback is counted from earlier than it began, so it may give up its turn sooner than it had to,
 * never later.
 */
export function sliced(): Promise<void> | undefined {
  if (performance.now() - sliceStart < SLICE_MS) return undefined;
  return nextTurn();
}
