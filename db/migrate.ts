import type { Knex } from 'knex';
import * as projects from './migrations/0001_projects.js';
import * as apiKeys from './migrations/0002_api_keys.js';
import * as outbox from './migrations/0003_outbox.js';
import * as probes from './migrations/0004_probes.js';
import * as indexes from './migrations/0005_indexes.js';
import * as embeddedVectors from './migrations/0006_embedded_vectors.js';
import * as recordSchemas from './migrations/0007_record_schemas.js';
import * as memories from './migrations/0008_memories.js';
import * as usage from './migrations/0009_usage.js';
import * as knowledge from './migrations/0010_knowledge.js';
import * as agents from './migrations/0011_agents.js';
import * as registry from './migrations/0012_registry.js';
import * as memoriesEmbeddingStatusIndex from './migrations/0013_memories_embedding_status_index.js';
import * as reconcileCursors from './migrations/0014_reconcile_cursors.js';
import * as retryFailedIndexing from './migrations/0015_retry_failed_indexing.js';
import * as memoryTerms from './migrations/0016_memory_terms.js';
import * as memoryMessages from './migrations/0017_memory_messages.js';
import * as keywordCoveringIndexes from './migrations/0018_keyword_covering_indexes.js';
import * as memoryFeedback from './migrations/0019_memory_feedback.js';
import * as webhooks from './migrations/0020_webhooks.js';
import * as memoryExports from './migrations/0021_memory_exports.js';
import * as memoryExpiration from './migrations/0022_memory_expiration.js';
import * as memoryCategories from './migrations/0023_memory_categories.js';
import * as memoryStructuredData from './migrations/0024_memory_structured_data.js';
import * as webhookDeliveryLog from './migrations/0025_webhook_delivery_log.js';
import * as outboxTrace from './migrations/0026_outbox_trace.js';
import * as agentMcpServers from './migrations/0027_agent_mcp_servers.js';
import * as projectSettings from './migrations/0028_project_settings.js';
import * as adminSignOuts from './migrations/0029_admin_sign_outs.js';
import * as idempotencyKeys from './migrations/0030_idempotency_keys.js';
import * as memoryValidity from './migrations/0031_memory_validity.js';
import * as memoryEntities from './migrations/0032_memory_entities.js';
import * as memoriesStatusIndex from './migrations/0033_memories_status_index.js';
import * as memoryTermsPinnedIndexes from './migrations/0034_memory_terms_pinned_indexes.js';

/** Every migration, in order. Names are recorded in `knex_migrations`; never rename one. */
const MIGRATIONS: ReadonlyArray<readonly [string, Knex.Migration]> = [
  ['0001_projects', projects],
  ['0002_api_keys', apiKeys],
  ['0003_outbox', outbox],
  ['0004_probes', probes],
  ['0005_indexes', indexes],
  ['0006_embedded_vectors', embeddedVectors],
  ['0007_record_schemas', recordSchemas],
  ['0008_memories', memories],
  ['0009_usage', usage],
  ['0010_knowledge', knowledge],
  ['0011_agents', agents],
  ['0012_registry', registry],
  ['0013_memories_embedding_status_index', memoriesEmbeddingStatusIndex],
  ['0014_reconcile_cursors', reconcileCursors],
  ['0015_retry_failed_indexing', retryFailedIndexing],
  ['0016_memory_terms', memoryTerms],
  ['0017_memory_messages', memoryMessages],
  ['0018_keyword_covering_indexes', keywordCoveringIndexes],
  ['0019_memory_feedback', memoryFeedback],
  ['0020_webhooks', webhooks],
  ['0021_memory_exports', memoryExports],
  ['0022_memory_expiration', memoryExpiration],
  ['0023_memory_categories', memoryCategories],
  ['0024_memory_structured_data', memoryStructuredData],
  ['0025_webhook_delivery_log', webhookDeliveryLog],
  ['0026_outbox_trace', outboxTrace],
  ['0027_agent_mcp_servers', agentMcpServers],
  ['0028_project_settings', projectSettings],
  ['0029_admin_sign_outs', adminSignOuts],
  ['0030_idempotency_keys', idempotencyKeys],
  ['0031_memory_validity', memoryValidity],
  ['0032_memory_entities', memoryEntities],
  ['0033_memories_status_index', memoriesStatusIndex],
  ['0034_memory_terms_pinned_indexes', memoryTermsPinnedIndexes],
];

/** Migrations compiled into the program, so they run the same under tsx, in Docker and in tests. */
class BuiltInMigrations implements Knex.MigrationSource<string> {
  getMigrations(): Promise<string[]> {
    return Promise.resolve(MIGRATIONS.map(([name]) => name));
  }
  getMigrationName(name: string): string {
    return name;
  }
  getMigration(name: string): Promise<Knex.Migration> {
    const found = MIGRATIONS.find(([n]) => n === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return Promise.resolve(found[1]);
  }
}

const options = (): Knex.MigratorConfig => ({ migrationSource: new BuiltInMigrations() });

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(options())) as [number, string[]];
  return applied;
}

/** Names of migrations not yet applied. */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const [, pending] = (await db.migrate.list(options())) as [unknown[], Array<{ file: string } | string>];
  return pending.map((p) => (typeof p === 'string' ? p : p.file));
}

/** Releases the migration lock left behind by a migrate process that was killed. */
export async function releaseMigrationLock(db: Knex): Promise<void> {
  await db.migrate.forceFreeMigrationsLock(options());
}
