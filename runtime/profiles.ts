import type { QueueDriver } from '../contracts/jobs/queue.js';
import { MemoryAdminSignInLimiter, RedisAdminSignInLimiter, type AdminSignInLimiter } from '../db/admin-sign-in-limiter.js';
import { MemoryKeyCache, RedisKeyCache, type KeyCache } from '../db/key-cache.js';
import { RedisChangeCounts, SingleProcessCounts, type ChangeCounts } from '../db/change-counts.js';
import { MilvusConnection } from '../db/milvus.js';
import { MemoryToolRateLimiter, RedisToolRateLimiter, type ToolRateLimiter } from '../db/tool-rate-limiter.js';
import { type Config, type EmbeddedConfig, type ProductionConfig } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { BullmqQueue } from '../workers/bullmq.driver.js';
import { InProcessQueue } from '../workers/in-process.driver.js';

/** What differs between the profiles: the queue, the shared caches and counters, the Milvus connection. */
export interface ProfileAdapters {
  queue: QueueDriver;
  keyCache: KeyCache;
  milvus: MilvusConnection | null;
  /** API processes and workers tell each other that a project's memories changed. */
  memoryChanges: ChangeCounts;
  /** API processes tell each other that a project's configuration (agents, schemas, indexes, knowledge bases) changed. */
  configChanges: ChangeCounts;
  /** One call budget per tool, across every API process. */
  toolLimiter: ToolRateLimiter;
  /** One count of admin token tries per client, across every API process. */
  adminLimiter: AdminSignInLimiter;
}

/**
 * Longest cached data is served without reading the database, however the change counts read:
 * what a bump lost for good (its process ended during a Redis outage) can cost. Configuration is
 * cheap to load again, so its bound is short.
 */
const MEMORY_STALE_AFTER_MS = 60_000;
const CONFIG_STALE_AFTER_MS = 10_000;

/** Indexing jobs mostly wait on the (batching) embedder, so many run at once and share its calls. */
const concurrencyOf = (config: Config) => ({ default: config.workerConcurrency, byQueue: { embedding: config.embedConcurrency } });

/** Everything in this process: the in-process queue, caches and counters. */
function embeddedAdapters(config: EmbeddedConfig, log: Logger): ProfileAdapters {
  return {
    queue: new InProcessQueue(log.child({ component: 'queue' }), concurrencyOf(config)),
    keyCache: new MemoryKeyCache(),
    milvus: null,
    memoryChanges: new SingleProcessCounts(),
    configChanges: new SingleProcessCounts(),
    toolLimiter: new MemoryToolRateLimiter(),
    adminLimiter: new MemoryAdminSignInLimiter(),
  };
}

/** BullMQ, the key cache, change counts, tool budgets and admin sign-in tries on Redis; vectors in Milvus. */
function productionAdapters(config: ProductionConfig, log: Logger): ProfileAdapters {
  const { redisUrl } = config;
  const prefix = config.queuePrefix;
  return {
    queue: new BullmqQueue({ redisUrl, prefix, concurrency: concurrencyOf(config), lockMs: config.jobLockMs }, log.child({ component: 'queue' })),
    keyCache: new RedisKeyCache(redisUrl, prefix, log),
    milvus: new MilvusConnection(config.milvusAddress, config.milvusToken, log.child({ component: 'milvus' }), config.milvusTimeoutMs),
    memoryChanges: new RedisChangeCounts(redisUrl, `${prefix}:memory-changes`, MEMORY_STALE_AFTER_MS),
    // the configuration cache reads the count before it loads, so its reads may share one GET
    configChanges: new RedisChangeCounts(redisUrl, `${prefix}:config-changes`, CONFIG_STALE_AFTER_MS, true),
    toolLimiter: new RedisToolRateLimiter(redisUrl, `${prefix}:tool-rate`),
    adminLimiter: new RedisAdminSignInLimiter(redisUrl, `${prefix}:admin-sign-in`),
  };
}

/** The adapters of the configuration's profile. */
export function profileAdapters(config: Config, log: Logger): ProfileAdapters {
  return config.profile === 'production' ? productionAdapters(config, log) : embeddedAdapters(config, log);
}
