import type { Knex } from 'knex';
import jsonMergePatch from 'json-merge-patch';
import type { MemoriesRepository, MemoryListFilter, MemoryRow } from '../db/repositories/memories.repository.js';
import type { EntityColumn, EntityPins } from '../db/repositories/memory-terms.repository.js';
import type { OutboxRepository } from '../db/repositories/outbox.repository.js';
import type { UsageRepository } from '../db/repositories/usage.repository.js';
import { checkMetadataSize, type CollectionSpec, type VectorPoint, type VectorStore } from '../contracts/vector-store.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import { endsJob, type JobContext } from '../contracts/jobs/handlers.js';
import { Coalescer } from '../lib/coalescer.js';
import { AppError, badRequest, conflict, notFound } from '../lib/errors.js';
import { newId, nowMs } from '../lib/time.js';
import { modelCollection } from './model-collection.js';
import { DEFAULT_EMBED_MODEL, type Embedders } from '../providers/registry.js';
import { parseFilter, toPredicate, type FilterNode, type FilterRow, type FilterScope } from '../contracts/filter/filter.js';
import { MemoryKeywords, type KeywordHit } from './memory/keyword.js';
import { namedTime } from './memory/signals.js';
import { cosine, reciprocalRankFusion, RRF_K } from './ranking.js';
import { renderEmbedText, validateRecord, type Schemas, type SchemaVersion } from './schemas.js';
import { utcDay } from './usage.js';

/** Entity ids a memory may carry; memory search needs at least one of them. */
export const ENTITY_IDS = ['user_id', 'agent_id', 'run_id', 'app_id'] as const;
export type EntityIds = Partial<Record<(typeof ENTITY_IDS)[number], string>>;

/** What memory-search filters may name: entity ids, the schema, the creation time, and metadata keys. */
export const MEMORY_FILTER_SCOPE: FilterScope = {
  columns: { user_id: 'string', agent_id: 'string', run_id: 'string', app_id: 'string', schema: 'string', created_at: 'date' },
  metadata: 'field',
};

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

/** How memory search ranks: dense and keyword fused with the time signal (the default), or one side alone. */
export type MemorySearchMode = 'hybrid' | 'dense' | 'keyword';

export interface MemorySearchInput {
  query: string;
  output_format?: string;
  filters: unknown;
  top_k?: number;
  /** The least cosine similarity of query and memory a result may have, in every mode. */
  threshold?: number;
  mode?: MemorySearchMode;
}

/** One memory-search hit (typed record or free-form memory). */
export interface MemorySearchResult {
  id: string;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  metadata: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  score: number;
}

/**
 * Typed records and free-form memories. The row is the source of truth and commits with an
 * outbox entry; the `memory.index` job derives the vector (template → embedding → memories
 * collection, keyed by the row id) and records the outcome in `embedding_status`. A change bumps
 * the row's revision and queues the job again; a delete queues it to remove the vector.
 */
export class Memories {
  constructor(
    private readonly db: Knex,
    private readonly rows: MemoriesRepository,
    private readonly outbox: OutboxRepository,
    private readonly schemas: Schemas,
    private readonly store: VectorStore,
    private readonly embedders: Embedders,
    private readonly usage: UsageRepository,
    private readonly keywords: MemoryKeywords,
    private readonly onOutboxWrite: () => void,
    private readonly embedModel: string = DEFAULT_EMBED_MODEL,
  ) {
    this.upserts = new Coalescer(
      async ({ spec, projectId }, points) => {
        // two revisions of one memory in a batch: the later submission wins, as it would one at a time
        await this.store.upsert(spec, projectId, [...new Map(points.map((p) => [p.id, p])).values()]);
        return points.map(() => undefined);
      },
      // a batch the store rejects for one point's input is written again point by point, so only
      // that memory ends `failed` and the others in the batch are indexed
      { maxBatch: UPSERT_BATCH, parallel: 2, isolate: endsJob },
    );
  }

  /**
   * Vector writes of concurrent indexing jobs, coalesced per collection and project: one store
   * call per batch instead of one per memory (the store's per-call cost dominates a single point).
   */
  private readonly upserts: Coalescer<{ spec: CollectionSpec; projectId: string }, VectorPoint, undefined>;

