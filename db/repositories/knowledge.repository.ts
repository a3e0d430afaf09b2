import type { Knex } from 'knex';

export interface KnowledgeBaseRow {
  id: string;
  project_id: string;
  name: string;
  instructions: string;
  model: string;
  embed_model: string;
  chunk_size: number;
  chunk_overlap: number;
  revision: number;
  created_at: number;
  updated_at: number;
}

export type DocumentStatus = 'uploaded' | 'processing' | 'ready' | 'failed';

/** A document without its bytes (what lists and reads need). */
export interface DocumentRow {
  id: string;
  project_id: string;
  kb_id: string;
  filename: string;
  source_type: string;
  size: number;
  metadata: string;
  status: DocumentStatus;
  chunk_count: number;
  error: string | null;
  revision: number;
  created_at: number;
  updated_at: number;
}

export interface ChunkRow {
  id: string;
  project_id: string;
  kb_id: string;
  document_id: string;
  ordinal: number;
  text: string;
  start_offset: number;
  end_offset: number;
  heading: string | null;
}

/** A chunk with what filters and citations read from its document. */
export interface ChunkWithDocument extends ChunkRow {
  filename: string;
  source_type: string;
  metadata: string;
}

/** Rows per statement when writing chunks. */
const CHUNK_BATCH = 200;

const DOCUMENT_COLUMNS = ['id', 'project_id', 'kb_id', 'filename', 'source_type', 'size', 'metadata', 'status', 'chunk_count', 'error', 'revision', 'created_at', 'updated_at'];

/** Knowledge bases, documents and chunks; every query scoped by project. */
export class KnowledgeRepository {
  constructor(private readonly db: Knex) {}

  async insertBase(row: KnowledgeBaseRow): Promise<void> {
    await this.db('knowledge_bases').insert(row);
  }

  async findBase(projectId: string, name: string): Promise<KnowledgeBaseRow | undefined> {
    return (await this.db('knowledge_bases').where({ project_id: projectId, name }).first()) as KnowledgeBaseRow | undefined;
  }

  async baseById(projectId: string, id: string, trx: Knex = this.db): Promise<KnowledgeBaseRow | undefined> {
    return (await trx('knowledge_bases').where({ project_id: projectId, id }).first()) as KnowledgeBaseRow | undefined;
  }

