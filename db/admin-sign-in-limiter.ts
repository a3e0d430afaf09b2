import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { unavailable } from '../lib/errors.js';
import { FailFastRedis } from '../lib/redis.js';

// The two profiles' count of admin token guesses per client, behind one small interface.

/** Tries of the admin token a client may make per window before none of its tries is checked. */
export const ADMIN_TRIES_PER_WINDOW = 10;
const WINDOW_SECONDS = 60;
/** How long a try waits for a Redis connection that is being opened before it gives up. */
const CONNECT_WAIT_MS = 2_000;

/**
 * Tries of ADMIN_TOKEN, keyed by client address, whichever way the token came (the sign-in form,
 * Basic, Bearer). A try is counted before its token is compared, so concurrent guesses cannot all
 * pass a check made before any of them was counted; a right token forgets the client's tries.
 */
export interface AdminSignInLimiter {
  /** Counts a try: 0 when its token may be checked, else the milliseconds until the window ends. */
  attempt(client: string): Promise<number>;
  /** The client presented the right token: its earlier tries no longer count. */
  succeeded(client: string): Promise<void>;
  close(): Promise<void>;
}

/** Counts one point; a `RateLimiterRes` rejection means the window's tries are spent, anything else is a store failure. */
async function consume(limiter: RateLimiterAbstract, client: string): Promise<number> {
  try {
    await limiter.consume(client, 1);
    return 0;
  } catch (err) {
    if (err instanceof RateLimiterRes) return Math.max(1, err.msBeforeNext);
    throw err;
  }
}

/** Tries counted in this process: the embedded profile, where one process answers every request. */
export class MemoryAdminSignInLimiter implements AdminSignInLimiter {
  private readonly limiter = new RateLimiterMemory({ points: ADMIN_TRIES_PER_WINDOW, duration: WINDOW_SECONDS });

  attempt(client: string): Promise<number> {
    return consume(this.limiter, client);
  }

  async succeeded(client: string): Promise<void> {
    await this.limiter.delete(client);
  }

  async close(): Promise<void> {}
}

/**
 * Tries counted in Redis, so the API processes of the production profile share one count per
 * client (a balancer would otherwise multiply the limit by the number of processes).
 *
 * When Redis does not answer, a try is refused with a 503 rather than checked uncounted: the
 * limit is what keeps the token from being guessed, and a session cookie (which is not a try)
 * still opens the board.
 */
export class RedisAdminSignInLimiter implements AdminSignInLimiter {
  private readonly redis: FailFastRedis;
  private readonly limiter: RateLimiterRedis;

  constructor(redisUrl: string, keyPrefix: string) {
    this.redis = new FailFastRedis(redisUrl, CONNECT_WAIT_MS);
    this.limiter = new RateLimiterRedis({
      storeClient: this.redis.client,
      keyPrefix,
      points: ADMIN_TRIES_PER_WINDOW,
      duration: WINDOW_SECONDS,
      rejectIfRedisNotReady: true,
    });
  }

  async attempt(client: string): Promise<number> {
    try {
      await this.redis.connected();
      return await consume(this.limiter, client);
    } catch (err) {
      throw this.outage(err);
    }
  }

  async succeeded(client: string): Promise<void> {
    // the token was right: a reset lost to an outage only leaves the tries to lapse with their window
    await this.limiter.delete(client).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.redis.close();
  }

  private outage(err: unknown): Error {
    const reason = err instanceof Error ? err.message : String(err);
    return unavailable(`Admin sign-in tries are counted in Redis, which does not answer (${reason}); the token was not checked. Retry when Redis is back.`);
  }
}