  /** Validates against the schema's latest version and stores the record, pinned to that version. */
  async storeRecord(projectId: string, schemaName: string, input: StoreRecordInput): Promise<RecordView> {
    const version = await this.schemas.get(projectId, schemaName);
    validateRecord(version, input.record);
    const row = newMemoryRow(projectId, input, renderEmbedText(version, input.record), { schema_id: version.schema_id, schema_name: version.name, schema_version: version.version, record: JSON.stringify(input.record) });
    await this.db.transaction((trx) => this.insertAll(trx, [row]));
    await this.committed();
    return recordView(row);
  }

  async getRecord(projectId: string, schemaName: string, id: string): Promise<RecordView> {
    return recordView(await this.recordRow(projectId, schemaName, id));
  }

  async listRecords(projectId: string, schemaName: string, filter: EntityIds, limit: number, offset: number): Promise<RecordView[]> {
    await this.schemas.get(projectId, schemaName);
    const rows = await this.rows.list(projectId, { ...(filter as MemoryListFilter), schema_name: schemaName }, limit, offset);
    return rows.map(recordView);
  }

  /**
   * Applies an RFC 7396 merge patch to the record's values (null removes a field), validates the
   * result against the version the record is pinned to, and re-derives its vector.
   */
  async patchRecord(projectId: string, schemaName: string, id: string, patch: Record<string, unknown>): Promise<RecordView> {
    // Read outside the transaction (SQLite has one connection, which the transaction holds);
    // the update then applies only if nobody changed the record in between.
    const row = await this.recordRow(projectId, schemaName, id);
    const version = await this.pinned(projectId, row);
    const merged = jsonMergePatch.apply(structuredClone(JSON.parse(row.record as string) as Record<string, unknown>), patch) as Record<string, unknown>;
    validateRecord(version, merged);
    const memory = renderEmbedText(version, merged);
    const now = nowMs();
    const updated = await this.db.transaction(async (trx) => {
      const changed = await this.rows.update(trx, projectId, id, row.revision, { record: JSON.stringify(merged), memory, metadata: row.metadata, updated_at: now, term_count: MemoryKeywords.length(memory) });
      if (changed === 0) throw conflict(`The record "${id}" changed while this update was applied; read it again and retry.`, 'record_changed');
      await this.keywords.write(trx, [{ ...row, memory }]);
      await this.rows.addHistory(trx, { id: newId(), project_id: projectId, memory_id: id, event: 'UPDATE', old_memory: row.memory, new_memory: memory, created_at: now });
      await this.outbox.add(trx, projectId, envelope('memory.index', { projectId, memoryId: id, revision: row.revision + 1 }));
      return (await this.rows.get(projectId, id, trx)) as MemoryRow;
    });
    await this.committed();
    return recordView(updated);
  }

