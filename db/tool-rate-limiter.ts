import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { unavailable } from '../lib/errors.js';
import { FailFastRedis } from '../lib/redis.js';

// The two profiles' per-minute budgets of agent tool calls, behind one small interface.

/** Per-minute call budgets of agent tools, keyed by `${projectId}:${agentId}:${toolId}`. */
export interface ToolRateLimiter {
  /** True when a call may go ahead now (and counts it); false when the key's budget for the minute is spent. */
  take(key: string, perMinute: number): Promise<boolean>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;
/** How long `take` waits for a Redis connection that is being opened before it gives up. */
const CONNECT_WAIT_MS = 2_000;

function assertBudget(perMinute: number): void {
  if (!Number.isInteger(perMinute) || perMinute < 1) {
    throw new RangeError(`A tool's rate_per_min must be a positive integer, got ${perMinute}`);
  }
}

/** Consumes one point; a `RateLimiterRes` rejection means the budget is spent, anything else is a store failure. */
async function consume(limiter: RateLimiterAbstract, key: string): Promise<boolean> {
  try {
    await limiter.consume(key, 1);
    return true;
  } catch (err) {
    if (err instanceof RateLimiterRes) return false;
    throw err;
  }
}

/** Budgets kept in this process: the embedded profile, where one process serves every call. */
export class MemoryToolRateLimiter implements ToolRateLimiter {
  private readonly limiters = new Map<number, RateLimiterMemory>();

  async take(key: string, perMinute: number): Promise<boolean> {
    assertBudget(perMinute);
    let limiter = this.limiters.get(perMinute);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: perMinute, duration: WINDOW_SECONDS });
      this.limiters.set(perMinute, limiter);
    }
    return consume(limiter, key);
  }

  async close(): Promise<void> {
    this.limiters.clear();
  }
}

/**
 * Budgets kept in Redis, so every API process of the production profile draws on the same one.
 *
 * When Redis does not answer, `take` throws a 503 `service_unavailable` instead of letting calls
 * through: a per-process fallback would multiply the budget by the number of processes and
 * silently stop protecting the tool's upstream API, so we fail closed and let the caller retry.
 * The client does not queue commands while disconnected (`enableOfflineQueue: false`), so an
 * outage is reported at once rather than after the command piles up.
 */
export class RedisToolRateLimiter implements ToolRateLimiter {
  private readonly redis: FailFastRedis;
  private readonly limiters = new Map<number, RateLimiterRedis>();

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    // connection errors surface as 503s from `take`
    this.redis = new FailFastRedis(redisUrl, CONNECT_WAIT_MS);
  }

  async take(key: string, perMinute: number): Promise<boolean> {
    assertBudget(perMinute);
    let limiter = this.limiters.get(perMinute);
    if (!limiter) {
      // One key prefix for every budget size: a tool whose rate_per_min changes keeps what it used.
      limiter = new RateLimiterRedis({
        storeClient: this.redis.client,
        keyPrefix: this.prefix,
        points: perMinute,
        duration: WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
      });
      this.limiters.set(perMinute, limiter);
    }
    try {
      await this.redis.connected();
      return await consume(limiter, key);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw unavailable(`Tool rate limits are kept in Redis, which does not answer (${reason}); the tool call was not made. Retry when Redis is back.`);
    }
  }

  async close(): Promise<void> {
    this.limiters.clear();
    await this.redis.close();
  }
}
