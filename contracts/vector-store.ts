import type { ColumnType, FilterNode, Scalar } from './filter/filter.js';
import { badRequest } from '../lib/errors.js';

/** Similarity metrics. Scores: cosine similarity and dot product (higher is better), squared euclidean distance (lower is better). */
export const METRICS = ['cosine', 'euclidean', 'dotproduct'] as const;
export type Metric = (typeof METRICS)[number];

/** Whether a higher score is the better match under a metric. */
export const higherIsBetter = (metric: Metric): boolean => metric !== 'euclidean';

/**
 * One physical collection: a purpose (memories, knowledge chunks) or one user index.
 * `name` is the physical name (`^[a-z_][a-z0-9_]{0,199}$`); `columns` are the scalar fields
 * that filters may name besides free-form metadata. Every collection is partitioned by project.
 */
export interface CollectionSpec {
  name: string;
  dimension: number;
  metric: Metric;
  columns: Record<string, ColumnType>;
}

/**
 * Most bytes of a point's metadata as JSON, in every store: Milvus refuses a JSON field longer
 * than this (its default `common.json.maxLength`), so the embedded store refuses it too and both
 * profiles answer the same 400 instead of one of them failing later in the background.
 */
export const MAX_METADATA_BYTES = 65_536;

/** Throws a 400 naming `what` when `metadata` as JSON is longer than `MAX_METADATA_BYTES`. */
export function checkMetadataSize(metadata: unknown, what: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata ?? {}));
  if (bytes > MAX_METADATA_BYTES) {
    throw badRequest('metadata_too_large', `The metadata of ${what} is ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES} are allowed.`);
  }
}

/** A vector to write. Column values are typed by the collection's `columns`. */
export interface VectorPoint {
  id: string;
  values: ArrayLike<number>;
  columns?: Record<string, Scalar | null>;
  metadata?: Record<string, unknown>;
}

/** A stored vector as read back. `values` only when asked for. */
export interface StoredPoint {
  id: string;
  values?: number[];
  columns: Record<string, Scalar | null>;
  metadata: Record<string, unknown>;
}

/** A search hit; `score` follows the metric (see `Metric`). */
export interface VectorMatch extends StoredPoint {
  score: number;
}

export interface SearchOptions {
  topK: number;
  filter?: FilterNode | null;
  includeValues?: boolean;
}

/**
 * Where vectors live: Milvus on the production profile, an exact in-process index persisted in
 * the SQLite file on the embedded profile. Every call is scoped to one project; no call ever
 * reads or changes another project's vectors. Collections are created on first use.
 */
export interface VectorStore {
  readonly kind: 'milvus' | 'embedded';
  /** Creates the collection (and its index) if it does not exist; idempotent. */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  /** Drops the collection and all its vectors; a missing collection is not an error. */
  dropCollection(name: string): Promise<void>;
  /** Inserts or replaces points by id. */
  upsert(spec: CollectionSpec, projectId: string, points: VectorPoint[]): Promise<void>;
  deleteByIds(spec: CollectionSpec, projectId: string, ids: string[]): Promise<void>;
  /** Deletes what matches the filter; `null` deletes all of the project's vectors in the collection. */
  deleteByFilter(spec: CollectionSpec, projectId: string, filter: FilterNode | null): Promise<void>;
  /** The stored points among `ids` (missing ids are left out), in no particular order. */
  fetch(spec: CollectionSpec, projectId: string, ids: string[], options?: { includeValues?: boolean }): Promise<StoredPoint[]>;
  /** Which of `ids` have a vector (no values or metadata read): what reconciliation compares rows against. */
  existing(spec: CollectionSpec, projectId: string, ids: string[]): Promise<Set<string>>;
  /** The `topK` nearest points that pass the filter, best first. */
  search(spec: CollectionSpec, projectId: string, vector: ArrayLike<number>, options: SearchOptions): Promise<VectorMatch[]>;
  count(spec: CollectionSpec, projectId: string, filter?: FilterNode | null): Promise<number>;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
}
