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
export interface CoalescerOptions {
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
}

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

  constructor(
    private readonly call: (context: C, items: T[]) => Promise<R[]>,
    private readonly options: CoalescerOptions,
  ) {}

  submit(group: string, context: C, items: T[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      let entry = this.groups.get(group);
      if (entry === undefined) {
        entry = { context, waiting: [] };
        this.groups.set(group, entry);
      }
      entry.waiting.push({ items, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.parallel && this.groups.size > 0) {
      const key = this.options.next ? this.options.next([...this.groups.keys()]) : (this.groups.keys().next().value as string);
      const group = this.groups.get(key) as Group<C, T, R>;
      const taken: Array<Waiting<T, R>> = [];
      let size = 0;
      while (group.waiting.length > 0 && (taken.length === 0 || size + (group.waiting[0] as Waiting<T, R>).items.length <= this.options.maxBatch)) {
        const next = group.waiting.shift() as Waiting<T, R>;
        taken.push(next);
        size += next.items.length;
      }
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
}