  async deleteRecord(projectId: string, schemaName: string, id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const row = await this.recordRow(projectId, schemaName, id, trx);
      await this.remove(trx, row);
    });
    await this.committed();
  }

  /**
   * Stores free-form memories (mem0 add), each indexed in the background. With `skipKnown`, a
   * text the same entity already has as a free-form memory (ignoring case) is not stored again.
   * `eventTime` (epoch ms, default now) is when what they say happened: their `created_at`.
   */
  async add(projectId: string, owner: MemoryOwner, texts: string[], options: { skipKnown?: boolean; eventTime?: number; messages?: boolean } = {}): Promise<MemoryView[]> {
    requireEntity(owner);
    let fresh = [...new Map(texts.map((t) => t.trim()).filter(Boolean).map((t) => [t.toLowerCase(), t])).values()];
    if (options.skipKnown && fresh.length > 0) {
      const pinned = Object.fromEntries(ENTITY_IDS.filter((k) => owner[k] !== undefined).map((k) => [k, owner[k]])) as MemoryListFilter;
      const known = await this.rows.knownTexts(projectId, pinned, fresh);
      fresh = fresh.filter((t) => !known.has(t.toLowerCase()));
    }
    const rows = fresh.map((memory) => ({ ...newMemoryRow(projectId, owner, memory, undefined, options.eventTime), is_message: options.messages === true ? 1 : 0 }));
    if (rows.length === 0) return [];
    await this.db.transaction((trx) => this.insertAll(trx, rows));
    await this.committed();
    return rows.map(memoryView);
  }

  /** Memories (free-form and typed) matching a filter that names an entity, newest first. */
  async list(projectId: string, filters: unknown, page: number, pageSize: number): Promise<{ count: number; results: MemoryView[] }> {
    const filter = parseFilter(filters, MEMORY_FILTER_SCOPE, '/filters');
    const pinned = filter ? entityPins(filter) : {};
    if (!filter || Object.keys(pinned).length === 0) {
      throw badRequest('entity_required', `filters must hold at least one of ${ENTITY_IDS.join(', ')} (e.g. {"user_id": "alice"}).`);
    }
    // SQL narrows to the pinned entity; the predicate applies the rest of the filter exactly.
    const accept = toPredicate(filter);
    const rows = (await this.rows.list(projectId, pinned, 100_000, 0)).filter((row) => accept(filterRow(row)));
    return { count: rows.length, results: rows.slice((page - 1) * pageSize, page * pageSize).map(memoryView) };
  }

  async get(projectId: string, id: string): Promise<MemoryView> {
    return memoryView(await this.row(projectId, id));
  }

  /**
   * mem0 update: new text and/or metadata for a memory. A typed record's text is derived from its
   * values, so its text is changed through PATCH /v1/records instead; its metadata may change here.
   * With `revision`, only that revision is changed (409 `memory_changed` otherwise).
   */
  async update(projectId: string, id: string, input: { text?: string; metadata?: Record<string, unknown> }, revision?: number): Promise<MemoryView> {
    const row = await this.row(projectId, id);
    if (input.text !== undefined && row.schema_name) {
      throw badRequest('typed_record', `Memory "${id}" is a ${row.schema_name} record; change its values with PATCH /v1/records/${row.schema_name}/${id}.`);
    }
    const memory = input.text?.trim() ?? row.memory;
    if (memory === '') throw badRequest('validation_failed', 'text must not be empty.');
    if (input.metadata !== undefined) checkMetadataSize(input.metadata, `memory "${id}"`);
    const now = nowMs();
    const updated = await this.db.transaction(async (trx) => {
      const metadata = input.metadata === undefined ? row.metadata : JSON.stringify(input.metadata);
      const changed = await this.rows.update(trx, projectId, id, revision ?? row.revision, { record: row.record, memory, metadata, updated_at: now, term_count: MemoryKeywords.length(memory) });
      if (changed === 0) throw conflict(`Memory "${id}" changed while this update was applied; read it again and retry.`, 'memory_changed');
      if (memory !== row.memory) await this.keywords.write(trx, [{ ...row, memory }]);
      await this.rows.addHistory(trx, { id: newId(), project_id: projectId, memory_id: id, event: 'UPDATE', old_memory: row.memory, new_memory: memory, created_at: now });
      await this.outbox.add(trx, projectId, envelope('memory.index', { projectId, memoryId: id, revision: row.revision + 1 }));
      return (await this.rows.get(projectId, id, trx)) as MemoryRow;
    });
    await this.committed();
    return memoryView(updated);
  }

  /** Deletes a memory; with `revision`, only that revision of it (409 `memory_changed` otherwise). */
  async delete(projectId: string, id: string, revision?: number): Promise<void> {
    const row = await this.row(projectId, id);
    if (revision !== undefined && row.revision !== revision) throw conflict(`Memory "${id}" changed before it could be deleted; read it again and retry.`, 'memory_changed');
    await this.db.transaction((trx) => this.remove(trx, row));
    await this.committed();
  }

  /** Deletes every memory of one entity (mem0 deleteAll); returns how many. */
  async deleteAll(projectId: string, entities: EntityIds): Promise<number> {
    if (!ENTITY_IDS.some((k) => entities[k] !== undefined)) {
      throw badRequest('entity_required', `Name whose memories to delete: one of ${ENTITY_IDS.join(', ')}.`);
    }
    let deleted = 0;
    for (;;) {
      const batch = await this.rows.list(projectId, entities as MemoryListFilter, 500, 0);
      if (batch.length === 0) break;
      await this.db.transaction(async (trx) => {
        for (const row of batch) await this.remove(trx, row);
      });
      deleted += batch.length;
    }
    await this.committed();
    return deleted;
  }

  /**
   * Retention: deletes these memories as a user delete would (history, vector removal by
   * `memory.index`), in one transaction. Each row is re-read inside it and one already gone is
   * skipped, so sweeps running at once delete each row once. Returns how many this call deleted.
   */
  async removeExpired(projectId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    // One lock order for every caller, so concurrent sweeps cannot deadlock on MySQL.
    const sorted = [...ids].sort();
    const deleted = await this.db.transaction(async (trx) => {
      let count = 0;
      for (const id of sorted) {
        const row = await this.rows.get(projectId, id, trx);
        if (row && (await this.remove(trx, row))) count += 1;
      }
      return count;
    });
    if (deleted > 0) await this.committed();
    return deleted;
  }

  async history(projectId: string, id: string): Promise<HistoryView[]> {
    const rows = await this.rows.history(projectId, id);
    if (rows.length === 0) throw notFound(`There is no memory with id "${id}" in this project.`, 'memory_not_found');
    return rows.map((h) => ({ id: h.id, memory_id: h.memory_id, old_memory: h.old_memory, new_memory: h.new_memory, event: h.event, created_at: Number(h.created_at), updated_at: Number(h.created_at) }));
  }

  private async row(projectId: string, id: string): Promise<MemoryRow> {
    const row = await this.rows.get(projectId, id);
    if (!row) throw notFound(`There is no memory with id "${id}" in this project.`, 'memory_not_found');
    return row;
  }

  /**
   * Memory search over an entity's memories (an entity id is required in `filters`). `hybrid`
   * (the default) fuses, by reciprocal rank, the dense list (cosine over the embeddings), the BM25
   * keyword list, and — when the query names a day, month or year — the dense list of the memories
   * whose event time falls in it. `dense` and `keyword` rank by one side alone. The rest of the
   * filter applies to every list; `threshold` is the least cosine similarity a result may have.
   */
  async search(projectId: string, input: MemorySearchInput): Promise<MemorySearchResult[]> {
    const filter = parseFilter(input.filters, MEMORY_FILTER_SCOPE, '/filters');
    if (!filter || Object.keys(pinnedEntities(filter)).length === 0) {
      throw badRequest(
        'entity_required',
        `filters must hold at least one of ${ENTITY_IDS.join(', ')} (e.g. {"user_id": "alice"}), alone or inside a top-level AND.`,
      );
    }
    const mode = input.mode ?? 'hybrid';
    const topK = input.top_k ?? 10;
    const pool = mode === 'hybrid' ? Math.max(topK * 4, FUSION_POOL) : topK;
    const needsVector = mode !== 'keyword' || input.threshold !== undefined;
    // the query is embedded (on the model's thread) while the keyword side reads its postings
    const vectorPass = needsVector
      ? Promise.resolve()
          .then(() => this.embedders.get(this.embedModel).embed([input.query], 'query'))
          .then(([v]) => v as Float32Array)
      : null;
    vectorPass?.catch(() => undefined);
    const rows = new Map<string, MemoryRow>();
    // In fusion a keyword hit votes only when it holds at least half of the query's informative
    // weight: one shared word of a long question says little, and such weak hits, ranked among
    // the first of a short list, would push the dense list's answers out of the top.
    const keyword = mode !== 'dense' ? await this.keywordHits(projectId, filter, input.query, pool, mode === 'hybrid' ? MIN_KEYWORD_COVERAGE : 0, rows) : null;
    const lists: Array<Array<{ id: string; score: number }>> = [];
    const similarity = new Map<string, number>();
    let vector: Float32Array | null = null;
    let spec: CollectionSpec | null = null;
    if (mode !== 'keyword') {
      const span = mode === 'hybrid' ? namedTime(input.query) : null;
      try {
        spec = await this.collection();
        vector = await (vectorPass as Promise<Float32Array>);
        const [dense, inSpan] = await Promise.all([
          this.store.search(spec, projectId, vector, { topK: pool, filter }),
          span ? this.store.search(spec, projectId, vector, { topK: pool, filter: withinSpan(filter, span) }) : Promise.resolve(null),
        ]);
        for (const m of [...dense, ...(inSpan ?? [])]) similarity.set(m.id, m.score);
        lists.push(dense);
        if (inSpan && inSpan.length > 0) lists.push(inSpan);
      } catch (err) {
        // Hybrid search outlives an embedder or vector store outage on its keyword side alone
        // (unless a threshold needs the similarity); dense search has nothing else to answer with.
        if (!(mode === 'hybrid' && input.threshold === undefined && isUnavailable(err))) throw err;
      }
    } else if (vectorPass) {
      spec = await this.collection();
      vector = await vectorPass;
    }
    if (keyword) lists.push(keyword);
    let ranked = mode === 'hybrid' ? fuse(lists) : (lists[0] ?? []);
    if (input.threshold !== undefined) {
      await this.measureSimilarity(spec as CollectionSpec, projectId, vector as Float32Array, ranked.map((r) => r.id).filter((id) => !similarity.has(id)), similarity);
      ranked = ranked.filter((r) => (similarity.get(r.id) ?? -Infinity) >= (input.threshold as number));
    }
    // The rows are the truth: a vector whose row is gone (deleted, not yet unindexed) is left out.
    const wanted = ranked.slice(0, topK + 8).map((r) => r.id).filter((id) => !rows.has(id));
    for (const row of await this.rows.getMany(projectId, wanted)) rows.set(row.id, row);
    return ranked.flatMap((r) => {
      const row = rows.get(r.id);
      return row ? [searchResult(row, r.score)] : [];
    }).slice(0, topK);
  }

  /**
   * The keyword list: BM25 over the memories of the entities the filter pins, best first, keeping
   * only those that hold `minCoverage` of the query's weight and pass the whole filter (their rows,
   * read to check it, are kept in `rows`). The index is asked for more only when the rest of the
   * filter turned some away.
   */
  private async keywordHits(projectId: string, filter: FilterNode, query: string, limit: number, minCoverage: number, rows: Map<string, MemoryRow>): Promise<KeywordHit[]> {
    const pins = pinnedEntities(filter);
    // a filter of entity pins alone is what the index already applied
    if (isPinsOnly(filter, pins)) return this.keywords.search(projectId, pins, query, limit, minCoverage);
    const accept = toPredicate(filter);
    for (let asked = limit; ; asked *= 4) {
      const candidates = await this.keywords.search(projectId, pins, query, asked, minCoverage);
      const unread = candidates.map((c) => c.id).filter((id) => !rows.has(id));
      for (const row of await this.rows.getMany(projectId, unread)) rows.set(row.id, row);
      const hits = candidates.filter((c) => {
        const row = rows.get(c.id);
        return row !== undefined && accept(filterRow(row));
      });
      if (hits.length >= limit || candidates.length < asked) return hits.slice(0, limit);
    }
  }

  /** Adds the cosine similarity to the query of memories not in a dense list (read from their vectors). */
  private async measureSimilarity(spec: CollectionSpec, projectId: string, vector: Float32Array, ids: string[], into: Map<string, number>): Promise<void> {
    if (ids.length === 0) return;
    for (const point of await this.store.fetch(spec, projectId, ids, { includeValues: true })) {
      into.set(point.id, cosine(vector, point.values as number[]));
    }
  }

  /**
   * The `memory.index` job: makes the vector match the row. A missing row removes the vector; an
   * older revision than the row's is skipped (the newer job does the work), and a row that
   * changed or went while the vector was written is checked again after the write. A transient
   * failure (store or model unavailable) leaves the row `pending` with the error and is retried by
   * the queue until it succeeds; a permanent one (input that can never be embedded) marks it
   * `failed` with the reason.
   */
  async index(projectId: string, memoryId: string, revision: number, ctx: JobContext): Promise<void> {
    const row = await this.rows.get(projectId, memoryId);
    if (!row) {
      await this.store.deleteByIds(await this.collection(), projectId, [memoryId]);
      return;
    }
    if (row.revision !== revision) return;
    try {
      const spec = await this.collection();
      const vector = await this.vectorOf(row);
      await this.upserts.submit(`${spec.name}\u0000${projectId}`, { spec, projectId }, [
        {
          id: row.id,
          values: vector as Float32Array,
          columns: {
            user_id: row.user_id,
            agent_id: row.agent_id,
            run_id: row.run_id,
            app_id: row.app_id,
            schema: row.schema_name,
            created_at: Number(row.created_at),
          },
          metadata: JSON.parse(row.metadata) as Record<string, unknown>,
        },
      ]);
      if ((await this.rows.markEmbedding(projectId, memoryId, revision, 'indexed')) === 1) return;
      // The row changed while this job worked. A row deleted meanwhile must leave no vector (its
      // removal may have run before this write), and a newer revision whose job wrote first must
      // not be overwritten by this older text.
      const current = await this.rows.get(projectId, memoryId);
      if (!current) await this.store.deleteByIds(spec, projectId, [memoryId]);
      else if (current.revision !== revision) await this.index(projectId, memoryId, current.revision, ctx);
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
      const permanent = endsJob(err);
      await this.rows.markEmbedding(projectId, memoryId, revision, permanent ? 'failed' : 'pending', reason).catch((markErr: unknown) => {
        ctx.log.warn({ err: markErr }, 'could not record the indexing error on the row');
      });
      throw err;
    }
  }

  /**
   * After a write committed: its change is counted for every process's keyword caches, then the
   * outbox relay is woken for its jobs. Only then is the write acknowledged.
   */
  private async committed(): Promise<void> {
    await this.keywords.settled();
    this.onOutboxWrite();
  }

  /**
   * Stores rows whose vectors are written elsewhere (a bulk import or a benchmark's seed, rows from
   * `newMemoryRow`): the rows and their keyword index in one transaction, without history or jobs.
   */
  async importRows(rows: MemoryRow[]): Promise<void> {
    await this.db.transaction(async (trx) => {
      await this.rows.insertMany(trx, rows);
      await this.keywords.write(trx, rows, true);
    });
    await this.keywords.settled();
  }

  /**
   * The vector a memory is searched by: its text's embedding, or for a message of a conversation,
   * that plus half the embedding of the message before it (within `CONTEXT_WINDOW_MS`), normalised.
   * A reply ("Mostly Monday and Wednesday after work") is then found by what it answers ("when do
   * you go climbing?"); on the memory-quality conversations dense recall@10 rose from 62.6 to 71.0.
   */
  private async vectorOf(row: MemoryRow): Promise<Float32Array> {
    const embedder = this.embedders.get(this.embedModel);
    const previous = row.is_message ? await this.rows.previousMessage(row, CONTEXT_WINDOW_MS) : undefined;
    if (!previous) return (await embedder.embed([row.memory], 'document'))[0] as Float32Array;
    const [own, context] = (await embedder.embed([row.memory, previous.memory], 'document')) as [Float32Array, Float32Array];
    const mixed = own.map((x, i) => x + CONTEXT_WEIGHT * (context[i] as number));
    const norm = Math.hypot(...mixed);
    return norm === 0 ? own : mixed.map((x) => x / norm);
  }

  /** The memories collection of the embedding model in use. */
  collection(): Promise<CollectionSpec> {
    return modelCollection(this.embedders.get(this.embedModel), 'memories', MEMORY_FILTER_SCOPE.columns);
  }

  /** New rows, each with its ADD history entry and its indexing job, metered, in the caller's transaction. */
  private async insertAll(trx: Knex.Transaction, rows: MemoryRow[]): Promise<void> {
    if (rows.length > 0) await this.usage.increment(trx, (rows[0] as MemoryRow).project_id, 'memory.add', utcDay((rows[0] as MemoryRow).created_at), rows.length);
    for (const row of rows) {
      await this.rows.insert(trx, row);
      // history tells when a change was written (the row's created_at is when its event happened)
      await this.rows.addHistory(trx, { id: newId(), project_id: row.project_id, memory_id: row.id, event: 'ADD', old_memory: null, new_memory: row.memory, created_at: row.updated_at });
      await this.outbox.add(trx, row.project_id, envelope('memory.index', { projectId: row.project_id, memoryId: row.id, revision: 1 }));
    }
    await this.keywords.write(trx, rows, true);
  }

  /** Deletes a row with its DELETE history entry and vector removal; false (and nothing written) when it was already gone. */
  private async remove(trx: Knex.Transaction, row: MemoryRow): Promise<boolean> {
    if ((await this.rows.delete(trx, row.project_id, row.id)) === 0) return false;
    await this.keywords.remove(trx, [row.id], row.project_id);
    await this.rows.addHistory(trx, { id: newId(), project_id: row.project_id, memory_id: row.id, event: 'DELETE', old_memory: row.memory, new_memory: null, created_at: nowMs() });
    await this.outbox.add(trx, row.project_id, envelope('memory.index', { projectId: row.project_id, memoryId: row.id, revision: row.revision + 1 }));
    return true;
  }

  private async recordRow(projectId: string, schemaName: string, id: string, trx?: Knex.Transaction): Promise<MemoryRow> {
    const row = await this.rows.get(projectId, id, trx);
    if (!row || row.schema_name !== schemaName) throw notFound(`There is no ${schemaName} record with id "${id}" in this project.`, 'record_not_found');
    return row;
  }

  private pinned(projectId: string, row: MemoryRow): Promise<SchemaVersion> {
    return this.schemas.getVersion(projectId, row.schema_id as string, row.schema_version as number);
  }

  /**
   * mem0 add with infer: for each fact, the entity's free-form memories it is compared with — the
   * `topK` search finds for it, and the entity's newest memories not indexed yet, which search
   * cannot see (a fact said a moment ago). Typed records are left out: their text follows their values.
   */
  async related(projectId: string, owner: EntityIds, facts: string[], topK: number): Promise<RelatedMemory[][]> {
    const pins = Object.fromEntries(ENTITY_IDS.filter((k) => owner[k] !== undefined).map((k) => [k, owner[k]])) as MemoryListFilter;
    const filters = { AND: Object.entries(pins).map(([k, v]) => ({ [k]: v })) };
    const unindexed = (await this.rows.list(projectId, pins, UNINDEXED_CANDIDATES, 0)).filter((r) => r.schema_name === null && r.embedding_status !== 'indexed');
    const hits = await Promise.all(facts.map((query) => this.search(projectId, { query, filters, top_k: topK, mode: 'dense' })));
    const found = new Map((await this.rows.getMany(projectId, [...new Set(hits.flat().map((h) => h.id))])).map((r) => [r.id, r]));
    return hits.map((matches) => {
      const rows = [...matches.flatMap((m) => found.get(m.id) ?? []), ...unindexed].filter((r) => r.schema_name === null);
      return [...new Map(rows.map((r) => [r.id, { ...memoryView(r), revision: r.revision }])).values()];
    });
  }
}

