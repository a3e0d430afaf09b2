import type { OutboxEntry, OutboxRepository } from '../db/repositories/outbox.repository.js';
import type { Logger } from '../lib/logger.js';
import { nowMs } from '../lib/time.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';

export interface RelayOptions {
  pollMs: number;
  batchSize: number;
  /** How long a claimed entry is reserved for this relay before another may take it. */
  leaseMs: number;
  /** Ceiling of the retry delay while the queue is unreachable. */
  maxBackoffMs: number;
}

const DEFAULTS: RelayOptions = { pollMs: 500, batchSize: 100, leaseMs: 5 * 60_000, maxBackoffMs: 10_000 };

/**
 * Moves outbox entries to the queue. An entry is deleted only after the driver has taken the job,
 * so a queue outage delays work and loses none; while the queue is down each entry backs off
 * exponentially. `kick()` runs a pass at once, for writes made by this process.
 */
export class OutboxRelay {
  private readonly options: RelayOptions;
  private readonly inFlight = new Map<number, Promise<void>>();
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

  /** Stops polling and waits for dispatches in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.passing;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.kick();
      this.schedule();
    }, this.options.pollMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    let entries: OutboxEntry[];
    try {
      entries = await this.outbox.claim(this.options.batchSize, this.options.leaseMs, new Set(this.inFlight.keys()));
    } catch (err) {
      this.log.warn({ err }, 'outbox relay could not read the outbox; will retry');
      return;
    }
    for (const entry of entries) {
      const delivery = this.deliver(entry).finally(() => this.inFlight.delete(entry.id));
      this.inFlight.set(entry.id, delivery);
    }
    // A full batch means more may be waiting: go again without waiting for the timer.
    if (entries.length === this.options.batchSize) this.again = true;
  }

  private async deliver(entry: OutboxEntry): Promise<void> {
    try {
      await this.queue.dispatch(entry.envelope);
    } catch (err) {
      const delay = Math.min(this.options.maxBackoffMs, 250 * 2 ** Math.min(entry.attempts, 16));
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn(
        { job: entry.envelope.name, jobId: entry.envelope.jobId, attempts: entry.attempts, retryInMs: delay, error: message },
        'queue did not accept job; outbox entry kept for retry',
      );
      await this.outbox.release(entry.id, message, nowMs() + delay).catch((releaseErr: unknown) => {
        // The lease expires on its own, so the entry is retried even if this write fails.
        this.log.warn({ err: releaseErr }, 'could not release outbox entry');
      });
      return;
    }
    await this.outbox.complete(entry.id).catch((err: unknown) => {
      // The job is queued; a leftover entry only re-dispatches an idempotent job later.
      this.log.warn({ err, id: entry.id }, 'could not delete delivered outbox entry');
    });
  }
}
