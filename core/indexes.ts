import { isUniqueViolation, type IndexesRepository, type IndexRow } from '../db/repositories/indexes.repository.js';
import type { CollectionSpec, Metric, VectorMatch, VectorStore } from '../contracts/vector-store.js';
import { badRequest, conflict, notFound, type FieldError } from '../lib/errors.js';
import { newId, nowMs } from '../lib/time.js';
import type { Embedders } from '../providers/registry.js';
import { METADATA_KEY_PATTERN, parseFilter, type FilterScope } from '../contracts/filter/filter.js';
import type { ConfigCache } from './config-cache.js';

/** Limits of the index data plane, documented in the README and the OpenAPI document. */
export const INDEX_LIMITS = {
  /** Vectors or records per upsert, ids per fetch or delete. */
  batch: 1000,
  /** Serialised JSON size of one vector's metadata. */
  metadataBytes: 40_960,
  maxDimension: 4096,
  maxTopK: 1000,
  maxIdLength: 512,
  maxTags: 20,
} as const;

/** Index names: lowercase letters, digits and hyphens, as Pinecone names them. */
export const INDEX_NAME = '^[a-z0-9][a-z0-9-]{0,44}$';

/** Index filters name metadata keys directly (`{"genre": {"eq": "drama"}}`). */
const INDEX_FILTER_SCOPE: FilterScope = { columns: {}, metadata: 'root' };

export type DeletionProtection = 'enabled' | 'disabled';

/** An index as the API shows it. */
export interface IndexView {
  name: string;
  dimension: number;
  metric: Metric;
  embed_model: string | null;
  managed: boolean;
  field_map: { text: string } | null;
  deletion_protection: DeletionProtection;
  tags: Record<string, string>;
  created_at: number;
  updated_at: number;
}

export interface CreateIndexInput {
  name: string;
  dimension?: number;
  metric?: Metric;
  embed?: { model: string; field_map?: { text: string } };
  embed_model?: string;
  deletion_protection?: DeletionProtection | boolean;
  tags?: Record<string, string>;
}

export interface ConfigureIndexInput {
  deletion_protection?: DeletionProtection | boolean;
  tags?: Record<string, string>;
}

export interface VectorInput {
  id: string;
  values: number[];
  metadata?: Record<string, unknown>;
}

export interface QueryInput {
  vector?: number[];
  text?: string;
  id?: string;
  top_k?: number;
  filter?: unknown;
  include_values?: boolean;
  include_metadata?: boolean;
}

export interface QueryMatch {
  id: string;
  score: number;
  values?: number[];
  metadata?: Record<string, unknown>;
}

export interface DeleteVectorsInput {
  ids?: string[];
  filter?: unknown;
  delete_all?: boolean;
}

/**
 * Vector indexes: Pinecone-style named indexes of a project, raw (the caller sends vectors of a
 * fixed dimension) or managed (text is embedded server-side by the index's model). The index row
 * lives in the database, and is read through the project's configuration cache (every data-plane
 * call reads it); its vectors live in the vector store, one collection per index, and the store is
 * their source of truth.
 */
export class Indexes {
  constructor(
    private readonly repository: IndexesRepository,
    private readonly store: VectorStore,
    private readonly embedders: Embedders,
    private readonly cache: ConfigCache,
  ) {}

  async create(projectId: string, input: CreateIndexInput): Promise<IndexView> {
    return this.cache.write(projectId, () => this.insert(projectId, input));
  }

