interface Waiting<T, R> {
  items: T[];
  resolve: (results: R[]) => void;
  reject: (err: unknown) => void;
}

interface Group<C, T, R> {
  context: C;
  waiting: Array<Waiting<T, R>>;
}

/** How a `Coalescer` batches. */
export interface CoalescerOptions<T = unknown> {
  /** Most items in one call (a single larger submission still goes alone, whole). */
  maxBatch: number;
  /** Calls in flight at once. */
  parallel: number;
  /** Which waiting group goes next; default: the group that has waited longest. */
  next?: (groups: string[]) => string;
  /**
   * Whether a failed call of several submissions is tried again one submission at a time, so an
   * error that blames one submission's items (e.g. a rejected input) fails only that submission.
   * Default: never; every submission of the call gets the call's error.
   */
  isolate?: (err: unknown) => boolean;
  /**
   * When more is waiting in a group than one call takes: a measure of an item (e.g. a text's
   * length) by which the oldest submission goes with the waiting submissions nearest to it, among
   * the next `SIMILAR_WINDOW` batches' worth, instead of with the next ones in order. A model pads
   * every text of a batch to its longest, so a batch of like lengths wastes little. The oldest
   * submission always goes, so none waits for ever.
   */
  similar?: (item: T) => number;
  /**
   * Whether a submission waits for the end of the event loop's turn before a call takes it, so the
   * submissions of one turn go together even while a call slot is free (jobs that one model batch
   * resumed at once: one call for them all rather than one for the first, one for the second and
   * one for the rest). A turn is no time for background work; leave it off where a person waits.
   */
  gather?: boolean;
  /**
   * Group commit under load: while the last call took several submissions (clients are writing
   * at once), a submission that finds a call slot free waits up to `ms` for others to join it,
   * unless `items` are waiting sooner. Fewer, fuller calls cost less in all than many small ones
   * where each call has a fixed cost (a transaction's statements and commit, a job); a lone
   * client, whose calls take one submission each, never waits, nor does a call already holding `items`.
   */
  linger?: { ms: number; items: number };
}

/** How many batches' worth of waiting submissions `similar` chooses among. */
const SIMILAR_WINDOW = 8;

/**
 * Coalesces concurrent submissions into calls of up to `maxBatch` items. While `parallel` calls
 * are in flight, new submissions wait; when one finishes, everything waiting in one group (up to
 * a batch) goes in the next call. An idle coalescer adds no delay; a busy one (many jobs handing
 * in one item each) batches by itself. Submissions group by a key (calls never mix groups), and
 * each group carries the context of its first submission for the call (e.g. a collection).
 * Every submission gets back its own slice of the call's results, or the call's error (with
 * `isolate`, its own call's error when the shared call failed for an isolated reason).
 */
export class Coalescer<C, T, R> {
  private readonly groups = new Map<string, Group<C, T, R>>();
  private inFlight = 0;
  /** A pump is due at the end of this turn (`gather`). */
  private gathering = false;
  /** The last call took more than one submission (`linger`). */
  private shared = false;
  /** The wait of `linger` in progress. */
  private lingering: NodeJS.Timeout | null = null;

  constructor(
    private readonly call: (context: C, items: T[]) => Promise<R[]>,
    private readonly options: CoalescerOptions<T>,
  ) {}

  submit(group: string, context: C, items: T[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    const submitted = this.enqueue(group, context, items);
    this.submitted();
    return submitted;
  }

  /**
   * Each item a submission of its own, all waiting before any call goes: the calls they make are
   * full (none goes alone because it came first), and with `similar`, an item may go with like
   * items of other submissions.
   */
  async submitEach(group: string, context: C, items: T[]): Promise<R[]> {
    const submitted = items.map((item) => this.enqueue(group, context, [item]));
    this.submitted();
    return (await Promise.all(submitted)).flat();
  }

  private enqueue(group: string, context: C, items: T[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      let entry = this.groups.get(group);
      if (entry === undefined) {
        entry = { context, waiting: [] };
        this.groups.set(group, entry);
      }
      entry.waiting.push({ items, resolve, reject });
    });
  }

