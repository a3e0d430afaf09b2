import { FailFastRedis } from '../lib/redis.js';

/**
 * How the processes sharing a database learn that a project's memories changed, so that what one
 * of them keeps in memory about them (the keyword index's cached scopes) is not served after
 * another wrote. Every write that commits bumps its project's count; a cache holds the count it
 * was read under and is used only while the count is unchanged.
 */
export interface MemoryChanges {
  /** The project's count of changes; null when it cannot be read, and then nothing may be cached. */
  current(projectId: string): Promise<number | null>;
  /** Counts a committed change to each of these projects. */
  bump(projectIds: string[]): Promise<void>;
  /** How long a cache may be served however the count reads (a bump lost to an outage is then outlived). */
  readonly staleAfterMs: number;
  close(): Promise<void>;
}

/** The embedded profile: one process writes and reads, so its counts live in the process. */
export class SingleProcessChanges implements MemoryChanges {
  readonly staleAfterMs = Number.POSITIVE_INFINITY;
  private readonly counts = new Map<string, number>();

  async current(projectId: string): Promise<number> {
    return this.counts.get(projectId) ?? 0;
  }

  async bump(projectIds: string[]): Promise<void> {
    for (const id of new Set(projectIds)) this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }

  async close(): Promise<void> {}
}

/** Longest a count is waited for; past it the search reads the database instead. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Production: one counter per project in Redis (`<prefix>:memory-changes:<project>`), incremented
 * by whichever API process or worker committed a write and read by each search of a cached
 * scope (one GET, beside the search's other reads). Redis down: searches read the database and
 * nothing is cached; a bump lost to the outage is outlived by `staleAfterMs`.
 */
export class RedisMemoryChanges implements MemoryChanges {
  readonly staleAfterMs = 60_000;
  private readonly redis: FailFastRedis;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    this.redis = new FailFastRedis(redisUrl, COMMAND_TIMEOUT_MS);
  }

  async current(projectId: string): Promise<number | null> {
    try {
      await this.redis.connected();
      return Number((await this.redis.client.get(this.key(projectId))) ?? 0);
    } catch {
      return null;
    }
  }

  async bump(projectIds: string[]): Promise<void> {
    try {
      await this.redis.connected();
      await Promise.all([...new Set(projectIds)].map((id) => this.redis.client.incr(this.key(id))));
    } catch {
      // outlived by staleAfterMs
    }
  }

  async close(): Promise<void> {
    await this.redis.close();
  }

  private key(projectId: string): string {
    return `${this.prefix}:memory-changes:${projectId}`;
  }
}
