import type { KeyPrincipal } from '../db/repositories/api-keys.repository.js';

/** Where resolved API keys are remembered between requests, keyed by key hash. */
export interface KeyCache {
  get(keyHash: string): Promise<KeyPrincipal | undefined>;
  set(keyHash: string, principal: KeyPrincipal): Promise<void>;
  delete(keyHash: string): Promise<void>;
  close(): Promise<void>;
}
