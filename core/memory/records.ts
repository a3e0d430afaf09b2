import type { Knex } from 'knex';
import jsonMergePatch from 'json-merge-patch';
import type { MemoriesRepository, MemoryListFilter, MemoryRow } from '../../db/repositories/memories.repository.js';
import { checkBatch, conflict, notFound } from '../../lib/errors.js';
import { renderEmbedText, validateRecord, type Schemas, type SchemaVersion } from '../schemas.js';
import { checkBatchSize, newMemoryRow, type EntityIds } from './rows.js';
import type { MemoryWrites } from './writes.js';

/** A typed record as the API shows it. */
export interface RecordView {
  id: string;
  schema: string;
  schema_version: number;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  record: Record<string, unknown>;
  metadata: Record<string, unknown>;
  embedding_status: MemoryRow['embedding_status'];
  embedding_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface StoreRecordInput extends EntityIds {
  record: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/**
 * Typed records (`/v1/records/{schema}`): values validated against a schema and pinned to its
 * version, stored as memories whose text the schema's template derives from the values.
 */
export class Records {
  constructor(
    private readonly rows: MemoriesRepository,
    private readonly writes: MemoryWrites,
    private readonly schemas: Schemas,
  ) {}

  /** Validates against the schema's latest version and stores the record, pinned to that version. */
  async store(projectId: string, schemaName: string, input: StoreRecordInput): Promise<RecordView> {
    const version = await this.schemas.get(projectId, schemaName);
    const row = recordRow(projectId, version, input);
    await this.writes.add([row]);
    return recordView(row);
  }

  /**
   * Stores up to `MAX_BATCH` records of a schema in one transaction (a bulk import), each checked
   * as `store` checks it. Validated whole: when any is invalid, a 400 lists the problems of every
   * invalid one by its index (`/records/3/record/email`) and nothing is stored. In input order.
   */
  async storeMany(projectId: string, schemaName: string, inputs: StoreRecordInput[]): Promise<RecordView[]> {
    checkBatchSize(inputs.length, 'records');
    const version = await this.schemas.get(projectId, schemaName);
    const rows = checkBatch(inputs, '/records', `${schemaName} records`, (input, at) => recordRow(projectId, version, input, at));
    await this.writes.add(rows);
    return rows.map(recordView);
  }

  async get(projectId: string, schemaName: string, id: string): Promise<RecordView> {
    return recordView(await this.row(projectId, schemaName, id));
  }

  async list(projectId: string, schemaName: string, filter: EntityIds, limit: number, offset: number): Promise<RecordView[]> {
    await this.schemas.get(projectId, schemaName);
    const rows = await this.rows.list(projectId, { ...(filter as MemoryListFilter), schema_name: schemaName }, limit, offset);
    return rows.map(recordView);
  }

  /**
   * Applies an RFC 7396 merge patch to the record's values (null removes a field), validates the
   * result against the version the record is pinned to, and re-derives its vector.
   */
  async patch(projectId: string, schemaName: string, id: string, patch: Record<string, unknown>): Promise<RecordView> {
    // Read outside the transaction (SQLite has one connection, which the transaction holds);
    // the update then applies only if nobody changed the record in between.
    const row = await this.row(projectId, schemaName, id);
    const version = await this.pinned(projectId, row);
    const merged = jsonMergePatch.apply(structuredClone(JSON.parse(row.record as string) as Record<string, unknown>), patch) as Record<string, unknown>;
    validateRecord(version, merged);
    const memory = renderEmbedText(version, merged);
    const updated = await this.writes.transaction((tx) =>
      this.writes.update(tx, row, row.revision, { record: JSON.stringify(merged), memory, metadata: row.metadata }, () =>
        conflict(`The record "${id}" changed while this update was applied; read it again and retry.`, 'record_changed'),
      ),
    );
    return recordView(updated);
  }

  async delete(projectId: string, schemaName: string, id: string): Promise<void> {
    await this.writes.transaction(async (tx) => {
      const row = await this.row(projectId, schemaName, id, tx.trx);
      await this.writes.remove(tx, row);
    });
  }

  /**
   * Retention: deletes these records as a user delete would (history, vector removal by
   * `memory.index`), in one transaction. Each row is re-read inside it and one already gone is
   * skipped, so sweeps running at once delete each row once. Returns how many this call deleted.
   */
  async removeExpired(projectId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    // One lock order for every caller, so concurrent sweeps cannot deadlock on MySQL.
    const sorted = [...ids].sort();
    return this.writes.transaction(async (tx) => {
      let count = 0;
      for (const id of sorted) {
        const row = await this.rows.get(projectId, id, tx.trx);
        if (row && (await this.writes.remove(tx, row))) count += 1;
      }
      return count;
    });
  }

  private async row(projectId: string, schemaName: string, id: string, trx?: Knex.Transaction): Promise<MemoryRow> {
    const row = await this.rows.get(projectId, id, trx);
    if (!row || row.schema_name !== schemaName) throw notFound(`There is no ${schemaName} record with id "${id}" in this project.`, 'record_not_found');
    return row;
  }

  private pinned(projectId: string, row: MemoryRow): Promise<SchemaVersion> {
    return this.schemas.getVersion(projectId, row.schema_id as string, row.schema_version as number);
  }
}

/** A new row for a record checked against `version` (its problems located under `at`), pinned to it. */
function recordRow(projectId: string, version: SchemaVersion, input: StoreRecordInput, at = ''): MemoryRow {
  validateRecord(version, input.record, `${at}/record`);
  const typed = { schema_id: version.schema_id, schema_name: version.name, schema_version: version.version, record: JSON.stringify(input.record) };
  return newMemoryRow(projectId, input, renderEmbedText(version, input.record), typed);
}

function recordView(row: MemoryRow): RecordView {
  return {
    id: row.id,
    schema: row.schema_name as string,
    schema_version: Number(row.schema_version),
    user_id: row.user_id,
    agent_id: row.agent_id,
    run_id: row.run_id,
    app_id: row.app_id,
    record: JSON.parse(row.record as string) as Record<string, unknown>,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    embedding_status: row.embedding_status,
    embedding_error: row.embedding_error,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
