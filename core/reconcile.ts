import type { MemoriesRepository } from '../db/repositories/memories.repository.js';
import type { ProjectSettingsRepository } from '../db/repositories/project-settings.repository.js';
import type { IndexedRef, ReconcileRepository } from '../db/repositories/reconcile.repository.js';
import type { CollectionSpec, VectorStore } from '../contracts/vector-store.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import { AppError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { nowMs } from '../lib/time.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';
import type { Knowledge } from './knowledge/knowledge.js';
import type { MemoryIndexer } from './memory/indexing.js';
import { groupBy } from '../lib/group-by.js';

export interface ReconcileOptions {
  /** A pending row younger than this is left to the job its write queued. */
  graceMs: number;
  /** Most rows each check reads in one pass. */
  pageSize: number;
}

/** What one pass did. `errors` names the checks that could not run (e.g. Milvus down); the next pass tries again. */
export interface ReconcileReport {
  /** Pending memories whose indexing job was gone and was queued again. */
  memoriesRequeued: number;
  /** Indexed memories compared with the vector store, and those whose vector was missing (queued again). */
  memoriesChecked: number;
  memoriesMissing: number;
  /** Projects whose memory re-embedding had no job running it, queued again. */
  reembeddingsRequeued: number;
  /** Documents stuck before `ready` whose job was gone and was queued again. */
  documentsRequeued: number;
  /** Chunks of ready documents compared with the vector store, and documents processed again for a missing vector. */
  chunksChecked: number;
  documentsReprocessed: number;
  errors: string[];
}

const MISSING = 'The vector was missing from the vector store; indexing again.';
const MEMORY_CURSOR = 'memories.indexed';
const CHUNK_CURSOR = 'knowledge.chunks';
const PENDING_MEMORY_CURSOR = 'memories.pending';
const PENDING_DOCUMENT_CURSOR = 'documents.pending';

/**
 * The repair pass behind the `index.reconcile` job (run at start-up and then on a schedule, once
 * per interval across all workers): rows are the truth and vectors are derived, so it
 *
 * 1. queues `memory.index` again for memories pending longer than the grace period whose job is
 *    no longer queued (lost with Redis, or dropped), and `document.process` for such documents;
 * 2. compares a page of `indexed` memories with the vector store (resuming where the last pass
 *    stopped) and re-indexes those whose vector is gone, e.g. after Milvus lost recent writes;
 * 3. does the same for a page of knowledge chunks, processing their document again;
 * 4. queues `memory.reembed` again for projects whose re-embedding (or removal of a replaced
 *    model's vectors) is unfinished and held by no job (its lease free or expired).
 *
 * Each check reads at most `pageSize` rows per pass, so a pass stays short however large the data;
 * successive passes walk the whole table and start over.
 */
export class Reconciliation {
  constructor(
    private readonly rows: ReconcileRepository,
    private readonly memoryRows: MemoriesRepository,
    private readonly indexer: MemoryIndexer,
    private readonly knowledge: Knowledge,
    private readonly store: VectorStore,
    private readonly queue: QueueDriver,
    private readonly settings: ProjectSettingsRepository,
    private readonly options: ReconcileOptions,
  ) {}

