import { ConsistencyLevelEnum, DataType, ErrorCode, type FieldType, type ResStatus, type RowData } from '@zilliz/milvus2-sdk-node';
import type { FilterNode, Scalar, ColumnType } from '../../contracts/filter/filter.js';
import { metadataTypeTags, milvusString, toMilvusExpr } from '../../contracts/filter/milvus-expr.js';
import { badRequest, unavailable } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { MilvusClient, MilvusConnection } from '../milvus.js';
import { checkMetadataSize, type CollectionSpec, type Metric, type SearchOptions, type StoredPoint, type VectorMatch, type VectorPoint, type VectorStore } from '../../contracts/vector-store.js';

// Physical layout of a collection. The primary key is `<project_id>:<id>`: Milvus keys are unique
// per collection, so a bare id would let one project's upsert replace another's vector. Project
// ids cannot hold ':', so the first ':' splits the key unambiguously.
const PK = 'id';
const PROJECT = 'project_id';
const VECTOR = 'vector';
const METADATA = 'metadata';
/** Type tags of the metadata keys (see `metadataTypeTags`), so filters can check types. */
const METADATA_TYPES = 'metadata_types';
const RESERVED = new Set([PK, PROJECT, VECTOR, METADATA, METADATA_TYPES]);

const MAX_ID_BYTES = 512;
const MAX_STRING_BYTES = 1024;
const MAX_TOP_K = 16_384;
/** Rows per insert/upsert request, ids per `in [...]` list. */
const BATCH = 500;
const PROJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const COLUMN_NAME = /^[a-z_][a-z0-9_]{0,63}$/;

const METRIC: Record<Metric, string> = { cosine: 'COSINE', euclidean: 'L2', dotproduct: 'IP' };
const COLUMN_TYPE: Record<ColumnType, DataType> = {
  string: DataType.VarChar,
  number: DataType.Double,
  boolean: DataType.Bool,
  date: DataType.Int64,
};
const STRONG = ConsistencyLevelEnum.Strong;

/**
 * Milvus status codes (`status.code`, Milvus ≥ 2.3 merr) that mean the collection is not there to
 * serve a call: it was dropped (100) or is not loaded (101, e.g. after a Milvus restart or a
 * release). Both are cured by ensuring the collection again, which creates and loads it.
 */
const COLLECTION_NOT_FOUND = 100;
const COLLECTION_NOT_LOADED = 101;

/**
 * Milvus status codes (`status.code`, merr) that blame the request's input: parameter invalid
 * (1100, e.g. a JSON or VarChar value longer than the field allows), missing (1101) or too large
 * (1102). Sending the same request again can never succeed, so they become a 400.
 */
const INPUT_REJECTED = new Set([1100, 1101, 1102]);

/** A Milvus call answered with a non-success status: a bug or a server-side problem, not the caller's. */
class MilvusError extends Error {
  constructor(
    what: string,
    readonly status: ResStatus,
  ) {
    super(`Milvus ${what} failed: ${status.reason || String(status.error_code)} (code ${String(status.code ?? status.error_code)})`);
    this.name = 'MilvusError';
  }
}

/**
 * Vectors in Milvus (production profile). One collection per `CollectionSpec`, shared by all
 * projects through the `project_id` partition key; every expression starts with
 * `project_id == "<project>"`, so no call reaches another project's vectors.
 *
 * - Columns are nullable scalar fields (VarChar 1024, Double, Bool, Int64 epoch ms for dates): a
 *   null column value is stored as Milvus NULL and read back as `null`.
 * - Metadata is a JSON field, with its type tags in a second JSON field (`metadata_types`) that
 *   filters test before comparing (see `toMilvusExpr`).
 * - Collections are created Strong-consistent and every read asks for Strong consistency, so a
 *   caller reads its own writes.
 * - Index: HNSW (M 16, efConstruction 200); search ef = max(64, topK). Scores as Milvus gives them:
 *   cosine similarity and inner product (higher is better), squared L2 distance (lower is better).
 */
export class MilvusVectorStore implements VectorStore {
  readonly kind = 'milvus' as const;
  /** Collections known to exist, indexed and loaded in this process. */
  private readonly ensured = new Map<string, Promise<void>>();