/** A fresh memory row (free-form unless `typed` gives its schema and values), pending indexing. */
export function newMemoryRow(
  projectId: string,
  input: EntityIds & { metadata?: Record<string, unknown> },
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
    revision: 1,
    embedding_status: 'pending',
    embedding_error: null,
    term_count: MemoryKeywords.length(memory),
    created_at: eventTime ?? now,
    updated_at: now,
  };
}

/** The entity ids a filter pins with `eq` (directly or in a top-level AND): what SQL can narrow by. */
function entityPins(node: FilterNode): MemoryListFilter {
  const pins: MemoryListFilter = {};
  for (const n of node.kind === 'and' ? node.nodes : [node]) {
    if (n.kind === 'cmp' && n.op === 'eq' && n.target.kind === 'column' && (ENTITY_IDS as readonly string[]).includes(n.target.name)) {
      pins[n.target.name as keyof MemoryListFilter] = String(n.value);
    }
  }
  return pins;
}

/**
 * The entity ids a filter pins with `eq` or `in` (directly or in a top-level AND): what memory
 * search requires at least one of, and what the keyword index narrows by.
 */
function pinnedEntities(node: FilterNode): EntityPins {
  const pins: EntityPins = {};
  for (const n of node.kind === 'and' ? node.nodes : [node]) {
    if (n.kind !== 'cmp' || n.target.kind !== 'column' || !(ENTITY_IDS as readonly string[]).includes(n.target.name)) continue;
    const values = n.op === 'eq' ? [n.value] : n.op === 'in' ? (n.value as unknown[]) : null;
    if (values) pins[n.target.name as EntityColumn] = values.map(String);
  }
  return pins;
}

