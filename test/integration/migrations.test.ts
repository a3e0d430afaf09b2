import { expect } from 'chai';
import { createDatabase, ensureMysqlDatabase, type Knex } from '../../db/knex.js';
import { migrateLatest, pendingMigrations } from '../../db/migrate.js';
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
});
