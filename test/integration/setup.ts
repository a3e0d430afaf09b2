import { createDatabase, ensureMysqlDatabase } from '../../db/knex.js';
import { migrateLatest } from '../../db/migrate.js';
import { reachable } from '../../lib/reachable.js';
import { dropIsolatedDatabases, isProduction, PROFILE, TEST_DATABASE_URL, TEST_MILVUS_ADDRESS, TEST_REDIS_URL } from '../helpers.js';

// Root hooks of the integration suite. On the production profile every service must answer:
// a missing one fails the run here, before any test, instead of tests being skipped.

before(async function () {
  this.timeout(60_000);
  process.stdout.write(`  integration profile: ${PROFILE}\n`);
  if (!isProduction) return;
  const checks: Array<[string, string, number]> = [
    ['MariaDB', TEST_DATABASE_URL, 3306],
    ['Redis', TEST_REDIS_URL, 6379],
    ['Milvus', TEST_MILVUS_ADDRESS, 19530],
  ];
  const down: string[] = [];
  for (const [name, address, port] of checks) {
    if (!(await reachable(address, port, 2_000))) down.push(`${name} (${address})`);
  }
  if (down.length > 0) throw new Error(`Production-profile tests need these services, which do not answer: ${down.join(', ')}`);
  // A clean database per run: drop it, recreate it, migrate it.
  const url = new URL(TEST_DATABASE_URL);
  const name = url.pathname.slice(1);
  await ensureMysqlDatabase(TEST_DATABASE_URL);
  const db = createDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '' });
  try {
    await db.raw(`DROP DATABASE \`${name}\``);
    await db.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await db.destroy();
  }
  const fresh = createDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '' });
  try {
    await migrateLatest(fresh);
  } finally {
    await fresh.destroy();
  }
});

// the databases tests were given of their own (`isolatedDatabaseEnv`) go once every test is over
after(async function () {
  this.timeout(60_000);
  await dropIsolatedDatabases();
});