  constructor(
    private readonly connection: MilvusConnection,
    private readonly log: Logger,
  ) {}

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    validateSpec(spec);
    let pending = this.ensured.get(spec.name);
    if (!pending) {
      pending = this.call('ensure collection', (client) => this.create(client, spec));
      this.ensured.set(spec.name, pending);
      pending.catch(() => {
        if (this.ensured.get(spec.name) === pending) this.ensured.delete(spec.name);
      });
    }
    await pending;
  }

  async dropCollection(name: string): Promise<void> {
    this.ensured.delete(name);
    await this.call('drop collection', async (client) => {
      const has = await client.hasCollection({ collection_name: name });
      check(has.status, 'has collection');
      if (!has.value) return;
      const dropped = await client.dropCollection({ collection_name: name });
      check(dropped, 'drop collection');
      this.log.info({ collection: name }, 'Milvus collection dropped');
    });
  }

  async upsert(spec: CollectionSpec, projectId: string, points: VectorPoint[]): Promise<void> {
    if (points.length === 0) return;
    const byId = new Map<string, RowData>();
    for (const point of points) byId.set(point.id, toRow(spec, projectId, point));
    const rows = [...byId.values()];
    for (let i = 0; i < rows.length; i += BATCH) {
      const data = rows.slice(i, i + BATCH);
      await this.onCollection(spec, 'upsert', async (client) => {
        check((await client.upsert({ collection_name: spec.name, data })).status, 'upsert');
      });
    }
  }

  async deleteByIds(spec: CollectionSpec, projectId: string, ids: string[]): Promise<void> {
    const scope = tenancy(projectId);
    for (const chunk of chunks(unique(ids), BATCH)) {
      const filter = `${scope} && ${PK} in [${chunk.map((id) => milvusString(primaryKey(projectId, id))).join(', ')}]`;
      await this.onCollection(spec, 'delete', async (client) => {
        check((await client.delete({ collection_name: spec.name, filter })).status, 'delete');
      });
    }
  }

  async deleteByFilter(spec: CollectionSpec, projectId: string, filter: FilterNode | null): Promise<void> {
    const expr = scoped(projectId, filter);
    await this.onCollection(spec, 'delete', async (client) => {
      check((await client.delete({ collection_name: spec.name, filter: expr })).status, 'delete');
    });
  }

  async fetch(spec: CollectionSpec, projectId: string, ids: string[], options: { includeValues?: boolean } = {}): Promise<StoredPoint[]> {
    const scope = tenancy(projectId);
    const found: StoredPoint[] = [];
    for (const chunk of chunks(unique(ids), BATCH)) {
      const filter = `${scope} && ${PK} in [${chunk.map((id) => milvusString(primaryKey(projectId, id))).join(', ')}]`;
      const rows = await this.onCollection(spec, 'query', async (client) => {
        const res = await client.query({
          collection_name: spec.name,
          filter,
          output_fields: outputFields(spec, options.includeValues === true),
          limit: chunk.length,
          consistency_level: STRONG,
        });
        check(res.status, 'query');
        return res.data;
      });
      for (const row of rows) found.push(fromRow(spec, projectId, row, options.includeValues === true));
    }
    return found;
  }

  async existing(spec: CollectionSpec, projectId: string, ids: string[]): Promise<Set<string>> {
    const scope = tenancy(projectId);
    const found = new Set<string>();
    for (const chunk of chunks(unique(ids), BATCH)) {
      const filter = `${scope} && ${PK} in [${chunk.map((id) => milvusString(primaryKey(projectId, id))).join(', ')}]`;
      const rows = await this.onCollection(spec, 'query', async (client) => {
        const res = await client.query({ collection_name: spec.name, filter, output_fields: [PK], limit: chunk.length, consistency_level: STRONG });
        check(res.status, 'query');
        return res.data;
      });
      for (const row of rows) found.add(String(row[PK]).slice(projectId.length + 1));
    }
    return found;
  }

  async search(spec: CollectionSpec, projectId: string, vector: ArrayLike<number>, options: SearchOptions): Promise<VectorMatch[]> {
    const values = vectorValues(spec, vector, 'The query vector');
    const topK = options.topK;
    if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) throw badRequest('invalid_top_k', `top_k must be an integer from 1 to ${MAX_TOP_K}`);
    const includeValues = options.includeValues === true;
    const filter = scoped(projectId, options.filter ?? null);
    const results = await this.onCollection(spec, 'search', async (client) => {
      const res = await client.search({
        collection_name: spec.name,
        anns_field: VECTOR,
        data: values,
        limit: topK,
        filter,
        output_fields: outputFields(spec, includeValues),
        params: { ef: Math.max(64, topK) },
        consistency_level: STRONG,
      });
      check(res.status, 'search');
      return res.results;
    });
    const matches = results.map((hit) => ({ ...fromRow(spec, projectId, hit, includeValues), score: Number(hit.score) }));
    const sign = spec.metric === 'euclidean' ? 1 : -1;
    return matches.sort((a, b) => sign * (a.score - b.score));
  }

  async count(spec: CollectionSpec, projectId: string, filter: FilterNode | null = null): Promise<number> {
    const expr = scoped(projectId, filter);
    return this.onCollection(spec, 'count', async (client) => {
      const res = await client.query({ collection_name: spec.name, filter: expr, output_fields: ['count(*)'], consistency_level: STRONG });
      check(res.status, 'count');
      return Number(res.data[0]?.['count(*)'] ?? 0);
    });
  }

  async ping(): Promise<void> {
    await this.call('health check', () => this.connection.ping());
  }

  /** Creates (if missing), checks, indexes and loads one collection. */
  private async create(client: MilvusClient, spec: CollectionSpec): Promise<void> {
    const name = spec.name;
    const has = await client.hasCollection({ collection_name: name });
    check(has.status, 'has collection');
    if (!has.value) {
      const created = await client.createCollection({
        collection_name: name,
        consistency_level: 'Strong',
        enable_dynamic_field: false,
        fields: schemaOf(spec),
      });
      // Another process may have created it in between: that is success too.
      if (created.error_code !== ErrorCode.SUCCESS && !/already exist/i.test(created.reason)) check(created, 'create collection');
      else this.log.info({ collection: name, dimension: spec.dimension, metric: spec.metric }, 'Milvus collection created');
    }
    const described = await client.describeCollection({ collection_name: name });
    check(described.status, 'describe collection');
    const problems = schemaProblems(spec, described.schema.fields);
    if (problems.length > 0) throw new Error(`Milvus collection "${name}" does not match its spec: ${problems.join('; ')}`);

    const index = await client.describeIndex({ collection_name: name, field_name: VECTOR });
    const existing = index.status.error_code === ErrorCode.SUCCESS ? index.index_descriptions.find((d) => d.field_name === VECTOR) : undefined;
    if (existing) {
      const metric = existing.params.find((p) => p.key === 'metric_type')?.value;
      if (metric && String(metric).toUpperCase() !== METRIC[spec.metric]) {
        throw new Error(`Milvus collection "${name}" is indexed with metric ${String(metric)}, not ${METRIC[spec.metric]}`);
      }
    } else {
      const made = await client.createIndex({
        collection_name: name,
        field_name: VECTOR,
        index_type: 'HNSW',
        metric_type: METRIC[spec.metric],
        params: { M: 16, efConstruction: 200 },
      });
      if (made.error_code !== ErrorCode.SUCCESS && !/already exist/i.test(made.reason)) check(made, 'create index');
    }
    check(await client.loadCollection({ collection_name: name }), 'load collection');
  }

  /**
   * Runs `op` on an ensured collection. When it fails because the collection is not loaded or
   * not found (by Milvus status code; after a Milvus restart, a release, or a drop by another
   * process), or the SDK fails and the collection turns out to be gone, the collection is ensured
   * afresh (created, indexed, loaded) and `op` retried once.
   */
  private async onCollection<T>(spec: CollectionSpec, what: string, op: (client: MilvusClient) => Promise<T>): Promise<T> {
    await this.ensureCollection(spec);
    return this.call(what, async (client) => {
      try {
        return await op(client);
      } catch (err) {
        if (unreachable(err)) throw err;
        if (!notServing(err)) {
          // some SDK calls fail with their own TypeError on a dropped collection: ask Milvus
          const has = await client.hasCollection({ collection_name: spec.name });
          if (has.status.error_code !== ErrorCode.SUCCESS || has.value) throw err;
        }
        this.log.warn({ collection: spec.name, err: errorText(err) }, 'Milvus collection missing or not loaded; ensuring it again');
        this.ensured.delete(spec.name);
        await this.ensureCollection(spec);
        return op(client);
      }
    });
  }

  /** Runs `op` with a connected client; an unreachable Milvus becomes a 503. */
  private async call<T>(what: string, op: (client: MilvusClient) => Promise<T>): Promise<T> {
    try {
      return await op(await this.connection.get());
    } catch (err) {
      if (unreachable(err)) throw unavailable(`Milvus is unreachable (${what}); retry later`);
      throw err;
    }
  }
}

