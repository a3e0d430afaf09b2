import { randomInt } from 'node:crypto';
import { FailFastRedis } from '../lib/redis.js';

/**
 * How the processes sharing a database learn that something of a project changed, so that what
 * one of them keeps in memory about it (the keyword index's cached scopes, loaded configuration)
 * is not served after another wrote. Every write that commits bumps its project's count, before
 * it is acknowledged; a cache holds the count it was read under (read before what it caches) and
 * is used only while the count is unchanged.
 */
export interface ChangeCounts {
  /** The project's count of changes; null when it cannot be read, and then nothing may be cached. */
  current(projectId: string): Promise<number | null>;
  /** Counts a committed change to each of these projects. */
  bump(projectIds: string[]): Promise<void>;
  /** How long a cache may be served however the count reads (a bump lost to an outage is then outlived). */
  readonly staleAfterMs: number;
  close(): Promise<void>;
}

/** The embedded profile: one process writes and reads, so its counts live in the process. */
export class SingleProcessCounts implements ChangeCounts {
  readonly staleAfterMs = Number.POSITIVE_INFINITY;
  private readonly counts = new Map<string, number>();

  current(projectId: string): Promise<number> {
    return Promise.resolve(this.counts.get(projectId) ?? 0);
  }

  bump(projectIds: string[]): Promise<void> {
    for (const id of new Set(projectIds)) this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    return Promise.resolve();
  }

  async close(): Promise<void> {}
}

/** Longest a count is waited for; past it the caller reads the database instead. */
const COMMAND_TIMEOUT_MS = 1_000;
/** How often bumps that failed are tried again while Redis cannot be reached. */
const RETRY_MS = 1_000;
/** Counters start at a random value below this, never at 0 (see `RedisChangeCounts`). */
const START_RANGE = 2 ** 47;

/**
 * Production: one counter per project in Redis (`<keyPrefix>:<project>`), incremented by whichever
 * API process or worker committed a write and read by each cached read (one GET).
 *
 * Redis down: `current` is null, so readers read the database and cache nothing. A bump that
 * fails is tried again every second until Redis answers, so a reader that still holds data from
 * before the outage sees the count move as soon as it can read it again; `staleAfterMs` bounds
 * what a bump never delivered (its process ended) can cost. A counter is created at a random
 * value, not 0, so that after Redis lost its data (a restart without persistence) the counts
 * start again far from those a cache holds, instead of counting up through the same numbers.
 */
export class RedisChangeCounts implements ChangeCounts {
  private readonly redis: FailFastRedis;
  /** Reads not sent yet, by project: callers until they are sent share them. */
  private readonly unsent = new Map<string, Promise<number | null>>();
  private readonly undelivered = new Set<string>();
  private retry: NodeJS.Timeout | null = null;

  /**
   * `sharedReads`: one GET per project per turn of the event loop, sent once the callers of this
   * turn have asked — each caller's read is still sent after it asked, so it sees every bump
   * acknowledged before. Only for callers that wait for the count before reading what they cache:
   * the read is sent later than it is asked for.
   */
  constructor(
    redisUrl: string,
    private readonly keyPrefix: string,
    readonly staleAfterMs: number,
    private readonly sharedReads = false,
  ) {
    this.redis = new FailFastRedis(redisUrl, COMMAND_TIMEOUT_MS);
  }

  current(projectId: string): Promise<number | null> {
    if (!this.sharedReads) return this.read(projectId);
    let read = this.unsent.get(projectId);
    if (read === undefined) {
      read = new Promise((resolve) => {
        setImmediate(() => {
          this.unsent.delete(projectId);
          resolve(this.read(projectId));
        });
      });
      this.unsent.set(projectId, read);
    }
    return read;
  }

  private async read(projectId: string): Promise<number | null> {
    try {
      await this.redis.connected();
      const key = this.key(projectId);
      const count = await this.redis.client.get(key);
      if (count !== null) return Number(count);
      const [, [, created] = []] = (await this.redis.client.multi().set(key, randomInt(START_RANGE), 'NX').get(key).exec()) ?? [];
      return Number(created);
    } catch {
      return null;
    }
  }

  async bump(projectIds: string[]): Promise<void> {
    const ids = [...new Set(projectIds)];
    try {
      await this.redis.connected();
      await Promise.all(ids.map((id) => this.increment(id)));
    } catch {
      for (const id of ids) this.undelivered.add(id);
      this.retry ??= setInterval(() => void this.deliver(), RETRY_MS).unref();
    }
  }

  async close(): Promise<void> {
    if (this.retry !== null) clearInterval(this.retry);
    this.retry = null;
    await this.redis.close();
  }

  private async increment(projectId: string): Promise<void> {
    const key = this.key(projectId);
    await this.redis.client.multi().set(key, randomInt(START_RANGE), 'NX').incr(key).exec();
  }

  /** Bumps that failed, tried again; the timer stops once all went through. */
  private async deliver(): Promise<void> {
    for (const id of [...this.undelivered]) {
      // taken out first: a bump failing meanwhile puts it back, for a write this increment may precede
      this.undelivered.delete(id);
      try {
        await this.increment(id);
      } catch {
        this.undelivered.add(id);
        return;
      }
    }
    if (this.undelivered.size > 0) return;
    if (this.retry !== null) clearInterval(this.retry);
    this.retry = null;
  }

  private key(projectId: string): string {
    return `${this.keyPrefix}:${projectId}`;
  }
}
