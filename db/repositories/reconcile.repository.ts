import type { Knex } from 'knex';

/** A row whose derived vectors reconciliation may restart. */
export interface IndexedRef {
  project_id: string;
  id: string;
  revision: number;
}

/** A knowledge chunk of a ready document, with its base's name and embedding model (its vector's collection). */
export interface ChunkRef {
  project_id: string;
  id: string;
  document_id: string;
  kb_name: string;
  embed_model: string;
}

/** A document still on its way to `ready`. */
export interface DocumentRef {
  project_id: string;
  id: string;
  kb_id: string;
  revision: number;
}

/**
 * The reads reconciliation needs across every project (it repairs what no single request owns),
 * and its cursors. Each query is bounded by `limit`.
 */
export class ReconcileRepository {
  constructor(private readonly db: Knex) {}

  /** Memories after `afterId` in id order, pending since before `before` (their job should have run by now). */
  async stalePendingMemories(afterId: string, before: number, limit: number): Promise<IndexedRef[]> {
    const rows = (await this.db('memories')
      .where({ embedding_status: 'pending' })
      .where('id', '>', afterId)
      .where('updated_at', '<', before)
      .orderBy('id')
      .limit(limit)
      .select('project_id', 'id', 'revision')) as IndexedRef[];
    return rows.map((r) => ({ ...r, revision: Number(r.revision) }));
  }

  /** Indexed memories after `afterId` in id order. */
  async indexedMemories(afterId: string, limit: number): Promise<IndexedRef[]> {
    const rows = (await this.db('memories')
      .where({ embedding_status: 'indexed' })
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .select('project_id', 'id', 'revision')) as IndexedRef[];
    return rows.map((r) => ({ ...r, revision: Number(r.revision) }));
  }

  /** Documents after `afterId` in id order, uploaded or processing since before `before`. */
  async stalePendingDocuments(afterId: string, before: number, limit: number): Promise<DocumentRef[]> {
    const rows = (await this.db('knowledge_documents')
      .whereIn('status', ['uploaded', 'processing'])
      .where('id', '>', afterId)
      .where('updated_at', '<', before)
      .orderBy('id')
      .limit(limit)
      .select('project_id', 'id', 'kb_id', 'revision')) as DocumentRef[];
    return rows.map((r) => ({ ...r, revision: Number(r.revision) }));
  }

  /**
   * Chunks after `afterId` in id order, and the last id read (the next cursor; '' at the end).
   * Only chunks of `ready` documents are returned: one being processed is between vector writes.
   */
  async chunks(afterId: string, limit: number): Promise<{ chunks: ChunkRef[]; last: string }> {
    const page = (await this.db('knowledge_chunks as c')
      .join('knowledge_documents as d', 'd.id', 'c.document_id')
      .join('knowledge_bases as b', 'b.id', 'c.kb_id')
      .where('c.id', '>', afterId)
      .orderBy('c.id')
      .limit(limit)
      .select('c.project_id', 'c.id', 'c.document_id', 'd.status', 'b.name as kb_name', 'b.embed_model')) as Array<ChunkRef & { status: string }>;
    return {
      chunks: page.filter((c) => c.status === 'ready').map(({ status: _status, ...chunk }) => chunk),
      last: page.length < limit ? '' : (page[page.length - 1] as ChunkRef).id,
    };
  }

  async cursor(name: string): Promise<string> {
    const row = (await this.db('reconcile_cursors').where({ name }).first('position')) as { position: string } | undefined;
    return row?.position ?? '';
  }

  async setCursor(name: string, position: string, now: number): Promise<void> {
    await this.db('reconcile_cursors').insert({ name, position, updated_at: now }).onConflict('name').merge(['position', 'updated_at']);
  }
}
