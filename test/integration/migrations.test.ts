import { expect } from 'chai';
import { createDatabase, ensureMysqlDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest, pendingMigrations } from '../../db/migrate.js';
import { MemoryTermsRepository } from '../../db/repositories/memory-terms.repository.js';
import { SingleProcessCounts } from '../../db/change-counts.js';
import { MemoryKeywords } from '../../core/memory/keyword.js';
import { down as dropMemoryTerms } from '../../db/migrations/0016_memory_terms.js';
import { isProduction, tempDir, TEST_DATABASE_URL, unique } from '../helpers.js';

async function scratchDatabase(): Promise<Knex> {
  if (!isProduction) return createDatabase({ databaseUrl: null, dataDir: tempDir() });
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${unique('cairn_mig').replace('-', '_')}`;
  await ensureMysqlDatabase(url.toString());
  return createDatabase({ databaseUrl: url.toString(), dataDir: '' });
}

async function indexNames(db: Knex, table: string): Promise<string[]> {
  if (isProduction) {
    const rows = (await db('information_schema.statistics')
      .whereRaw('table_schema = DATABASE()')
      .andWhere({ table_name: table })
      .select('index_name as name')) as Array<{ name: string }>;
    return rows.map((r) => r.name);
  }
  const rows = (await db('sqlite_master').where({ type: 'index', tbl_name: table }).select('name')) as Array<{ name: string }>;
  return rows.map((r) => r.name);
}

describe('migrations', () => {
  let db: Knex;

  beforeEach(async () => {
    db = await scratchDatabase();
  });
  afterEach(async () => {
    if (isProduction) await db.raw('DROP DATABASE IF EXISTS ??', [db.client.config.connection.database]);
    await db.destroy();
  });

  it('apply from nothing, and a second run changes nothing', async () => {
    const applied = await migrateLatest(db);
    expect(applied).to.include.members(['0001_projects', '0002_api_keys', '0003_outbox', '0004_probes']);
    expect(await pendingMigrations(db)).to.deep.equal([]);
    expect(await migrateLatest(db)).to.deep.equal([]);
  });

  it('finish a migration that failed half-way (table made, index and record missing)', async () => {
    await migrateLatest(db);
    // What MySQL leaves after a crash inside 0002: DDL already committed, the record not written.
    await db.schema.alterTable('api_keys', (t) => t.dropIndex(['project_id', 'created_at'], 'api_keys_project_created'));
    await db('knex_migrations').whereIn('name', ['0002_api_keys', '0003_outbox', '0004_probes']).delete();
    expect(await indexNames(db, 'api_keys')).not.to.include('api_keys_project_created');

    const applied = await migrateLatest(db);
    expect(applied).to.deep.equal(['0002_api_keys', '0003_outbox', '0004_probes']);
    expect(await indexNames(db, 'api_keys')).to.include.members(['api_keys_project_created', 'api_keys_key_hash_unique']);
    expect(await pendingMigrations(db)).to.deep.equal([]);
  });

  it('gives memories written before the keyword index their postings, so keyword search finds them', async () => {
    await migrateLatest(db);
    await dropMemoryTerms(db);
    await db('knex_migrations').where({ name: '0016_memory_terms' }).delete();
    const memory = (id: string, text: string, user: string) => ({
      id, project_id: 'p1', memory: text, user_id: user, metadata: '{}', revision: 1, embedding_status: 'indexed', created_at: 1, updated_at: 1,
    });
    await db('memories').insert([memory('m1', 'My sister Ana teaches violin in Porto', 'u1'), memory('m2', 'Ana bought a violin', 'u2')]);

    expect(await migrateLatest(db)).to.deep.equal(['0016_memory_terms']);
    expect((await db('memories').where({ id: 'm1' }).first()).term_count).to.equal(5);
    const keywords = new MemoryKeywords(new MemoryTermsRepository(db), new SingleProcessCounts());
    expect((await keywords.search('p1', { user_id: ['u1'] }, 'who teaches the violin?', 10)).map((h) => h.id)).to.deep.equal(['m1']);
    expect((await keywords.search('p1', { user_id: ['u2'] }, 'violin', 10)).map((h) => h.id)).to.deep.equal(['m2']);
  });
});
