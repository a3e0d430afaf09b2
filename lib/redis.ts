import { Redis } from 'ioredis';

/**
 * An ioredis client for calls that must answer now or fail: it does not queue commands while
 * disconnected (an outage is reported at once rather than after commands pile up), gives each
 * command one try within `waitMs`, and keeps connection errors to the caller instead of printing
 * them. `connected()` waits up to `waitMs` for a connection being opened (start-up, a reconnect).
 */
export class FailFastRedis {
  readonly client: Redis;

  constructor(
    redisUrl: string,
    private readonly waitMs: number,
  ) {
    this.client = new Redis(redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: waitMs,
      commandTimeout: waitMs,
    });
    this.client.on('error', () => undefined);
  }

  /** Waits for a connection that is being opened right now; otherwise returns at once. */
  async connected(): Promise<void> {
    const redis = this.client;
    if (!['wait', 'connecting', 'connect'].includes(redis.status)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        redis.off('ready', done);
        redis.off('error', done);
        redis.off('end', done);
        resolve();
      };
      const timer = setTimeout(done, this.waitMs);
      redis.once('ready', done);
      redis.once('error', done);
      redis.once('end', done);
    });
  }

  async close(): Promise<void> {
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }
}