/** A Milvus answer saying the collection is not loaded or not found, by status code. */
function notServing(err: unknown): boolean {
  if (!(err instanceof MilvusError)) return false;
  const codes = [Number(err.status.code), Number(err.status.error_code)];
  return codes.includes(COLLECTION_NOT_LOADED) || codes.includes(COLLECTION_NOT_FOUND) || err.status.error_code === ErrorCode.CollectionNotExists;
}

/** Throws for a non-success status: a 400 when Milvus blames the input (by code), else a `MilvusError`. */
export function check(status: ResStatus, what: string): void {
  if (status.error_code === ErrorCode.SUCCESS) return;
  if (INPUT_REJECTED.has(Number(status.code)) || status.error_code === ErrorCode.IllegalArgument) {
    throw badRequest('vector_rejected', `Milvus rejected the ${what}: ${(status.reason || String(status.error_code)).slice(0, 500)} (code ${String(status.code ?? status.error_code)})`);
  }
  throw new MilvusError(what, status);
}

/**
 * gRPC UNAVAILABLE (14) or DEADLINE_EXCEEDED (4), a socket that never connected, or a call cut
 * off by the server closing its connection (RESOURCE_EXHAUSTED "Bandwidth exhausted", gRPC's
 * status for a GOAWAY the client is to back off from): each passes once the client reconnects.
 */
function unreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 14 || code === 4) return true;
  return /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT|UNAVAILABLE|DEADLINE_EXCEEDED|No connection established|Bandwidth exhausted/.test(errorText(err));
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  const reason = (err as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : String(err);
}

function validateSpec(spec: CollectionSpec): void {
  if (!/^[a-z_][a-z0-9_]{0,199}$/.test(spec.name)) throw new Error(`Invalid collection name "${spec.name}"`);
  if (!Number.isInteger(spec.dimension) || spec.dimension < 1 || spec.dimension > 32_768) {
    throw new Error(`Invalid dimension ${spec.dimension} for collection "${spec.name}"`);
  }
  for (const column of Object.keys(spec.columns)) {
    if (!COLUMN_NAME.test(column) || RESERVED.has(column) || ['and', 'or', 'not', 'in', 'like', 'is', 'null', 'exists', 'true', 'false'].includes(column)) {
      throw new Error(`Invalid column name "${column}" for collection "${spec.name}"`);
    }
  }
}

function schemaOf(spec: CollectionSpec): FieldType[] {
  return [
    { name: PK, data_type: DataType.VarChar, is_primary_key: true, max_length: 64 + 1 + MAX_ID_BYTES },
    { name: PROJECT, data_type: DataType.VarChar, max_length: 64, is_partition_key: true },
    { name: VECTOR, data_type: DataType.FloatVector, dim: spec.dimension },
    ...Object.entries(spec.columns).map(([name, type]): FieldType => ({
      name,
      data_type: COLUMN_TYPE[type],
      nullable: true,
      ...(type === 'string' ? { max_length: MAX_STRING_BYTES } : {}),
    })),
    { name: METADATA, data_type: DataType.JSON },
    { name: METADATA_TYPES, data_type: DataType.JSON },
  ];
}

function schemaProblems(spec: CollectionSpec, fields: Array<{ name: string; data_type: string; dim?: unknown; type_params?: Array<{ key: string; value: unknown }> }>): string[] {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const problems: string[] = [];
  const vector = byName.get(VECTOR);
  const dim = vector?.dim ?? vector?.type_params?.find((p) => p.key === 'dim')?.value;
  if (Number(dim) !== spec.dimension) problems.push(`dimension is ${String(dim)}, not ${spec.dimension}`);
  for (const [name, type] of Object.entries(spec.columns)) {
    const field = byName.get(name);
    if (!field || field.data_type !== DataType[COLUMN_TYPE[type]]) problems.push(`column "${name}" is ${field?.data_type ?? 'missing'}, not ${DataType[COLUMN_TYPE[type]]}`);
  }
  for (const name of [PK, PROJECT, METADATA, METADATA_TYPES]) if (!byName.has(name)) problems.push(`field "${name}" is missing`);
  return problems;
}

