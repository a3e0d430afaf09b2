import type { QueueDepth, QueueDriver } from '../contracts/jobs/queue.js';
import type { DocumentStatus, KnowledgeRepository } from '../db/repositories/knowledge.repository.js';
import type { EmbeddingStatus, MemoriesRepository } from '../db/repositories/memories.repository.js';
import { iso } from '../lib/time.js';

/** Most pending and most failed rows one answer lists (each kind); the counts are always whole. */
export const OPERATIONS_ROWS = 20;

/** A memory or document still being worked on, or whose work failed, with the reason it gave. */
export interface OperationRow {
  kind: 'memory' | 'document';
  id: string;
  /** The memory's text (its first 200 characters) or the document's file name. */
  label: string;
  status: string;
  /** A document's knowledge base; null for a memory. */
  knowledge_base: string | null;
  error: string | null;
  updated_at: string;
}

export interface OperationsView {
  /** Job counts of every queue, by state: the server's, shared by every project. */
  queues: QueueDepth[];
  memories: Record<EmbeddingStatus, number>;
  documents: Record<DocumentStatus, number>;
  pending: OperationRow[];
  failed: OperationRow[];
}

const PENDING_DOCUMENTS: DocumentStatus[] = ['uploaded', 'processing'];
const LABEL_CHARS = 200;

/** What the calling project's background work looks like now: the queues, and its rows waiting on them or failed. */
export class Operations {
  constructor(
    private readonly queue: QueueDriver,
    private readonly memories: MemoriesRepository,
    private readonly knowledge: KnowledgeRepository,
  ) {}

  async view(projectId: string): Promise<OperationsView> {
    const [queues, memories, documents, pendingMemories, failedMemories, pendingDocuments, failedDocuments] = await Promise.all([
      this.queue.depths(),
      this.memories.statusCounts(projectId),
      this.knowledge.documentStatusCounts(projectId),
      this.memories.withStatus(projectId, 'pending', OPERATIONS_ROWS),
      this.memories.withStatus(projectId, 'failed', OPERATIONS_ROWS),
      this.knowledge.documentsWithStatus(projectId, PENDING_DOCUMENTS, OPERATIONS_ROWS),
      this.knowledge.documentsWithStatus(projectId, ['failed'], OPERATIONS_ROWS),
    ]);
    const memoryRow = (m: (typeof pendingMemories)[number]): OperationRow => ({
      kind: 'memory',
      id: m.id,
      label: m.memory.slice(0, LABEL_CHARS),
      status: m.embedding_status,
      knowledge_base: null,
      error: m.embedding_error,
      updated_at: iso(m.updated_at),
    });
    const documentRow = (d: (typeof pendingDocuments)[number]): OperationRow => ({
      kind: 'document',
      id: d.id,
      label: d.filename,
      status: d.status,
      knowledge_base: d.kb_name,
      error: d.error,
      updated_at: iso(d.updated_at),
    });
    return {
      queues,
      memories,
      documents,
      pending: [...pendingMemories.map(memoryRow), ...pendingDocuments.map(documentRow)],
      failed: [...failedMemories.map(memoryRow), ...failedDocuments.map(documentRow)],
    };
  }
}