  async listBases(projectId: string, limit: number, offset: number): Promise<KnowledgeBaseRow[]> {
    return (await this.db('knowledge_bases')
      .where({ project_id: projectId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as KnowledgeBaseRow[];
  }

  /** Document counts per base id. */
  async documentCounts(projectId: string, kbIds: string[]): Promise<Map<string, number>> {
    if (kbIds.length === 0) return new Map();
    const rows = (await this.db('knowledge_documents')
      .where({ project_id: projectId })
      .whereIn('kb_id', kbIds)
      .groupBy('kb_id')
      .select('kb_id')
      .count({ n: '*' })) as Array<{ kb_id: string; n: number | string }>;
    return new Map(rows.map((r) => [r.kb_id, Number(r.n)]));
  }

  /** The revision of each of these bases that exists, by id. */
  async revisions(projectId: string, kbIds: string[]): Promise<Map<string, number>> {
    if (kbIds.length === 0) return new Map();
    const rows = (await this.db('knowledge_bases').where({ project_id: projectId }).whereIn('id', kbIds).select('id', 'revision')) as Array<{ id: string; revision: number | string }>;
    return new Map(rows.map((r) => [r.id, Number(r.revision)]));
  }

  /** Marks a base's chunks as changed. */
  async bumpRevision(trx: Knex, projectId: string, kbId: string, now: number): Promise<void> {
    await trx('knowledge_bases').where({ project_id: projectId, id: kbId }).update({ revision: trx.raw('revision + 1'), updated_at: now });
  }

  async deleteBase(trx: Knex, projectId: string, kbId: string): Promise<void> {
    await trx('knowledge_chunks').where({ project_id: projectId, kb_id: kbId }).delete();
    await trx('knowledge_documents').where({ project_id: projectId, kb_id: kbId }).delete();
    await trx('knowledge_bases').where({ project_id: projectId, id: kbId }).delete();
  }

  async insertDocument(trx: Knex, row: DocumentRow & { source: Buffer }): Promise<void> {
    await trx('knowledge_documents').insert(row);
  }

  async document(projectId: string, id: string, trx: Knex = this.db): Promise<DocumentRow | undefined> {
    return (await trx('knowledge_documents').where({ project_id: projectId, id }).first(DOCUMENT_COLUMNS)) as DocumentRow | undefined;
  }

  async documentSource(projectId: string, id: string): Promise<Buffer | undefined> {
    const row = (await this.db('knowledge_documents').where({ project_id: projectId, id }).first('source')) as { source: Buffer } | undefined;
    return row?.source;
  }

  async listDocuments(projectId: string, kbId: string, limit: number, offset: number): Promise<DocumentRow[]> {
    return (await this.db('knowledge_documents')
      .where({ project_id: projectId, kb_id: kbId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)
      .select(DOCUMENT_COLUMNS)) as DocumentRow[];
  }

  /** How many of the project's documents are in each status. */
  async documentStatusCounts(projectId: string): Promise<Record<DocumentStatus, number>> {
    const rows = (await this.db('knowledge_documents').where({ project_id: projectId }).groupBy('status').select('status').count({ n: '*' })) as Array<{
      status: DocumentStatus;
      n: number | string;
    }>;
    const counts: Record<DocumentStatus, number> = { uploaded: 0, processing: 0, ready: 0, failed: 0 };
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  }

  /** The project's documents in these statuses, the latest changed first, with their base's name. */
  async documentsWithStatus(projectId: string, statuses: DocumentStatus[], limit: number): Promise<Array<DocumentRow & { kb_name: string }>> {
    return (await this.db('knowledge_documents as d')
      .join('knowledge_bases as b', 'b.id', 'd.kb_id')
      .where({ 'd.project_id': projectId })
      .whereIn('d.status', statuses)
      .orderBy([
        { column: 'd.updated_at', order: 'desc' },
        { column: 'd.id', order: 'desc' },
      ])
      .limit(limit)
      .select([...DOCUMENT_COLUMNS.map((c) => `d.${c}`), 'b.name as kb_name'])) as Array<DocumentRow & { kb_name: string }>;
  }

  /** Sets a document's status (and fields) if it is still at `revision`; the number of rows changed. */
  async setStatus(
    trx: Knex,
    projectId: string,
    id: string,
    revision: number,
    changes: Partial<Pick<DocumentRow, 'status' | 'chunk_count' | 'error' | 'updated_at'>>,
  ): Promise<number> {
    return trx('knowledge_documents').where({ project_id: projectId, id, revision }).update(changes);
  }

  /** Starts a new revision (re-processing): status uploaded, chunk count and error cleared. */
  async restart(trx: Knex, projectId: string, id: string, now: number): Promise<void> {
    await trx('knowledge_documents')
      .where({ project_id: projectId, id })
      .update({ status: 'uploaded', chunk_count: 0, error: null, revision: trx.raw('revision + 1'), updated_at: now });
  }

  async deleteDocument(trx: Knex, projectId: string, id: string): Promise<number> {
    await trx('knowledge_chunks').where({ project_id: projectId, document_id: id }).delete();
    return trx('knowledge_documents').where({ project_id: projectId, id }).delete();
  }

  /**
   * Replaces a document's chunks. The old ones are found by a plain read and deleted by primary
   * key: a delete by (project_id, document_id) would, under REPEATABLE READ, also lock the gap
   * where a new document's chunks go, and two documents processed at once then deadlock on
   * each other's gap when they insert. Deleting rows by key locks only those rows.
   */
  async replaceChunks(trx: Knex, projectId: string, documentId: string, chunks: ChunkRow[]): Promise<void> {
    const old = ((await trx('knowledge_chunks').where({ project_id: projectId, document_id: documentId }).select('id')) as Array<{ id: string }>).map((r) => r.id);
    for (let i = 0; i < old.length; i += CHUNK_BATCH) {
      await trx('knowledge_chunks').whereIn('id', old.slice(i, i + CHUNK_BATCH)).delete();
    }
    for (let i = 0; i < chunks.length; i += CHUNK_BATCH) {
      await trx('knowledge_chunks').insert(chunks.slice(i, i + CHUNK_BATCH));
    }
  }

  /** Chunks by id, with their documents' filename, source type and metadata. */
  async chunks(projectId: string, ids: string[]): Promise<ChunkWithDocument[]> {
    if (ids.length === 0) return [];
    return (await this.chunkQuery(projectId).whereIn('c.id', ids)) as ChunkWithDocument[];
  }

  /** A document's chunks in their order in the document, a page at a time. */
  async chunksOfDocument(projectId: string, documentId: string, limit: number, offset: number): Promise<ChunkRow[]> {
    return (await this.db('knowledge_chunks')
      .where({ project_id: projectId, document_id: documentId })
      .orderBy('ordinal')
      .limit(limit)
      .offset(offset)) as ChunkRow[];
  }

  /** Every chunk of a base (keyword indexes are built from these). */
  async chunksOfBase(projectId: string, kbId: string): Promise<ChunkWithDocument[]> {
    return (await this.chunkQuery(projectId).where('c.kb_id', kbId)) as ChunkWithDocument[];
  }

  private chunkQuery(projectId: string): Knex.QueryBuilder {
    return this.db('knowledge_chunks as c')
      .join('knowledge_documents as d', function () {
        this.on('d.id', '=', 'c.document_id').andOn('d.project_id', '=', 'c.project_id');
      })
      .where('c.project_id', projectId)
      .select('c.*', 'd.filename', 'd.source_type', 'd.metadata');
  }
}
