import { createHash, randomBytes } from 'node:crypto';
import type { ApiKeyRow, ApiKeysRepository, KeyPrincipal } from '../db/repositories/api-keys.repository.js';
import type { ProjectsRepository } from '../db/repositories/projects.repository.js';
import { conflict, notFound } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { newId, nowMs } from '../lib/time.js';
import type { KeyCache } from '../db/key-cache.js';

export type { KeyPrincipal };

/** An API key as listed: never the key itself. */
export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  created_at: number;
}

/** A key just created: the only time its value is shown. */
export interface CreatedApiKey extends ApiKeyView {
  key: string;
  project: string;
}

const KEY_PREFIX = 'cairn_';
/** Project names follow the same rule as agent names. */
export const PROJECT_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

/** SHA-256 of the key: keys are 192 random bits, so a fast hash is the right tool (no salt needed). */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

const toView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  created_at: Number(row.created_at),
});

/** Issuing, listing, revoking and resolving project API keys. */
export class ApiKeys {
  /**
   * Per-process memo in front of the shared cache, keyed by the presented key so a hit costs no
   * hashing and no I/O. Entries live 5 s, which bounds how long a key revoked by another process
   * keeps working here.
   */
  private readonly memo = new Map<string, { principal: KeyPrincipal; expires: number }>();
  private static readonly MEMO_MS = 5_000;

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly projects: ProjectsRepository,
    private readonly cache: KeyCache,
    private readonly log: Logger,
  ) {}

  /** Resolves a presented key to its project, or undefined when it is unknown or revoked. */
  async authenticate(key: string): Promise<KeyPrincipal | undefined> {
    const memo = this.memo.get(key);
    if (memo && memo.expires > Date.now()) return memo.principal;
    const keyHash = hashKey(key);

    let principal = await this.cache.get(keyHash).catch((err: unknown) => {
      this.log.debug({ err }, 'key cache read failed; using the database');
      return undefined;
    });
    if (!principal) {
      principal = await this.keys.findPrincipalByHash(keyHash);
      if (!principal) return undefined;
      void this.cache.set(keyHash, principal).catch((err: unknown) => this.log.debug({ err }, 'key cache write failed'));
    }
    if (this.memo.size > 10_000) this.memo.clear();
    this.memo.set(key, { principal, expires: Date.now() + ApiKeys.MEMO_MS });
    return principal;
  }

  /** Creates a key in a project. */
  async create(projectId: string, projectName: string, name: string | undefined): Promise<CreatedApiKey> {
    const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
    const row: ApiKeyRow = {
      id: newId(),
      project_id: projectId,
      name: name ?? 'default',
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      key_hash: hashKey(key),
      created_at: nowMs(),
    };
    await this.keys.insert(row);
    return { ...toView(row), key, project: projectName };
  }

  /** Creates a key in the named project, creating the project if needed (the CLI's path). */
  async createForProject(projectName: string, name?: string): Promise<CreatedApiKey> {
    const project = await this.projects.ensure(projectName);
    return this.create(project.id, project.name, name);
  }

  async list(projectId: string, limit: number, offset: number): Promise<ApiKeyView[]> {
    return (await this.keys.list(projectId, limit, offset)).map(toView);
  }

  /**
   * Revokes a key of this project. The project's last key cannot be revoked through the API, so a
   * project cannot lock itself out (the CLI can always issue a new one).
   */
  async revoke(projectId: string, id: string): Promise<void> {
    const outcome = await this.keys.deleteUnlessLast(projectId, id);
    if (outcome === 'missing') throw notFound(`No API key with id "${id}" in this project.`);
    if (outcome === 'last') {
      throw conflict("This is the project's last API key; create another before revoking it.", 'last_api_key');
    }
    for (const [presented, entry] of this.memo) {
      if (entry.principal.keyId === id) this.memo.delete(presented);
    }
    await this.cache.delete(outcome.deleted).catch((err: unknown) => {
      this.log.warn({ err, keyId: id }, `key cache unreachable; the revoked key may stay cached for up to its TTL`);
    });
  }

  /**
   * Makes sure `key` is a key of project `default` (BOOTSTRAP_API_KEY). Idempotent; a key that
   * already belongs to another project is left there.
   */
  async ensureBootstrapKey(key: string): Promise<void> {
    const keyHash = hashKey(key);
    if (await this.keys.findByHash(keyHash)) return;
    const project = await this.projects.ensure('default');
    try {
      await this.keys.insert({
        id: newId(),
        project_id: project.id,
        name: 'bootstrap',
        prefix: key.slice(0, Math.min(12, key.length)),
        key_hash: keyHash,
        created_at: nowMs(),
      });
    } catch (err) {
      // Another process inserted it first.
      if (!(await this.keys.findByHash(keyHash))) throw err;
    }
  }
}
