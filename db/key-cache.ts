import { createClient } from '@redis/client';
import { Repository, Schema, type Entity } from 'redis-om';
import type { KeyPrincipal } from './repositories/api-keys.repository.js';
import type { Logger } from '../lib/logger.js';

// The two profiles' caches of resolved API keys, behind one small interface.

/** Where resolved API keys are remembered between requests, keyed by key hash. */
export interface KeyCache {
  get(keyHash: string): Promise<KeyPrincipal | undefined>;
  set(keyHash: string, principal: KeyPrincipal): Promise<void>;
  delete(keyHash: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a cached key stays valid; bounds how long a key revoked elsewhere may still work. */
export const KEY_CACHE_TTL_SECONDS = 60;

/** Embedded profile: one process, so a map with expiry is the whole cache. */
export class MemoryKeyCache implements KeyCache {
  private readonly entries = new Map<string, { principal: KeyPrincipal; expires: number }>();

  constructor(
    private readonly ttlMs = KEY_CACHE_TTL_SECONDS * 1000,
    private readonly maxEntries = 10_000,
  ) {}

  get(keyHash: string): Promise<KeyPrincipal | undefined> {
    const hit = this.entries.get(keyHash);
    if (!hit) return Promise.resolve(undefined);
    if (hit.expires < Date.now()) {
      this.entries.delete(keyHash);
      return Promise.resolve(undefined);
    }
    return Promise.resolve(hit.principal);
  }

  set(keyHash: string, principal: KeyPrincipal): Promise<void> {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { principal, expires: Date.now() + this.ttlMs });
    return Promise.resolve();
  }

  delete(keyHash: string): Promise<void> {
    this.entries.delete(keyHash);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}

type RedisClient = ReturnType<typeof createClient>;

/**
 * Production: keys cached in Redis through redis-om (HASH entities, so no Redis modules are
 * needed), shared by every API process. A Redis failure is never an authentication failure:
 * the caller falls back to the database.
 */
export class RedisKeyCache implements KeyCache {
  private readonly client: RedisClient;
  private readonly repository: Repository;
  private connecting: Promise<unknown> | null = null;

  constructor(
    redisUrl: string,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.client = createClient({
      url: redisUrl,
      disableOfflineQueue: true,
      socket: { connectTimeout: 2_000, reconnectStrategy: (retries) => Math.min(retries * 200, 2_000) },
    });
    this.client.on('error', (err: Error) => this.log.debug({ err: err.message }, 'key cache connection error'));
    const schema = new Schema(
      `${prefix}:api-key`,
      { keyId: { type: 'string' }, projectId: { type: 'string' }, projectName: { type: 'string' } },
      { dataStructure: 'HASH' },
    );
    this.repository = new Repository(schema, this.client as unknown as ConstructorParameters<typeof Repository>[1]);
  }

  async get(keyHash: string): Promise<KeyPrincipal | undefined> {
    if (!(await this.ready())) return undefined;
    const entity = (await this.repository.fetch(keyHash)) as Entity;
    if (typeof entity.keyId !== 'string' || typeof entity.projectId !== 'string') return undefined;
    return { keyId: entity.keyId, projectId: entity.projectId, projectName: String(entity.projectName ?? '') };
  }

  async set(keyHash: string, principal: KeyPrincipal): Promise<void> {
    if (!(await this.ready())) return;
    await this.repository.save(keyHash, { ...principal });
    await this.repository.expire(keyHash, KEY_CACHE_TTL_SECONDS);
  }

  async delete(keyHash: string): Promise<void> {
    if (!(await this.ready())) throw new Error('key cache unreachable');
    await this.repository.remove(keyHash);
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.quit().catch(() => this.client.disconnect());
  }

  private async ready(): Promise<boolean> {
    if (this.client.isReady) return true;
    this.connecting ??= this.client.connect().catch(() => {
      this.connecting = null;
    });
    await Promise.race([this.connecting, new Promise((r) => setTimeout(r, 250))]);
    return this.client.isReady;
  }
}

