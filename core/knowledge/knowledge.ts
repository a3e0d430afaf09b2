import type { Knex } from 'knex';
import type { ChunkRow, ChunkWithDocument, DocumentRow, KnowledgeBaseRow, KnowledgeRepository } from '../../db/repositories/knowledge.repository.js';
import { isUniqueViolation } from '../../db/repositories/indexes.repository.js';
import type { TransactionalOutbox } from '../../db/transactional-outbox.js';
import type { CollectionSpec, VectorStore } from '../../contracts/vector-store.js';
import { envelope } from '../../contracts/jobs/catalogue.js';
import { endsJob, PermanentJobError, type JobContext } from '../../contracts/jobs/handlers.js';
import { badRequest, conflict, notFound } from '../../lib/errors.js';
import { newId, nowMs } from '../../lib/time.js';
import type { ConfigCache, ConfigSnapshot } from '../config-cache.js';
import { modelCollection } from '../model-collection.js';
import { DEFAULT_EMBED_MODEL, DEFAULT_LANGUAGE_MODEL, modelName, type Embedders } from '../../providers/registry.js';
import { reciprocalRankFusion } from '../ranking.js';
import { parseFilter, type FilterNode, type FilterScope } from '../../contracts/filter/filter.js';
import { DocumentReader } from './document-reader.js';
import { DOCUMENT_LIMITS, overLimit, UnreadableDocument, uploadOverLimit, type SourceType } from './documents.js';
import { KeywordIndexes } from './keyword.js';
import type { Reranking, RerankReport } from '../reranking.js';

/** What knowledge search filters may name: the document's columns and its metadata (`metadata.<key>`). */
export const KNOWLEDGE_FILTER_SCOPE: FilterScope = {
  columns: { document_id: 'string', filename: 'string', source_type: 'string' },
  metadata: 'field',
};

/** Chunking defaults and bounds, in characters. */
export const CHUNKING = { size: 1000, overlap: 150, minSize: 100, maxSize: 8000 } as const;

/** A base's chunk size and overlap with defaults filled in, checked (400 unless overlap < size / 2). */
export function chunking(input: { chunk_size?: number; chunk_overlap?: number }): { chunk_size: number; chunk_overlap: number } {
  const size = input.chunk_size ?? CHUNKING.size;
  const overlap = input.chunk_overlap ?? Math.min(CHUNKING.overlap, Math.floor(size / 4));
  if (overlap >= size / 2) {
    throw badRequest('validation_failed', `chunk_overlap (${overlap}) must be less than half of chunk_size (${size}).`, [{ path: '/chunk_overlap', message: 'must be less than chunk_size / 2' }]);
  }
  return { chunk_size: size, chunk_overlap: overlap };
}

/** Embedding calls of one document in flight at once: enough to keep the model busy, few enough that other work gets a turn. */
const EMBED_WINDOW = 2;
/** Vectors per store call: each call is short, so requests are served between them. */
const UPSERT_SLICE = 256;

/**
 * What the configuration cache holds of a base: all but its revision and `updated_at`, which move
 * as workers process its documents (read those from the database).
 */
type BaseDefinition = Omit<KnowledgeBaseRow, 'revision' | 'updated_at'>;

export interface KnowledgeBaseView {
  id: string;
  name: string;
  instructions: string;
  model: string;
  embed_model: string;
  chunk_size: number;
  chunk_overlap: number;
  document_count: number;
  created_at: number;
  updated_at: number;
}