  async pass(log: Logger): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      memoriesRequeued: 0,
      memoriesChecked: 0,
      memoriesMissing: 0,
      reembeddingsRequeued: 0,
      documentsRequeued: 0,
      chunksChecked: 0,
      documentsReprocessed: 0,
      errors: [],
    };
    const step = async (name: string, run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        report.errors.push(`${name}: ${message}`);
        log.warn({ check: name, err: message }, 'reconciliation check did not finish; the next pass tries again');
      }
    };
    const before = nowMs() - this.options.graceMs;
    await step('pending memories', () => this.requeuePendingMemories(before, report));
    await step('indexed memories', () => this.checkIndexedMemories(report, log));
    await step('pending documents', () => this.requeuePendingDocuments(before, report));
    await step('knowledge chunks', () => this.checkChunks(report, log));
    await step('memory re-embeddings', () => this.requeueReembeddings(report));
    return report;
  }

  // Pending rows are walked with a cursor too: rows that stay pending while their job lives (and
  // keeps failing) would otherwise fill every page, and rows after them would never be requeued.
  private async requeuePendingMemories(before: number, report: ReconcileReport): Promise<void> {
    const page = await this.rows.stalePendingMemories(await this.rows.cursor(PENDING_MEMORY_CURSOR), before, this.options.pageSize);
    for (const row of page) {
      if (await this.queue.requeue(indexJob(row))) report.memoriesRequeued += 1;
    }
    await this.rows.setCursor(PENDING_MEMORY_CURSOR, nextCursor(page, this.options.pageSize), nowMs());
  }

  private async checkIndexedMemories(report: ReconcileReport, log: Logger): Promise<void> {
    const page = await this.rows.indexedMemories(await this.rows.cursor(MEMORY_CURSOR), this.options.pageSize);
    if (page.length > 0) {
      for (const [projectId, refs] of groupBy(page, (r) => r.project_id)) {
        // each project's vectors are in the collection of its own model
        const present = await this.present(() => this.indexer.collection(projectId), projectId, refs, report, log, {
          what: 'indexed memories',
          group: `${refs.length} memories of project ${projectId}`,
          fields: { memories: refs.length },
        });
        if (present === null) continue;
        for (const ref of refs) {
          if (present.has(ref.id)) continue;
          report.memoriesMissing += 1;
          // only if still that revision and indexed: a change meanwhile queued its own job
          if ((await this.memoryRows.markEmbedding(projectId, ref.id, ref.revision, 'pending', MISSING)) === 1) await this.queue.requeue(indexJob(ref));
        }
      }
      report.memoriesChecked += page.length;
    }
    await this.rows.setCursor(MEMORY_CURSOR, nextCursor(page, this.options.pageSize), nowMs());
  }

  private async requeueReembeddings(report: ReconcileReport): Promise<void> {
    for (const { project_id: projectId, migration } of await this.settings.unfinished(nowMs(), this.options.pageSize)) {
      // the job of the change that started it, when it is still queued, is found by its id
      const job = envelope('memory.reembed', { projectId, migrationId: migration ?? `${projectId}-drop` });
      if (await this.queue.requeue(job)) report.reembeddingsRequeued += 1;
    }
  }

  private async requeuePendingDocuments(before: number, report: ReconcileReport): Promise<void> {
    const page = await this.rows.stalePendingDocuments(await this.rows.cursor(PENDING_DOCUMENT_CURSOR), before, this.options.pageSize);
    for (const doc of page) {
      const job = envelope('document.process', { projectId: doc.project_id, documentId: doc.id, revision: doc.revision });
      if (await this.queue.requeue(job)) report.documentsRequeued += 1;
    }
    await this.rows.setCursor(PENDING_DOCUMENT_CURSOR, nextCursor(page, this.options.pageSize), nowMs());
  }

  private async checkChunks(report: ReconcileReport, log: Logger): Promise<void> {
    const { chunks, last } = await this.rows.chunks(await this.rows.cursor(CHUNK_CURSOR), this.options.pageSize);
    const redo = new Map<string, { projectId: string; kbName: string }>();
    for (const [key, refs] of groupBy(chunks, (c) => `${c.project_id}\u0000${c.embed_model}`)) {
      const [projectId, embedModel] = key.split('\u0000') as [string, string];
      const present = await this.present(() => this.knowledge.collection(embedModel), projectId, refs, report, log, {
        what: 'knowledge chunks',
        group: `${refs.length} chunks of model ${embedModel} in project ${projectId}`,
        fields: { embedModel, chunks: refs.length },
      });
      if (present === null) continue;
      for (const chunk of refs) if (!present.has(chunk.id)) redo.set(chunk.document_id, { projectId, kbName: chunk.kb_name });
    }
    for (const [documentId, { projectId, kbName }] of redo) {
      await this.knowledge.reprocess(projectId, kbName, documentId);
      report.documentsReprocessed += 1;
    }
    report.chunksChecked += chunks.length;
    await this.rows.setCursor(CHUNK_CURSOR, last, nowMs());
  }

  /**
   * Which of a group's ids (one project's, in one collection) the vector store holds. A group this
   * worker cannot check (e.g. its embedding model needs a key or files this worker lacks) is
   * named in the report and skipped (null), so one such project or base does not stop every pass
   * on the same page. The store or a model's service down (503) fails the check instead: nothing
   * is skipped, and the next pass tries the same page again.
   */
  private async present(
    collection: () => Promise<CollectionSpec>,
    projectId: string,
    refs: Array<{ id: string }>,
    report: ReconcileReport,
    log: Logger,
    described: { what: string; group: string; fields: Record<string, unknown> },
  ): Promise<Set<string> | null> {
    try {
      return await this.store.existing(await collection(), projectId, refs.map((r) => r.id));
    } catch (err) {
      if (err instanceof AppError && err.status === 503) throw err;
      const message = err instanceof Error ? err.message : String(err);
      report.errors.push(`${described.what}: skipped ${described.group}: ${message}`);
      log.warn({ projectId, ...described.fields, err: message }, `reconciliation skipped ${described.what} it cannot check`);
      return null;
    }
  }
}

/** The cursor after a page read in id order: its last id, or '' (start over) after the last page. */
function nextCursor(page: Array<{ id: string }>, pageSize: number): string {
  return page.length < pageSize ? '' : (page[page.length - 1] as { id: string }).id;
}

function indexJob(row: IndexedRef) {
  return envelope('memory.index', { projectId: row.project_id, memoryId: row.id, revision: row.revision });
}