  private async insert(projectId: string, input: CreateIndexInput): Promise<IndexView> {
    const embedModel = input.embed?.model ?? input.embed_model;
    const raw = input.dimension !== undefined;
    if (raw === (embedModel !== undefined)) {
      throw badRequest(
        'invalid_index',
        raw
          ? 'Give either dimension (with metric) for raw vectors or an embedding model for server-side embedding, not both.'
          : 'Give either dimension (with metric) for raw vectors or embed: {model} (or embed_model) for server-side embedding.',
      );
    }
    if (input.embed && input.embed_model !== undefined) {
      throw badRequest('invalid_index', 'Give the embedding model once: embed.model or embed_model, not both.');
    }
    let dimension = input.dimension ?? 0;
    let model: string | null = null;
    if (embedModel !== undefined) {
      model = this.embedders.validate(embedModel);
      dimension = await this.embedders.get(model).dimension();
    }
    const now = nowMs();
    const id = newId();
    const row: IndexRow = {
      id,
      project_id: projectId,
      name: input.name,
      dimension,
      metric: input.metric ?? 'cosine',
      embed_model: model,
      field_map: model ? JSON.stringify(input.embed?.field_map ?? { text: 'text' }) : null,
      deletion_protection: protectionOn(input.deletion_protection),
      tags: JSON.stringify(checkTags(input.tags ?? {})),
      collection: `idx_${id.replaceAll('-', '')}`,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.repository.insert(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`An index named "${input.name}" already exists in this project.`, 'index_exists');
      throw err;
    }
    try {
      await this.store.ensureCollection(collectionOf(row));
    } catch (err) {
      // No index without its collection: the caller may retry the same create.
      await this.repository.delete(projectId, id);
      throw err;
    }
    return view(row);
  }

  async list(projectId: string, limit: number, offset: number): Promise<IndexView[]> {
    return (await this.repository.list(projectId, limit, offset)).map(view);
  }

  async get(projectId: string, name: string): Promise<IndexView> {
    return view(await this.row(projectId, name));
  }

  /** Sets deletion protection and merges tags (a tag set to "" is removed). */
  async configure(projectId: string, name: string, input: ConfigureIndexInput): Promise<IndexView> {
    if (input.deletion_protection === undefined && input.tags === undefined) return this.get(projectId, name);
    return this.cache.write(projectId, () => this.change(projectId, name, input));
  }

  private async change(projectId: string, name: string, input: ConfigureIndexInput): Promise<IndexView> {
    const row = await this.storedRow(projectId, name);
    const tags = { ...(JSON.parse(row.tags) as Record<string, string>) };
    for (const [key, value] of Object.entries(input.tags ?? {})) {
      if (value === '') delete tags[key];
      else tags[key] = value;
    }
    const changes = {
      deletion_protection: input.deletion_protection === undefined ? Boolean(row.deletion_protection) : protectionOn(input.deletion_protection),
      tags: JSON.stringify(checkTags(tags)),
      updated_at: nowMs(),
    };
    await this.repository.update(projectId, row.id, changes);
    return view({ ...row, ...changes });
  }