export interface DocumentView {
  id: string;
  knowledge_base: string;
  filename: string;
  source_type: string;
  size: number;
  metadata: Record<string, unknown>;
  status: string;
  chunk_count: number;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface CreateKnowledgeInput {
  name: string;
  instructions?: string;
  model?: string;
  embed_model?: string;
  chunk_size?: number;
  chunk_overlap?: number;
}

export interface NewDocument {
  filename: string;
  source_type: SourceType;
  content: Buffer;
  metadata?: Record<string, unknown>;
}

export type SearchMode = 'hybrid' | 'dense' | 'keyword';

export interface KnowledgeSearchInput {
  query: string;
  top_k?: number;
  filter?: unknown;
  mode?: SearchMode;
  rerank?: boolean;
}

/** A retrieved passage: the spec's Citation (`text`, `score`, `document_id`, `filename`) plus where it came from. */
export interface Citation {
  text: string;
  score: number;
  document_id: string;
  filename: string;
  chunk_id: string;
  knowledge_base: string;
  start: number;
  end: number;
  heading: string | null;
  /** The signals whose candidates held the passage: dense (its vector), keyword (BM25), or both. */
  found_by: Array<'dense' | 'keyword'>;
}

/** A chunk of a document as the API shows it; `id` is the `chunk_id` of the citations that quote it. */
export interface ChunkView {
  id: string;
  document_id: string;
  ordinal: number;
  text: string;
  start: number;
  end: number;
  heading: string | null;
}

/**
 * Knowledge bases and their documents. A document's bytes are stored with it (the source of
 * truth) and processed by the `document.process` job: text read, cut into chunks that respect the
 * document's structure, embedded in batches, and indexed. Retrieval fuses dense search over the
 * chunk vectors with BM25 keyword search over the chunk text (reciprocal rank fusion), with an
 * optional rerank.
 */
export class Knowledge {
  readonly keyword: KeywordIndexes;
  private readonly reader = new DocumentReader();

  constructor(
    private readonly db: Knex,
    private readonly rows: KnowledgeRepository,
    private readonly outbox: TransactionalOutbox,
    private readonly store: VectorStore,
    private readonly embedders: Embedders,
    private readonly reranking: Reranking,
    private readonly cache: ConfigCache,
  ) {
    this.keyword = new KeywordIndexes(rows);
  }

  async create(projectId: string, input: CreateKnowledgeInput): Promise<KnowledgeBaseView> {
    return this.cache.write(projectId, () => this.insert(projectId, input));
  }

