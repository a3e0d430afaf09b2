import type { MemoryRow } from '../../db/repositories/memories.repository.js';
import { checkMetadataSize, type CollectionSpec } from '../../contracts/vector-store.js';
import type { FilterRow, FilterScope } from '../../contracts/filter/filter.js';
import { badRequest } from '../../lib/errors.js';
import { newId, nowMs } from '../../lib/time.js';
import type { Embedders } from '../../providers/registry.js';
import { modelCollection } from '../model-collection.js';
import { rowCategories, type Category } from './categories.js';
import { validFrom } from './validity.js';

/** Entity ids a memory may carry; memory search needs at least one of them. */
export const ENTITY_IDS = ['user_id', 'agent_id', 'run_id', 'app_id'] as const;
export type EntityIds = Partial<Record<(typeof ENTITY_IDS)[number], string>>;

/** Whom free-form memories belong to, the metadata they carry, and the catalogue they are categorized by (default mem0's). */
export interface MemoryOwner extends EntityIds {
  metadata?: Record<string, unknown>;
  categories?: readonly Category[];
  /** The values the add's `structured_data_schema` asked for, extracted from its messages. */
  structured_data?: Record<string, unknown>;
  /** mem0's expiration: the last day ('YYYY-MM-DD', UTC) the memories are shown; null or absent, never. */
  expiration_date?: string | null;
}

/** The most records or memories one batch request stores (one transaction). */
export const MAX_BATCH = 1_000;

/** Throws 400 `batch_too_large` when a batch would store more than `MAX_BATCH` `what`. */
export function checkBatchSize(count: number, what: string): void {
  if (count > MAX_BATCH) throw badRequest('batch_too_large', `A batch stores at most ${MAX_BATCH} ${what}; this one has ${count}. Send it in several requests.`);
}

/** Throws 400 `entity_required` unless `owner` names at least one entity id. */
export function requireEntity(owner: EntityIds): void {
  if (!ENTITY_IDS.some((k) => owner[k] !== undefined)) {
    throw badRequest('entity_required', `Name whom the memories belong to: one of ${ENTITY_IDS.join(', ')}.`);
  }
}

/**
 * Where a memory's categories travel with its metadata — in its vector and in the rows filters
 * test — so that `categories` filters run where the other filters run. No metadata key a filter
 * may name starts with `$`, so this one cannot be reached or spoofed as metadata.
 */
export const CATEGORIES_KEY = '$categories';

/** What memory-search filters may name: entity ids, the schema, the creation time, categories, and metadata keys. */
export const MEMORY_FILTER_SCOPE: FilterScope = {
  columns: { user_id: 'string', agent_id: 'string', run_id: 'string', app_id: 'string', schema: 'string', created_at: 'date' },
  metadata: 'field',
  sets: { categories: CATEGORIES_KEY },
};

/** The memories collection of an embedding model: where memory vectors are written and searched. */
export function memoryCollection(embedders: Embedders, model: string): Promise<CollectionSpec> {
  return modelCollection(embedders.get(model), 'memories', MEMORY_FILTER_SCOPE.columns);
}

/** A fresh memory row (free-form unless `typed` gives its schema and values), pending indexing. */
export function newMemoryRow(
  projectId: string,
  input: MemoryOwner,
  memory: string,
  typed: Pick<MemoryRow, 'schema_id' | 'schema_name' | 'schema_version' | 'record'> = { schema_id: null, schema_name: null, schema_version: null, record: null },
  eventTime?: number,
): MemoryRow {
  // checked at the write: a vector store that refused it later would leave the memory `failed`
  checkMetadataSize(input.metadata, 'the memory');
  const now = nowMs();
  return {
    id: newId(),
    project_id: projectId,
    ...typed,
    memory,
    user_id: input.user_id ?? null,
    agent_id: input.agent_id ?? null,
    run_id: input.run_id ?? null,
    app_id: input.app_id ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
    expiration_date: input.expiration_date ?? null,
    revision: 1,
    embedding_status: 'pending',
    embedding_error: null,
    // worked out with its keyword terms when the row is written (`MemoryWrites`), off the event loop's critical path
    term_count: null,
    categories: null,
    category_set: input.categories ? JSON.stringify(input.categories) : null,
    structured_data: input.structured_data ? JSON.stringify(input.structured_data) : null,
    created_at: eventTime ?? now,
    updated_at: now,
  };
}

/** A row as the filter predicate sees it. */
export function filterRow(row: MemoryRow): FilterRow {
  return {
    columns: { user_id: row.user_id, agent_id: row.agent_id, run_id: row.run_id, app_id: row.app_id, schema: row.schema_name, created_at: Number(row.created_at) },
    metadata: { ...(JSON.parse(row.metadata) as Record<string, unknown>), [CATEGORIES_KEY]: rowCategories(row.categories) },
  };
}

/** What every view of a memory (mem0's, a search hit) shows; a typed record carries its schema and values in metadata. */
export interface MemoryFields {
  id: string;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  metadata: Record<string, unknown>;
  /** mem0's categories, given when the memory is indexed (none before). */
  categories: string[];
  /** The last day ('YYYY-MM-DD', UTC) lists and search show the memory; null: never expires. */
  expiration_date: string | null;
  /** From when (event time) what it says holds: its created_at, or the time of the update that gave it this text. */
  valid_from: number;
  /** Until when it held; null while it still holds (see `validity.ts`). */
  valid_to: number | null;
  /** On a superseded version: the id of the memory that holds the newer text; null otherwise. */
  superseded_by: string | null;
  created_at: number;
  updated_at: number;
}

/** The fields every view of a memory shows, read from its row. */
export function memoryFields(row: MemoryRow): MemoryFields {
  const metadata: Record<string, unknown> = JSON.parse(row.metadata) as Record<string, unknown>;
  if (row.schema_name) {
    Object.assign(metadata, {
      schema: row.schema_name,
      schema_version: Number(row.schema_version),
      record_id: row.id,
      record: JSON.parse(row.record as string) as Record<string, unknown>,
    });
  }
  return {
    id: row.id,
    memory: row.memory,
    user_id: row.user_id,
    agent_id: row.agent_id,
    run_id: row.run_id,
    app_id: row.app_id,
    metadata,
    categories: rowCategories(row.categories),
    expiration_date: row.expiration_date ?? null,
    valid_from: validFrom(row),
    valid_to: row.valid_to == null ? null : Number(row.valid_to),
    superseded_by: row.superseded_by ?? null,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