  /** Deletes the index and its vectors; refused (409) while deletion protection is enabled. */
  async remove(projectId: string, name: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.storedRow(projectId, name);
      if (row.deletion_protection) {
        throw conflict(`Index "${name}" has deletion protection enabled; disable it with PATCH first.`, 'deletion_protected');
      }
      await this.store.dropCollection(row.collection);
      await this.repository.delete(projectId, row.id);
    });
  }

  async upsert(projectId: string, name: string, vectors: VectorInput[]): Promise<{ upserted_count: number }> {
    const row = await this.row(projectId, name);
    const errors: FieldError[] = [];
    vectors.forEach((v, i) => {
      checkValues(v.values, row.dimension, `/vectors/${i}/values`, errors);
      checkMetadata(v.metadata ?? {}, `/vectors/${i}/metadata`, errors);
    });
    rejectIf(errors, 'Some vectors cannot be stored');
    await this.store.upsert(collectionOf(row), projectId, dedupe(vectors).map((v) => ({ id: v.id, values: v.values, metadata: v.metadata ?? {} })));
    return { upserted_count: vectors.length };
  }

  /**
   * Managed indexes: each record carries its id (`id` or `_id`), its text in the field named by
   * the index's field map, and any other fields as metadata (the text is kept in metadata too).
   */
  async upsertRecords(projectId: string, name: string, records: Array<Record<string, unknown>>): Promise<{ upserted_count: number }> {
    const row = await this.row(projectId, name);
    const fieldMap = managed(row);
    const errors: FieldError[] = [];
    const prepared = records.map((record, i) => {
      const { id: plainId, _id: underscoreId, ...metadata } = record;
      const id = underscoreId ?? plainId;
      if (plainId !== undefined && underscoreId !== undefined) errors.push({ path: `/records/${i}`, message: 'give id or _id, not both' });
      if (typeof id !== 'string' || id.length === 0 || id.length > INDEX_LIMITS.maxIdLength) {
        errors.push({ path: `/records/${i}/_id`, message: `must be a string of 1 to ${INDEX_LIMITS.maxIdLength} characters` });
      }
      const text = metadata[fieldMap.text];
      if (typeof text !== 'string' || text.trim() === '') {
        errors.push({ path: `/records/${i}/${fieldMap.text}`, message: `must be the non-empty text to embed (the index's field_map.text is "${fieldMap.text}")` });
      }
      checkMetadata(metadata, `/records/${i}`, errors);
      return { id: String(id), text: String(text), metadata };
    });
    rejectIf(errors, 'Some records cannot be stored');
    const unique = dedupe(prepared);
    const vectors = await this.embedders.get(row.embed_model as string).embed(unique.map((r) => r.text), 'document');
    await this.store.upsert(
      collectionOf(row),
      projectId,
      unique.map((r, i) => ({ id: r.id, values: vectors[i] as Float32Array, metadata: r.metadata })),
    );
    return { upserted_count: records.length };
  }

  async query(projectId: string, name: string, input: QueryInput): Promise<QueryMatch[]> {
    const row = await this.row(projectId, name);
    const given = (['vector', 'text', 'id'] as const).filter((k) => input[k] !== undefined);
    if (given.length !== 1) {
      throw badRequest('invalid_query', `Query by exactly one of vector, text (managed indexes) or id; got ${given.length === 0 ? 'none' : given.join(' and ')}.`);
    }
    const filter = parseFilter(input.filter, INDEX_FILTER_SCOPE, '/filter');
    const spec = collectionOf(row);
    let vector: ArrayLike<number>;
    if (input.vector !== undefined) {
      const errors: FieldError[] = [];
      checkValues(input.vector, row.dimension, '/vector', errors);
      rejectIf(errors, 'The query vector is not usable');
      vector = input.vector;
    } else if (input.text !== undefined) {
      managed(row);
      vector = (await this.embedders.get(row.embed_model as string).embed([input.text], 'query'))[0] as Float32Array;
    } else {
      const [stored] = await this.store.fetch(spec, projectId, [input.id as string], { includeValues: true });
      if (!stored) throw notFound(`Index "${name}" has no vector with id "${input.id}".`, 'vector_not_found');
      vector = stored.values as number[];
    }
    const matches = await this.store.search(spec, projectId, vector, {
      topK: input.top_k ?? 10,
      filter,
      includeValues: input.include_values === true,
    });
    return matches.map((m) => match(m, input.include_values === true, input.include_metadata === true));
  }

  async fetch(projectId: string, name: string, ids: string[]): Promise<Record<string, { id: string; values: number[]; metadata: Record<string, unknown> }>> {
    const row = await this.row(projectId, name);
    const found = await this.store.fetch(collectionOf(row), projectId, ids, { includeValues: true });
    const vectors: Record<string, { id: string; values: number[]; metadata: Record<string, unknown> }> = {};
    for (const p of found) vectors[p.id] = { id: p.id, values: p.values ?? [], metadata: p.metadata };
    return vectors;
  }

  async deleteVectors(projectId: string, name: string, input: DeleteVectorsInput): Promise<void> {
    const row = await this.row(projectId, name);
    const given = (['ids', 'filter', 'delete_all'] as const).filter((k) => input[k] !== undefined);
    if (given.length !== 1 || input.delete_all === false) {
      throw badRequest('invalid_delete', 'Delete by exactly one of ids, filter, or delete_all: true.');
    }
    const spec = collectionOf(row);
    if (input.ids) await this.store.deleteByIds(spec, projectId, input.ids);
    else if (input.delete_all) await this.store.deleteByFilter(spec, projectId, null);
    else {
      const filter = parseFilter(input.filter, INDEX_FILTER_SCOPE, '/filter');
      if (filter === null) throw badRequest('invalid_delete', 'An empty filter would delete everything; send delete_all: true for that.');
      await this.store.deleteByFilter(spec, projectId, filter);
    }
  }

  async stats(projectId: string, name: string): Promise<{ name: string; dimension: number; metric: Metric; vector_count: number }> {
    const row = await this.row(projectId, name);
    const count = await this.store.count(collectionOf(row), projectId);
    return { name: row.name, dimension: row.dimension, metric: row.metric, vector_count: count };
  }

  /** The index's row from the configuration cache (shared: do not change). */
  private async row(projectId: string, name: string): Promise<IndexRow> {
    const row = await (await this.cache.at(projectId)).read(`index:${name}`, async () => (await this.repository.find(projectId, name)) ?? null);
    if (!row) throw this.missing(name);
    return row;
  }

  /** The index's row read from the database, for writes, which must start from what is stored. */
  private async storedRow(projectId: string, name: string): Promise<IndexRow> {
    const row = await this.repository.find(projectId, name);
    if (!row) throw this.missing(name);
    return row;
  }

  private missing(name: string) {
    return notFound(`There is no index named "${name}" in this project.`, 'index_not_found');
  }
}

