import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentsRepository, SecretRow } from '../db/repositories/agents.repository.js';
import { badRequest, notFound } from '../lib/errors.js';

/** Secret names, as tools refer to them in `secret_ref`. */
export const SECRET_NAME = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';
/** Longest secret value, in characters. */
export const MAX_SECRET_LENGTH = 8192;

/** A secret as the API shows it: never its value. */
export type SecretView = Omit<SecretRow, 'sealed' | 'project_id'>;

/**
 * The key secrets are sealed with: SECRETS_KEY when set; on the embedded profile without it, a
 * random key kept in `DATA_DIR/secrets.key` (created once, readable by the owner only), so
 * `npm start` works with nothing configured; on the production profile without it, none.
 */
export function secretsKey(configured: Buffer | null, embeddedDataDir: string | null): Buffer | null {
  if (configured !== null) return configured;
  if (embeddedDataDir === null) return null;
  const file = path.join(embeddedDataDir, 'secrets.key');
  try {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(embeddedDataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, key.toString('base64'), { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    // another process created it first
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    throw err;
  }
}

/**
 * A project's write-only secrets (tool credentials), sealed with AES-256-GCM. Values go in and
 * come out only to the tool runner; every view carries the name and dates alone.
 */
export class Secrets {
  constructor(
    private readonly repository: AgentsRepository,
    private readonly key: Buffer | null,
  ) {}

  /** Stores or replaces a secret; `created` says which. */
  async put(projectId: string, name: string, value: string, now = Date.now()): Promise<{ secret: SecretView; created: boolean }> {
    const sealed = this.seal(value, `${projectId}/${name}`);
    const created = await this.repository.putSecret({ project_id: projectId, name, sealed, created_at: now, updated_at: now });
    const row = await this.repository.secret(projectId, name);
    return { secret: show(row ?? { project_id: projectId, name, sealed, created_at: now, updated_at: now }), created };
  }

  async get(projectId: string, name: string): Promise<SecretView> {
    const row = await this.repository.secret(projectId, name);
    if (!row) throw notFound(`There is no secret "${name}" in this project.`);
    return show(row);
  }

  async list(projectId: string, limit: number, offset: number): Promise<SecretView[]> {
    return (await this.repository.listSecrets(projectId, limit, offset)).map((r) => ({ name: r.name, created_at: r.created_at, updated_at: r.updated_at }));
  }

  async exists(projectId: string, name: string): Promise<boolean> {
    return (await this.repository.secret(projectId, name)) !== undefined;
  }

  async delete(projectId: string, name: string): Promise<void> {
    if ((await this.repository.deleteSecret(projectId, name)) === 0) throw notFound(`There is no secret "${name}" in this project.`);
  }

  /** The value of a secret, for the tool runner only; null when it is not set. */
  async reveal(projectId: string, name: string): Promise<string | null> {
    const row = await this.repository.secret(projectId, name);
    if (!row || this.key === null) return null;
    return this.open(row.sealed, `${projectId}/${name}`);
  }

  private requireKey(): Buffer {
    if (this.key === null) {
      throw badRequest('secrets_unavailable', 'This server has no SECRETS_KEY, so it cannot store secrets: an operator must set it (32 bytes, e.g. `openssl rand -base64 32`).');
    }
    return this.key;
  }

  private seal(value: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.requireKey(), iv);
    // the project and name are bound in, so a sealed value copied to another row does not open
    cipher.setAAD(Buffer.from(aad));
    const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
  }

  private open(sealed: string, aad: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.requireKey(), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

const show = (row: SecretRow): SecretView => ({ name: row.name, created_at: row.created_at, updated_at: row.updated_at });