  /** Calls for what was just submitted: now, or with `gather` once the turn's submissions are in. */
  private submitted(): void {
    const { linger } = this.options;
    if (linger !== undefined && this.shared && this.inFlight < this.options.parallel && this.waitingItems() < Math.min(linger.items, this.options.maxBatch)) {
      this.lingering ??= setTimeout(() => this.pump(), linger.ms);
      return;
    }
    if (!this.options.gather) {
      this.pump();
      return;
    }
    if (this.gathering) return;
    this.gathering = true;
    setImmediate(() => {
      this.gathering = false;
      this.pump();
    });
  }

  private waitingItems(): number {
    let n = 0;
    for (const group of this.groups.values()) for (const w of group.waiting) n += w.items.length;
    return n;
  }

  private pump(): void {
    if (this.lingering !== null) {
      clearTimeout(this.lingering);
      this.lingering = null;
    }
    while (this.inFlight < this.options.parallel && this.groups.size > 0) {
      const key = this.options.next ? this.options.next([...this.groups.keys()]) : (this.groups.keys().next().value as string);
      const group = this.groups.get(key) as Group<C, T, R>;
      const taken = this.take(group);
      this.shared = taken.length > 1;
      // a drained group leaves the map, so the next submission to it starts a fresh one (new context)
      if (group.waiting.length === 0) this.groups.delete(key);
      this.inFlight += 1;
      this.call(
        group.context,
        taken.flatMap((w) => w.items),
      )
        .then(
          (results) => {
            let offset = 0;
            for (const w of taken) {
              w.resolve(results.slice(offset, offset + w.items.length));
              offset += w.items.length;
            }
          },
          async (err: unknown) => {
            if (taken.length === 1 || !this.options.isolate?.(err)) {
              for (const w of taken) w.reject(err);
              return;
            }
            // one at a time, in the same slot: only the submissions that fail alone get an error
            for (const w of taken) await this.call(group.context, w.items).then(w.resolve, w.reject);
          },
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }

  /** The submissions of a group's next call, taken off its waiting list: in order, or (`similar`, more waiting than a call takes) the oldest and those nearest it. */
  private take(group: Group<C, T, R>): Array<Waiting<T, R>> {
    const { maxBatch, similar } = this.options;
    const waiting = group.waiting;
    const oldest = waiting[0] as Waiting<T, R>;
    const taken = [oldest];
    let size = oldest.items.length;
    const window = waiting.slice(1, 1 + maxBatch * SIMILAR_WINDOW);
    if (similar === undefined || window.reduce((n, w) => n + w.items.length, size) <= maxBatch) {
      // in order: a call stops at the first submission that does not fit
      while (taken.length < waiting.length && size + (waiting[taken.length] as Waiting<T, R>).items.length <= maxBatch) {
        size += (waiting[taken.length] as Waiting<T, R>).items.length;
        taken.push(waiting[taken.length] as Waiting<T, R>);
      }
      waiting.splice(0, taken.length);
      return taken;
    }
    for (const w of nearest(window, oldest, similar)) {
      if (size >= maxBatch) break;
      if (size + w.items.length > maxBatch) continue;
      taken.push(w);
      size += w.items.length;
    }
    const chosen = new Set(taken);
    group.waiting = waiting.filter((w) => !chosen.has(w));
    return taken;
  }
}

/** `waiting` by nearness to `oldest` in `measure` (a submission: its largest item), ties in order. */
function nearest<T, R>(waiting: Array<Waiting<T, R>>, oldest: Waiting<T, R>, measure: (item: T) => number): Array<Waiting<T, R>> {
  const of = (w: Waiting<T, R>) => Math.max(...w.items.map(measure));
  const around = of(oldest);
  return waiting
    .map((w, at) => ({ w, at, distance: Math.abs(of(w) - around) }))
    .sort((a, b) => a.distance - b.distance || a.at - b.at)
    .map(({ w }) => w);
}