/** The vector-store collection of an index: no columns, metadata only. */
export const collectionOf = (row: IndexRow): CollectionSpec => ({
  name: row.collection,
  dimension: row.dimension,
  metric: row.metric,
  columns: {},
});

const protectionOn = (value: DeletionProtection | boolean | undefined): boolean => value === true || value === 'enabled';

function view(row: IndexRow): IndexView {
  return {
    name: row.name,
    dimension: row.dimension,
    metric: row.metric,
    embed_model: row.embed_model,
    managed: row.embed_model !== null,
    field_map: row.field_map ? (JSON.parse(row.field_map) as { text: string }) : null,
    deletion_protection: row.deletion_protection ? 'enabled' : 'disabled',
    tags: JSON.parse(row.tags) as Record<string, string>,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

function managed(row: IndexRow): { text: string } {
  if (!row.embed_model || !row.field_map) {
    throw badRequest('index_not_managed', `Index "${row.name}" takes raw vectors; text and records need an index created with embed: {model}.`);
  }
  return JSON.parse(row.field_map) as { text: string };
}

function match(m: VectorMatch, withValues: boolean, withMetadata: boolean): QueryMatch {
  const out: QueryMatch = { id: m.id, score: m.score };
  if (withValues) out.values = m.values ?? [];
  if (withMetadata) out.metadata = m.metadata;
  return out;
}

/** The last of several entries with one id wins, as if they were upserted in order. */
function dedupe<T extends { id: string }>(items: T[]): T[] {
  return [...new Map(items.map((item) => [item.id, item])).values()];
}

function checkTags(tags: Record<string, string>): Record<string, string> {
  if (Object.keys(tags).length > INDEX_LIMITS.maxTags) {
    throw badRequest('too_many_tags', `An index has at most ${INDEX_LIMITS.maxTags} tags.`);
  }
  return tags;
}

function checkValues(values: number[], dimension: number, path: string, errors: FieldError[]): void {
  if (values.length !== dimension) {
    errors.push({ path, message: `has ${values.length} values; this index takes ${dimension}` });
    return;
  }
  const bad = values.findIndex((v) => !Number.isFinite(v) || Math.abs(v) > 3.4e38);
  if (bad !== -1) errors.push({ path: `${path}/${bad}`, message: 'must be a finite number within float32 range' });
}

function checkMetadata(metadata: Record<string, unknown>, path: string, errors: FieldError[]): void {
  for (const [key, value] of Object.entries(metadata)) {
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!METADATA_KEY_PATTERN.test(key)) {
      errors.push({ path: at, message: 'metadata keys are letters, digits, _ and -, starting with a letter or _, at most 64 characters' });
    } else if (!isMetadataValue(value)) {
      errors.push({ path: at, message: 'metadata values are strings, finite numbers, booleans or arrays of strings' });
    }
  }
  const size = Buffer.byteLength(JSON.stringify(metadata));
  if (size > INDEX_LIMITS.metadataBytes) {
    errors.push({ path, message: `metadata is ${size} bytes as JSON; the limit is ${INDEX_LIMITS.metadataBytes}` });
  }
}

function isMetadataValue(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function rejectIf(errors: FieldError[], what: string): void {
  if (errors.length === 0) return;
  const first = errors[0] as FieldError;
  throw badRequest('validation_failed', `${what}: ${first.path} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}.`, errors);
}