/** Whether the filter says nothing but which entities' memories to search: each of its nodes is one of `pins`. */
function isPinsOnly(node: FilterNode, pins: EntityPins): boolean {
  return (node.kind === 'and' ? node.nodes.length : 1) === Object.keys(pins).length;
}

/** The filter narrowed to memories whose event time falls in `span`. */
function withinSpan(filter: FilterNode, span: { start: number; end: number }): FilterNode {
  const target = { kind: 'column', name: 'created_at', type: 'date' } as const;
  return {
    kind: 'and',
    nodes: [filter, { kind: 'cmp', op: 'gte', target, value: span.start }, { kind: 'cmp', op: 'lt', target, value: span.end }],
  };
}

/**
 * Reciprocal-rank fusion of ranked lists, best first, the newer memory first on a tie; the score
 * is scaled so that first in every list is 1.
 */
function fuse(lists: Array<Array<{ id: string }>>): Array<{ id: string; score: number }> {
  const top = lists.length / (RRF_K + 1);
  return reciprocalRankFusion(
    lists.map((list) => list.map((hit) => hit.id)),
    (a, b) => (a < b ? 1 : -1),
  ).map(({ id, score }) => ({ id, score: score / top }));
}

/** An embedder or vector store that cannot answer now: unreachable (503), or its model files missing. */
function isUnavailable(err: unknown): boolean {
  return err instanceof AppError && (err.status === 503 || err.code === 'embed_model_unavailable');
}


