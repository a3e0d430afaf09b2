import { parseArgs } from 'node:util';
import { createDatabase, ensureMysqlDatabase } from '../db/knex.js';
import { migrateLatest, releaseMigrationLock } from '../db/migrate.js';
import { configOrExit } from './boot.js';

// `npm run db:migrate [-- --unlock]`: applies pending migrations. Every migration is guarded, so
// after a failure half-way, running this again finishes the job. `--unlock` frees the lock left
// by a migrate process that was killed.
const { values } = parseArgs({ options: { unlock: { type: 'boolean', default: false } } });
const config = configOrExit();
if (config.databaseUrl) await ensureMysqlDatabase(config.databaseUrl);
const db = createDatabase(config);
try {
  if (values.unlock) await releaseMigrationLock(db);
  const applied = await migrateLatest(db);
  process.stdout.write(applied.length === 0 ? 'Database is up to date.\n' : `Applied: ${applied.join(', ')}\n`);
} catch (err) {
  process.stderr.write(`Migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