function tenancy(projectId: string): string {
  if (!PROJECT_ID.test(projectId)) throw new Error(`Invalid project id "${projectId}"`);
  return `${PROJECT} == ${milvusString(projectId)}`;
}

/** The project's scope, and the filter's expression if any. */
function scoped(projectId: string, filter: FilterNode | null): string {
  const expr = toMilvusExpr(filter, { metadataField: METADATA, typesField: METADATA_TYPES });
  return expr ? `${tenancy(projectId)} && ${expr}` : tenancy(projectId);
}

function primaryKey(projectId: string, id: string): string {
  return `${projectId}:${id}`;
}

function outputFields(spec: CollectionSpec, includeValues: boolean): string[] {
  return [PK, ...Object.keys(spec.columns), METADATA, ...(includeValues ? [VECTOR] : [])];
}

function toRow(spec: CollectionSpec, projectId: string, point: VectorPoint): RowData {
  tenancy(projectId);
  if (typeof point.id !== 'string' || point.id.length === 0 || Buffer.byteLength(point.id) > MAX_ID_BYTES) {
    throw badRequest('invalid_vector', `A vector id must be a non-empty string of at most ${MAX_ID_BYTES} bytes (got ${JSON.stringify(String(point.id).slice(0, 40))})`);
  }
  const metadata = point.metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw badRequest('invalid_vector', `The metadata of vector "${point.id}" must be an object`);
  }
  checkMetadataSize(metadata, `vector "${point.id}"`);
  const row: RowData = {
    [PK]: primaryKey(projectId, point.id),
    [PROJECT]: projectId,
    [VECTOR]: vectorValues(spec, point.values, `Vector "${point.id}"`),
    [METADATA]: metadata as RowData[string],
    [METADATA_TYPES]: metadataTypeTags(metadata),
  };
  const columns = point.columns ?? {};
  for (const name of Object.keys(columns)) {
    if (!Object.hasOwn(spec.columns, name)) throw new Error(`Collection "${spec.name}" has no column "${name}"`);
  }
  for (const [name, type] of Object.entries(spec.columns)) {
    row[name] = columnValue(point.id, name, type, Object.hasOwn(columns, name) ? columns[name] : null);
  }
  return row;
}

function columnValue(id: string, name: string, type: ColumnType, value: Scalar | null | undefined): Scalar | null {
  if (value === null || value === undefined) return null;
  const ok =
    type === 'string'
      ? typeof value === 'string'
      : type === 'boolean'
        ? typeof value === 'boolean'
        : typeof value === 'number' && Number.isFinite(value) && (type === 'number' || Number.isInteger(value));
  if (!ok) throw new Error(`Column "${name}" of vector "${id}" must be a ${type === 'date' ? 'integer epoch ms' : type}, got ${JSON.stringify(value)}`);
  if (typeof value === 'string' && Buffer.byteLength(value) > MAX_STRING_BYTES) {
    throw badRequest('invalid_vector', `Column "${name}" of vector "${id}" is longer than ${MAX_STRING_BYTES} bytes`);
  }
  return value;
}

function vectorValues(spec: CollectionSpec, values: ArrayLike<number>, what: string): number[] {
  const array = Array.from(values);
  if (array.length !== spec.dimension) {
    throw badRequest('invalid_vector', `${what} has ${array.length} dimensions; the index has ${spec.dimension}`);
  }
  if (!array.every((v) => typeof v === 'number' && Number.isFinite(v))) throw badRequest('invalid_vector', `${what} holds a value that is not a finite number`);
  return array;
}

function fromRow(spec: CollectionSpec, projectId: string, row: Record<string, unknown>, includeValues: boolean): StoredPoint {
  const columns: Record<string, Scalar | null> = {};
  for (const [name, type] of Object.entries(spec.columns)) {
    const value = row[name];
    // Int64 comes back as a string.
    columns[name] = value === null || value === undefined ? null : type === 'date' ? Number(value) : (value as Scalar);
  }
  const metadata = row[METADATA];
  const point: StoredPoint = {
    id: String(row[PK]).slice(projectId.length + 1),
    columns,
    metadata: typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {},
  };
  if (includeValues && Array.isArray(row[VECTOR])) point.values = (row[VECTOR] as unknown[]).map(Number);
  return point;
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
