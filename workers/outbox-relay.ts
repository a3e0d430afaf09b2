import type { OutboxEntry, OutboxRepository } from '../db/repositories/outbox.repository.js';
import type { Logger } from '../lib/logger.js';
import { nowMs } from '../lib/time.js';
import { Coalescer } from '../lib/coalescer.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';

export interface RelayOptions {
  pollMs: number;
  batchSize: number;
  /** How long a claimed entry is reserved for this relay before another may take it. */
  leaseMs: number;
  /** Ceiling of the retry delay while the queue is unreachable. */
  maxBackoffMs: number;
}

/** Delivered entries deleted in one statement at most. */
const COMPLETE_BATCH = 1000;

const DEFAULTS: RelayOptions = { pollMs: 500, batchSize: 500, leaseMs: 5 * 60_000, maxBackoffMs: 10_000 };

/**
 * Moves outbox entries to the queue in batches: a pass claims up to `batchSize` due entries in one
 * transaction, hands their jobs to the queue together, and deletes the entries whose jobs the queue
 * holds in one statement. An entry is deleted only after the driver has taken its job, so a queue
 * outage delays work and loses none; while the queue is down each entry backs off exponentially.
 * Entries this process writes are handed to it on commit (`handOff`) and delivered the same way
 * without a claim; `kick()` runs a pass at once.
 */
export class OutboxRelay {
  private readonly options: RelayOptions;
  /** Entries claimed by this relay whose delivery has not finished. */
  private readonly inFlight = new Set<number>();
  private readonly deliveries = new Set<Promise<void>>();
  /** Deletes of delivered entries, those finishing together in one statement (many writes hand off at once). */
  private readonly completions: Coalescer<string, OutboxEntry, undefined>;
  private timer: NodeJS.Timeout | null = null;
  private passing: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly queue: QueueDriver,
    private readonly log: Logger,
    options: Partial<RelayOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.completions = new Coalescer(
      async (_all, entries) => {
        await this.outbox.complete(entries);
        return entries.map(() => undefined);
      },
      { maxBatch: COMPLETE_BATCH, parallel: 1 },
    );
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Runs a pass now (coalesced with one already running). */
  kick(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass().finally(() => {
      this.passing = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  /**
   * Delivers entries this process has just committed, leased to it (`OutboxRepository.add`): no
   * claim, the same delivery as a pass's. A relay not running frees them for any relay instead.
   */
  handOff(entries: OutboxEntry[]): void {
    if (this.stopped) {
      this.outbox.release(entries.map((e) => e.id), 'written while this process did not relay', nowMs()).catch((err: unknown) => {
        // the lease ends on its own, so another relay takes them a little later
        this.log.warn({ err }, 'could not free outbox entries for other relays');
      });
      return;
    }
    void this.deliver(entries);
  }

  /** Stops polling and waits for dispatches in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.passing;
    await Promise.allSettled([...this.deliveries]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.kick();
      this.schedule();
    }, this.options.pollMs);
    this.timer.unref();
  }

  /** Claims a batch and waits until the queue has taken its jobs (BullMQ: stored in Redis); their entries are deleted after. */
  private async pass(): Promise<void> {
    let entries: OutboxEntry[];
    try {
      entries = await this.outbox.claim(this.options.batchSize, this.options.leaseMs, this.inFlight);
    } catch (err) {
      this.log.warn({ err }, 'outbox relay could not read the outbox; will retry');
      return;
    }
    if (entries.length === 0) return;
    // A full batch means more may be waiting: go again without waiting for the timer.
    if (entries.length === this.options.batchSize) this.again = true;
    await this.deliver(entries);
  }

  /**
   * Hands the entries' jobs to the queue, kept in flight (no pass claims them again, `stop` waits
   * for them) until their delivery has settled. Resolves once the queue has taken the jobs.
   */
  private deliver(entries: OutboxEntry[]): Promise<void> {
    for (const entry of entries) this.inFlight.add(entry.id);
    const { taken, settled } = this.dispatch(entries);
    const delivery = settled.finally(() => {
      for (const entry of entries) this.inFlight.delete(entry.id);
      this.deliveries.delete(delivery);
    });
    this.deliveries.add(delivery);
    return taken;
  }

  /**
   * Hands the entries' jobs to the queue; once all are safe there (BullMQ: at once; in-process:
   * when the batch's last job has finished), deletes them in one statement, and releases for a
   * retry those whose jobs the queue did not take.
   */
  private dispatch(entries: OutboxEntry[]): { taken: Promise<void>; settled: Promise<void> } {
    const dispatched = this.queue.dispatchMany(entries.map((e) => e.envelope));
    const settled = (async () => {
      let outcomes: Array<Promise<void>>;
      try {
        outcomes = await dispatched;
      } catch (err) {
        await this.release(entries, err);
        return;
      }
      const results = await Promise.allSettled(outcomes);
      const failed = entries.filter((_, i) => results[i]?.status === 'rejected');
      const done = entries.filter((_, i) => results[i]?.status === 'fulfilled');
      await this.completions.submit('', '', done).catch((err: unknown) => {
        // The jobs are queued; a leftover entry only re-dispatches an idempotent job later.
        this.log.warn({ err, entries: done.length }, 'could not delete delivered outbox entries');
      });
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (rejected) await this.release(failed, rejected.reason);
    })();
    return { taken: dispatched.then(() => undefined, () => undefined), settled };
  }

  /** Keeps the entries for a retry, each after its own exponential backoff. */
  private async release(entries: OutboxEntry[], err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const byDelay = new Map<number, number[]>();
    for (const entry of entries) {
      const delay = Math.min(this.options.maxBackoffMs, 250 * 2 ** Math.min(entry.attempts, 16));
      const ids = byDelay.get(delay) ?? [];
      ids.push(entry.id);
      byDelay.set(delay, ids);
    }
    const first = entries[0] as OutboxEntry;
    this.log.warn(
      { jobs: entries.length, job: first.envelope.name, jobId: first.envelope.jobId, attempts: first.attempts, retryInMs: Math.min(...byDelay.keys()), error: message },
      'queue did not accept jobs; outbox entries kept for retry',
    );
    for (const [delay, ids] of byDelay) {
      await this.outbox.release(ids, message, nowMs() + delay).catch((releaseErr: unknown) => {
        // The lease expires on its own, so the entries are retried even if this write fails.
        this.log.warn({ err: releaseErr }, 'could not release outbox entries');
      });
    }
  }
}