  private async insert(projectId: string, input: CreateKnowledgeInput): Promise<KnowledgeBaseView> {
    const model = modelName('chat', input.model ?? DEFAULT_LANGUAGE_MODEL);
    const embedModel = this.embedders.validate(input.embed_model ?? DEFAULT_EMBED_MODEL);
    const { chunk_size: size, chunk_overlap: overlap } = chunking(input);
    const now = nowMs();
    const row: KnowledgeBaseRow = {
      id: newId(),
      project_id: projectId,
      name: input.name,
      instructions: input.instructions ?? '',
      model,
      embed_model: embedModel,
      chunk_size: size,
      chunk_overlap: overlap,
      revision: 0,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.rows.insertBase(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A knowledge base named "${input.name}" already exists in this project.`, 'knowledge_exists');
      throw err;
    }
    return baseView(row, 0);
  }

  async get(projectId: string, name: string): Promise<KnowledgeBaseView> {
    const row = await this.storedBase(projectId, name);
    const counts = await this.rows.documentCounts(projectId, [row.id]);
    return baseView(row, counts.get(row.id) ?? 0);
  }

  /** The names among `names` that are bases of this project, in the given order. */
  async existing(projectId: string, names: readonly string[]): Promise<string[]> {
    const config = await this.cache.at(projectId);
    const unique = [...new Set(names)];
    const bases = await Promise.all(unique.map((name) => this.definition(config, projectId, name)));
    const found = new Set(unique.filter((_, i) => bases[i] !== null));
    return names.filter((n) => found.has(n));
  }

  async list(projectId: string, limit: number, offset: number): Promise<KnowledgeBaseView[]> {
    const rows = await this.rows.listBases(projectId, limit, offset);
    const counts = await this.rows.documentCounts(projectId, rows.map((r) => r.id));
    return rows.map((r) => baseView(r, counts.get(r.id) ?? 0));
  }

  /** Deletes a base with its documents and chunks; its vectors go in the background (`knowledge.purge`). */
  async delete(projectId: string, name: string): Promise<void> {
    await this.cache.write(projectId, async () => {
      const row = await this.storedBase(projectId, name);
      await this.outbox.write(
        async (tx) => {
          await this.rows.deleteBase(tx.trx, projectId, row.id);
          await tx.add(projectId, envelope('knowledge.purge', { projectId, embedModel: row.embed_model, kbId: row.id }));
        },
        () => this.keyword.forget(row.id),
      );
    });
  }

  /** Stores a document (status `uploaded`) with its processing job; answers before any work is done. */
  async addDocument(projectId: string, name: string, input: NewDocument): Promise<DocumentView> {
    const base = await this.base(projectId, name);
    if (input.content.length > DOCUMENT_LIMITS.maxBytes) {
      throw badRequest('document_too_large', `The document is ${input.content.length} bytes; the limit is ${DOCUMENT_LIMITS.maxBytes} bytes.`);
    }
    if (input.content.length === 0) throw badRequest('validation_failed', 'The document is empty.', [{ path: '/content', message: 'must not be empty' }]);
    const chars = uploadOverLimit(input.content, input.source_type);
    if (chars !== null) throw badRequest('document_too_large', overLimit(chars), [{ path: '/content', message: `must hold at most ${DOCUMENT_LIMITS.maxTextChars} characters` }]);
    const count = (await this.rows.documentCounts(projectId, [base.id])).get(base.id) ?? 0;
    if (count >= DOCUMENT_LIMITS.maxPerBase) {
      throw conflict(`Knowledge base "${name}" already holds ${count} documents, the most one base may hold.`, 'knowledge_full');
    }
    const now = nowMs();
    const row: DocumentRow = {
      id: newId(),
      project_id: projectId,
      kb_id: base.id,
      filename: input.filename,
      source_type: input.source_type,
      size: input.content.length,
      metadata: JSON.stringify(input.metadata ?? {}),
      status: 'uploaded',
      chunk_count: 0,
      error: null,
      revision: 1,
      created_at: now,
      updated_at: now,
    };
    await this.outbox.write(async (tx) => {
      await this.rows.insertDocument(tx.trx, { ...row, source: input.content });
      await tx.add(projectId, envelope('document.process', { projectId, documentId: row.id, revision: 1 }));
    });
    return documentView(row, name);
  }

  async listDocuments(projectId: string, name: string, limit: number, offset: number): Promise<DocumentView[]> {
    const base = await this.base(projectId, name);
    return (await this.rows.listDocuments(projectId, base.id, limit, offset)).map((d) => documentView(d, name));
  }

  async getDocument(projectId: string, name: string, documentId: string): Promise<DocumentView> {
    return documentView(await this.document(projectId, name, documentId), name);
  }

  /** A document's chunks, in their order in the document: what its citations point at. */
  async listChunks(projectId: string, name: string, documentId: string, limit: number, offset: number): Promise<ChunkView[]> {
    const doc = await this.document(projectId, name, documentId);
    return (await this.rows.chunksOfDocument(projectId, doc.id, limit, offset)).map((c) => ({
      id: c.id,
      document_id: c.document_id,
      ordinal: Number(c.ordinal),
      text: c.text,
      start: Number(c.start_offset),
      end: Number(c.end_offset),
      heading: c.heading,
    }));
  }

  /** Deletes a document and its chunks; its vectors are removed by the job the deletion queues. */
  async deleteDocument(projectId: string, name: string, documentId: string): Promise<void> {
    const base = await this.base(projectId, name);
    const doc = await this.document(projectId, name, documentId);
    await this.outbox.write(async (tx) => {
      if ((await this.rows.deleteDocument(tx.trx, projectId, doc.id)) === 0) return;
      await this.rows.bumpRevision(tx.trx, projectId, doc.kb_id, nowMs());
      await tx.add(projectId, envelope('knowledge.purge', { projectId, embedModel: base.embed_model, documentId: doc.id }));
    });
  }

  /** Processes a document again from its stored bytes (e.g. after chunking settings changed or it failed). */
  async reprocess(projectId: string, name: string, documentId: string): Promise<DocumentView> {
    const doc = await this.document(projectId, name, documentId);
    const now = nowMs();
    await this.outbox.write(async (tx) => {
      await this.rows.restart(tx.trx, projectId, doc.id, now);
      await tx.add(projectId, envelope('document.process', { projectId, documentId: doc.id, revision: doc.revision + 1 }));
    });
    return this.getDocument(projectId, name, documentId);
  }

  /**
   * The `document.process` job. Idempotent: chunk ids are `<document>:<n>` and the chunks and
   * vectors of earlier runs are replaced, so a retry after a crash finishes the work without
   * duplicating it. A newer revision wins; a document deleted meanwhile leaves no vectors.
   * An unreadable file or any other permanent failure (see `endsJob`) ends `failed` at once, and
   * so does its job, with the same reason; a transient one (store or model unavailable) is recorded in `error` and retried until it passes.
   */
  async process(projectId: string, documentId: string, revision: number, ctx: JobContext): Promise<void> {
    const doc = await this.rows.document(projectId, documentId);
    if (doc === undefined) return;
    if (doc.revision !== revision || doc.status === 'ready' || doc.status === 'failed') return;
    const base = await this.rows.baseById(projectId, doc.kb_id);
    if (base === undefined) return;
    await this.rows.setStatus(this.db, projectId, doc.id, revision, { status: 'processing', updated_at: nowMs() });
    try {
      const source = (await this.rows.documentSource(projectId, doc.id)) as Buffer;
      // reading and chunking run on a document thread, embedding on the model's thread
      const { chunks } = await this.reader.read(source, doc.source_type as SourceType, { size: base.chunk_size, overlap: base.chunk_overlap });
      const spec = await this.collection(base.embed_model);
      const vectors = await this.embedAll(base.embed_model, chunks.map((c) => (c.heading ? `${c.heading}\n${c.text}` : c.text)));
      const metadata = JSON.parse(doc.metadata) as Record<string, unknown>;
      const rows: ChunkRow[] = chunks.map((c, i) => ({
        id: `${doc.id}:${i}`,
        project_id: projectId,
        kb_id: base.id,
        document_id: doc.id,
        ordinal: i,
        text: c.text,
        start_offset: c.start,
        end_offset: c.end,
        heading: c.heading === null ? null : c.heading.slice(0, 255),
      }));
      // vectors first: a search may briefly find a new chunk before its row, never a row without its vector
      await this.removeVectors(spec, projectId, { documentId: doc.id });
      for (let i = 0; i < rows.length; i += UPSERT_SLICE) {
        await this.store.upsert(
          spec,
          projectId,
          rows.slice(i, i + UPSERT_SLICE).map((row, j) => ({
            id: row.id,
            values: vectors[i + j] as Float32Array,
            columns: { kb_id: base.id, document_id: doc.id, filename: doc.filename, source_type: doc.source_type },
            metadata,
          })),
        );
      }
      const written = await this.db.transaction(async (trx) => {
        const current = await this.rows.document(projectId, doc.id, trx);
        if (current?.revision !== revision) return current !== undefined;
        await this.rows.replaceChunks(trx, projectId, doc.id, rows);
        await this.rows.setStatus(trx, projectId, doc.id, revision, { status: 'ready', chunk_count: rows.length, error: null, updated_at: nowMs() });
        await this.rows.bumpRevision(trx, projectId, base.id, nowMs());
        return true;
      });
      // deleted while it was processed: the deletion's purge may have run before these vectors were written
      if (!written) await this.removeVectors(spec, projectId, { documentId: doc.id });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof UnreadableDocument || endsJob(err)) {
        await this.rows.setStatus(this.db, projectId, doc.id, revision, { status: 'failed', error: message, updated_at: nowMs() });
        // the job fails too, with the document's reason, so the queue lists it among failed jobs
        if (err instanceof UnreadableDocument) throw new PermanentJobError(message);
      } else {
        await this.rows.setStatus(this.db, projectId, doc.id, revision, { error: message }).catch((markErr: unknown) => {
          ctx.log.warn({ err: markErr }, 'could not record the processing error on the document');
        });
      }
      throw err;
    }
  }

  /** Ends the document threads (at shutdown). */
  close(): Promise<void> {
    return this.reader.close();
  }

  /**
   * Every text's vector, in order, asked for a batch at a time (a few batches in flight), so the
   * embedder's other callers (memories, queries) get turns while a large document is embedded.
   */
  private async embedAll(model: string, texts: string[]): Promise<Float32Array[]> {
    const embedder = this.embedders.get(model);
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += embedder.maxBatch) batches.push(texts.slice(i, i + embedder.maxBatch));
    const vectors: Float32Array[] = [];
    for (let i = 0; i < batches.length; i += EMBED_WINDOW) {
      for (const part of await Promise.all(batches.slice(i, i + EMBED_WINDOW).map((batch) => embedder.embed(batch, 'document')))) vectors.push(...part);
    }
    return vectors;
  }

  /** The `knowledge.purge` job: removes the vectors of a deleted base or document. */
  async purge(projectId: string, embedModel: string, target: { kbId?: string; documentId?: string }): Promise<void> {
    await this.removeVectors(await this.collection(embedModel), projectId, target);
  }

  /**
   * Retrieval across one or more bases of a project: dense (vector) search, BM25 keyword search,
   * or both fused by reciprocal rank (`hybrid`, the default), optionally reranked, best first.
   */
  async search(projectId: string, names: string[], input: KnowledgeSearchInput): Promise<Citation[]> {
    return (await this.searchReported(projectId, names, input)).results;
  }

  /**
   * `search`, with what became of its reranking when it asked for one: a reranker that fails or
   * is late (`RERANK_TIMEOUT_MS`) leaves the fused order, which the report says was used.
   */
  async searchReported(projectId: string, names: string[], input: KnowledgeSearchInput): Promise<{ results: Citation[]; rerank?: RerankReport }> {
    const config = await this.cache.at(projectId);
    const bases = await Promise.all([...new Set(names)].map((name) => this.base(projectId, name, config)));
    const filter = parseFilter(input.filter, KNOWLEDGE_FILTER_SCOPE, '/filter');
    const topK = input.top_k ?? 5;
    const mode = input.mode ?? 'hybrid';
    if (input.rerank && this.reranking.model === null) {
      throw badRequest(
        'model_unavailable',
        'Reranking needs a reranker, which this server does not have: an operator must set COHERE_API_KEY (Cohere) or RERANK_MODEL=http/<model> with RERANK_BASE_URL, or search without rerank.',
      );
    }
    const pool = Math.max(topK * 4, 40);
    const lists: string[][] = [];
    const foundBy = new Map<string, Array<'dense' | 'keyword'>>();
    const found = (id: string, signal: 'dense' | 'keyword') => foundBy.set(id, [...(foundBy.get(id) ?? []), signal]);
    const scores = new Map<string, number>();
    // the query is embedded (off the main thread) while the keyword pass runs
    const densePass = mode !== 'keyword' ? this.dense(projectId, bases, input.query, filter, pool) : null;
    densePass?.catch(() => undefined);
    const known = new Map<string, ChunkWithDocument>();
    const keyword = mode !== 'dense' ? await this.keyword.search(projectId, await this.withRevisions(projectId, bases), input.query, filter, pool) : null;
    if (densePass) {
      const dense = await densePass;
      lists.push(dense.map((m) => m.id));
      for (const m of dense) found(m.id, 'dense');
      if (mode === 'dense') for (const m of dense) scores.set(m.id, m.score);
    }
    if (keyword) {
      lists.push(keyword.map((m) => m.chunk.id));
      for (const m of keyword) {
        known.set(m.chunk.id, m.chunk);
        found(m.chunk.id, 'keyword');
        if (mode === 'keyword') scores.set(m.chunk.id, m.score);
      }
    }
    let ranked: Array<{ id: string; score: number }>;
    if (mode === 'hybrid') {
      ranked = reciprocalRankFusion(lists, (a, b) => a.localeCompare(b));
    } else {
      ranked = (lists[0] ?? []).map((id) => ({ id, score: scores.get(id) as number }));
    }
    ranked = ranked.slice(0, input.rerank ? pool : topK);
    const missing = ranked.map((r) => r.id).filter((id) => !known.has(id));
    for (const chunk of await this.rows.chunks(projectId, missing)) known.set(chunk.id, chunk);
    // a vector whose chunk row is gone (document deleted, not yet unindexed) is left out
    ranked = ranked.filter((r) => known.has(r.id));
    let rerank: RerankReport | undefined;
    if (input.rerank) {
      const outcome = await this.reranking.order(input.query, ranked.map((r) => (known.get(r.id) as ChunkWithDocument).text), topK);
      rerank = outcome.report;
      if (outcome.order !== null) ranked = outcome.order.map(({ index, score }) => ({ id: (ranked[index] as { id: string }).id, score }));
    }
    const nameOf = new Map(bases.map((b) => [b.id, b.name]));
    const results = ranked.slice(0, topK).map(({ id, score }) => {
      const chunk = known.get(id) as ChunkWithDocument;
      return {
        text: chunk.text,
        score,
        document_id: chunk.document_id,
        filename: chunk.filename,
        chunk_id: chunk.id,
        knowledge_base: nameOf.get(chunk.kb_id) ?? '',
        start: Number(chunk.start_offset),
        end: Number(chunk.end_offset),
        heading: chunk.heading,
        found_by: foundBy.get(id) ?? [],
      };
    });
    return rerank === undefined ? { results } : { results, rerank };
  }

  /** The collection that holds the chunk vectors of an embedding model. */
  collection(embedModel: string): Promise<CollectionSpec> {
    return modelCollection(this.embedders.get(embedModel), 'knowledge', { kb_id: 'string', document_id: 'string', filename: 'string', source_type: 'string' });
  }

  private async dense(projectId: string, bases: BaseDefinition[], query: string, filter: FilterNode | null, pool: number): Promise<Array<{ id: string; score: number }>> {
    const byModel = new Map<string, string[]>();
    for (const b of bases) byModel.set(b.embed_model, [...(byModel.get(b.embed_model) ?? []), b.id]);
    const found: Array<{ id: string; score: number }> = [];
    for (const [model, kbIds] of byModel) {
      const spec = await this.collection(model);
      const [vector] = await this.embedders.get(model).embed([query], 'query');
      const scoped = filter === null ? kbFilter(kbIds) : { kind: 'and' as const, nodes: [kbFilter(kbIds), filter] };
      found.push(...(await this.store.search(spec, projectId, vector as Float32Array, { topK: pool, filter: scoped })));
    }
    return found.sort((a, b) => b.score - a.score).slice(0, pool);
  }

  private async removeVectors(spec: CollectionSpec, projectId: string, target: { kbId?: string; documentId?: string }): Promise<void> {
    if (target.kbId !== undefined) await this.store.deleteByFilter(spec, projectId, kbFilter([target.kbId]));
    if (target.documentId !== undefined) {
      await this.store.deleteByFilter(spec, projectId, { kind: 'cmp', target: { kind: 'column', name: 'document_id', type: 'string' }, op: 'eq', value: target.documentId });
    }
  }

  /** A base from the configuration cache (shared: do not change); 404 when the project has none of that name. */
  private async base(projectId: string, name: string, config?: ConfigSnapshot): Promise<BaseDefinition> {
    const base = await this.definition(config ?? (await this.cache.at(projectId)), projectId, name);
    if (!base) throw missingBase(name);
    return base;
  }

  /** A base as the configuration cache holds it; null when the project has none of that name. */
  private definition(config: ConfigSnapshot, projectId: string, name: string): Promise<BaseDefinition | null> {
    return config.read(`knowledge:${name}`, async () => {
      const row = await this.rows.findBase(projectId, name);
      if (!row) return null;
      const { id, project_id, instructions, model, embed_model, chunk_size, chunk_overlap, created_at } = row;
      return { id, project_id, name: row.name, instructions, model, embed_model, chunk_size, chunk_overlap, created_at };
    });
  }

  /** A base read from the database: what the cache does not hold, and what writes start from. */
  private async storedBase(projectId: string, name: string): Promise<KnowledgeBaseRow> {
    const row = await this.rows.findBase(projectId, name);
    if (!row) throw missingBase(name);
    return row;
  }

  /** The bases with their revisions as stored now (the keyword index is rebuilt when one moved). */
  private async withRevisions(projectId: string, bases: BaseDefinition[]): Promise<Array<Pick<KnowledgeBaseRow, 'id' | 'revision'>>> {
    const revisions = await this.rows.revisions(projectId, bases.map((b) => b.id));
    // a base deleted since it was looked up has no chunks left to find
    return bases.filter((b) => revisions.has(b.id)).map((b) => ({ id: b.id, revision: revisions.get(b.id) as number }));
  }

  private async document(projectId: string, name: string, documentId: string): Promise<DocumentRow> {
    const base = await this.base(projectId, name);
    const doc = await this.rows.document(projectId, documentId);
    if (!doc || doc.kb_id !== base.id) throw notFound(`There is no document "${documentId}" in knowledge base "${name}".`);
    return doc;
  }
}

/** The condition "in one of these bases", on the vectors' kb_id column. */
function kbFilter(kbIds: string[]): FilterNode {
  return { kind: 'cmp', target: { kind: 'column', name: 'kb_id', type: 'string' }, op: 'in', value: kbIds };
}

const missingBase = (name: string) => notFound(`There is no knowledge base named "${name}" in this project.`);

function baseView(row: KnowledgeBaseRow, documentCount: number): KnowledgeBaseView {
  return {
    id: row.id,
    name: row.name,
    instructions: row.instructions,
    model: row.model,
    embed_model: row.embed_model,
    chunk_size: row.chunk_size,
    chunk_overlap: row.chunk_overlap,
    document_count: documentCount,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

function documentView(row: DocumentRow, kbName: string): DocumentView {
  return {
    id: row.id,
    knowledge_base: kbName,
    filename: row.filename,
    source_type: row.source_type,
    size: row.size,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    status: row.status,
    chunk_count: row.chunk_count,
    error: row.error,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
