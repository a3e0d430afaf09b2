import type { Knex } from 'knex';
import { supportsRowLocks } from '../knex.js';

export interface ApiKeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
}

/** What an API key resolves to: the key and the project it acts for. */
export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  projectName: string;
}

/** API key rows. Every query but the hash lookup is scoped by project. */
export class ApiKeysRepository {
  constructor(private readonly db: Knex) {}

  async insert(row: ApiKeyRow): Promise<void> {
    await this.db('api_keys').insert(row);
  }

  /** The authentication lookup: by hash, across projects (the hash is the credential). */
  async findPrincipalByHash(keyHash: string): Promise<KeyPrincipal | undefined> {
    const row = (await this.db('api_keys as k')
      .join('projects as p', 'p.id', 'k.project_id')
      .where('k.key_hash', keyHash)
      .first('k.id as keyId', 'k.project_id as projectId', 'p.name as projectName')) as KeyPrincipal | undefined;
    return row;
  }

  /**
   * A console session's lookup: the key by its id, with its hash (what the session's cookie is
   * signed with), across projects; undefined once the key is revoked.
   */
  async findPrincipalById(id: string): Promise<(KeyPrincipal & { keyHash: string }) | undefined> {
    const row = (await this.db('api_keys as k')
      .join('projects as p', 'p.id', 'k.project_id')
      .where('k.id', id)
      .first('k.id as keyId', 'k.project_id as projectId', 'p.name as projectName', 'k.key_hash as keyHash')) as
      | (KeyPrincipal & { keyHash: string })
      | undefined;
    return row;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRow | undefined> {
    return (await this.db<ApiKeyRow>('api_keys').where({ key_hash: keyHash }).first()) as ApiKeyRow | undefined;
  }

  async list(projectId: string, limit: number, offset: number): Promise<ApiKeyRow[]> {
    return (await this.db<ApiKeyRow>('api_keys')
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as ApiKeyRow[];
  }

  /**
   * Deletes a key unless it is the project's last one, atomically: the project's key rows are
   * locked (MySQL) or the transaction is serialised (SQLite), so two concurrent revocations
   * cannot both see a second key and remove the last two. Returns the deleted key's hash.
   */
  async deleteUnlessLast(projectId: string, id: string): Promise<{ deleted: string } | 'last' | 'missing'> {
    return this.db.transaction(async (trx) => {
      let query = trx('api_keys').where({ project_id: projectId }).select('id', 'key_hash');
      if (supportsRowLocks(this.db)) query = query.forUpdate();
      const keys = (await query) as Array<Pick<ApiKeyRow, 'id' | 'key_hash'>>;
      const target = keys.find((k) => k.id === id);
      if (!target) return 'missing';
      if (keys.length <= 1) return 'last';
      await trx('api_keys').where({ project_id: projectId, id }).delete();
      return { deleted: target.key_hash };
    });
  }
}
