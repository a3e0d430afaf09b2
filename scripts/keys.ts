import { parseArgs } from 'node:util';
import { ApiKeys, PROJECT_NAME } from '../core/api-keys.js';
import { MemoryKeyCache } from '../db/key-cache.js';
import { createDatabase } from '../db/knex.js';
import { migrateLatest, pendingMigrations } from '../db/migrate.js';
import { ApiKeysRepository } from '../db/repositories/api-keys.repository.js';
import { ProjectsRepository } from '../db/repositories/projects.repository.js';
import { createLogger } from '../lib/logger.js';
import { iso } from '../lib/time.js';
import { configOrExit } from './boot.js';

const USAGE = `Usage:
  npm run keys -- create --project NAME [--name LABEL]   create a key (and the project if new); prints the key
  npm run keys -- list --project NAME                    list a project's keys (never the keys themselves)
`;

// The key CLI: works on both profiles, against the same database the server uses.
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { project: { type: 'string' }, name: { type: 'string' } },
});
const command = positionals[0];
const project = values.project;
if ((command !== 'create' && command !== 'list') || !project) {
  process.stderr.write(USAGE);
  process.exit(2);
}
if (!PROJECT_NAME.test(project)) {
  process.stderr.write(`Project names are 1-64 letters, digits, "_" or "-", starting with a letter or digit.\n`);
  process.exit(2);
}

const config = configOrExit();
const db = createDatabase(config);
try {
  if (config.profile === 'embedded') await migrateLatest(db);
  else if ((await pendingMigrations(db)).length > 0) throw new Error('The database is not migrated: run npm run db:migrate');
  const projects = new ProjectsRepository(db);
  const repo = new ApiKeysRepository(db);
  const apiKeys = new ApiKeys(repo, projects, new MemoryKeyCache(), createLogger('silent'));
  if (command === 'create') {
    const created = await apiKeys.createForProject(project, values.name);
    process.stdout.write(`${created.key}\n`);
    process.stderr.write(`Created key ${created.id} (${created.name}) for project "${created.project}". Store it now: it is not shown again.\n`);
  } else {
    const row = await projects.findByName(project);
    if (!row) throw new Error(`No project named "${project}"`);
    for (const key of await apiKeys.list(row.id, 100, 0)) {
      process.stdout.write(`${key.id}\t${key.prefix}…\t${key.name}\t${iso(key.created_at)}\n`);
    }
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