/** A row as the filter predicate sees it. */
function filterRow(row: MemoryRow): FilterRow {
  return {
    columns: { user_id: row.user_id, agent_id: row.agent_id, run_id: row.run_id, app_id: row.app_id, schema: row.schema_name, created_at: Number(row.created_at) },
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

function memoryView(row: MemoryRow): MemoryView {
  const { id, memory, user_id, agent_id, run_id, app_id, metadata, created_at, updated_at } = searchResult(row, 0);
  return { id, memory, user_id, agent_id, run_id, app_id, metadata, created_at, updated_at, categories: [], embedding_status: row.embedding_status, embedding_error: row.embedding_error };
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

function searchResult(row: MemoryRow, score: number): MemorySearchResult {
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
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    score,
  };
}

/** Whom free-form memories belong to, and the metadata they carry. */
export interface MemoryOwner extends EntityIds {
  metadata?: Record<string, unknown>;
}

/** Throws 400 `entity_required` unless `owner` names at least one entity id. */
export function requireEntity(owner: EntityIds): void {
  if (!ENTITY_IDS.some((k) => owner[k] !== undefined)) {
    throw badRequest('entity_required', `Name whom the memories belong to: one of ${ENTITY_IDS.join(', ')}.`);
  }
}

/** Most memory vectors written in one store call. */
const UPSERT_BATCH = 256;
/** How many of an entity's newest memories `related` looks at for ones not indexed yet. */
const UNINDEXED_CANDIDATES = 20;

/** A memory a new fact is compared with, at the revision it was read. */
export type RelatedMemory = MemoryView & { revision: number };

/** How much of the message before it a message's vector holds (its own text counts 1). */
const CONTEXT_WEIGHT = 0.5;

/** The longest gap between two messages of one conversation, by event time. */
const CONTEXT_WINDOW_MS = 60 * 60_000;

/** The least share of the query's idf weight a keyword hit must hold to vote in hybrid fusion. */
const MIN_KEYWORD_COVERAGE = 0.5;

/** Each list fused by hybrid search holds at least this many memories. */
const FUSION_POOL = 40;

/** mem0's `POST /v3/memories/add/`: messages in, memories out. */
export interface AddMemoriesInput extends MemoryOwner {
  messages: Array<{ role: string; content: string }>;
  /** When what the messages say happened, in unix seconds (mem0's field); default now. */
  timestamp?: number;
  /** false: each message is stored as given; true (mem0's default): facts are picked out of the user's messages. */
  infer?: boolean;
}

/** A memory as mem0's v1 endpoints show it; typed records carry their schema in metadata. */
export interface MemoryView {
  id: string;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  metadata: Record<string, unknown>;
  categories: string[];
  /** `pending` until searchable; `failed` only for input that can never be indexed. */
  embedding_status: MemoryRow['embedding_status'];
  /** Why it failed, or the last error while it is retried (pending). */
  embedding_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface HistoryView {
  id: string;
  memory_id: string;
  old_memory: string | null;
  new_memory: string | null;
  event: string;
  created_at: number;
  updated_at: number;
}
