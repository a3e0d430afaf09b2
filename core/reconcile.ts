import type { MemoriesRepository } from '../db/repositories/memories.repository.js';
import type { ProjectSettingsRepository } from '../db/repositories/project-settings.repository.js';
import type { IndexedRef, ReconcileRepository } from '../db/repositories/reconcile.repository.js';
import type { VectorStore } from '../contracts/vector-store.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import { AppError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { nowMs } from '../lib/time.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';
import type { Knowledge } from './knowledge/knowledge.js';
import type { MemoryIndexer } from './memory/indexing.js';

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

  /**
   * The memories of a project this worker cannot check (its embedding model needs a key or files
   * this worker lacks) are skipped and named in the report, as `checkChunks` does: the cursor
   * still moves on, so one such project does not stop every pass on the same page.
   */
  private async checkIndexedMemories(report: ReconcileReport, log: Logger): Promise<void> {
    const page = await this.rows.indexedMemories(await this.rows.cursor(MEMORY_CURSOR), this.options.pageSize);
    if (page.length > 0) {
      for (const [projectId, refs] of groupBy(page, (r) => r.project_id)) {
        let present: Set<string>;
        try {
          // each project's vectors are in the collection of its own model
          present = await this.store.existing(await this.indexer.collection(projectId), projectId, refs.map((r) => r.id));
        } catch (err) {
          // the vector store or the model's service down: nothing is skipped, the next pass tries again
          if (err instanceof AppError && err.status === 503) throw err;
          const message = err instanceof Error ? err.message : String(err);
          report.errors.push(`indexed memories: skipped ${refs.length} memories of project ${projectId}: ${message}`);
          log.warn({ projectId, memories: refs.length, err: message }, 'reconciliation skipped memories it cannot check');
          continue;
        }
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

  /**
   * A group of chunks this worker cannot check (e.g. its base's embedding model needs a key or
   * files this worker lacks) is skipped and named in the report; the cursor still moves on, so one
   * such base does not stop every pass on the same page.
   */
  private async checkChunks(report: ReconcileReport, log: Logger): Promise<void> {
    const { chunks, last } = await this.rows.chunks(await this.rows.cursor(CHUNK_CURSOR), this.options.pageSize);
    const redo = new Map<string, { projectId: string; kbName: string }>();
    for (const [key, refs] of groupBy(chunks, (c) => `${c.project_id}\u0000${c.embed_model}`)) {
      const [projectId, embedModel] = key.split('\u0000') as [string, string];
      try {
        const present = await this.store.existing(await this.knowledge.collection(embedModel), projectId, refs.map((c) => c.id));
        for (const chunk of refs) if (!present.has(chunk.id)) redo.set(chunk.document_id, { projectId, kbName: chunk.kb_name });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        report.errors.push(`knowledge chunks: skipped ${refs.length} chunks of model ${embedModel} in project ${projectId}: ${message}`);
        log.warn({ projectId, embedModel, chunks: refs.length, err: message }, 'reconciliation skipped knowledge chunks it cannot check');
      }
    }
    for (const [documentId, { projectId, kbName }] of redo) {
      await this.knowledge.reprocess(projectId, kbName, documentId);
      report.documentsReprocessed += 1;
    }
    report.chunksChecked += chunks.length;
    await this.rows.setCursor(CHUNK_CURSOR, last, nowMs());
  }
}

/** The cursor after a page read in id order: its last id, or '' (start over) after the last page. */
function nextCursor(page: Array<{ id: string }>, pageSize: number): string {
  return page.length < pageSize ? '' : (page[page.length - 1] as { id: string }).id;
}

function indexJob(row: IndexedRef) {
  return envelope('memory.index', { projectId: row.project_id, memoryId: row.id, revision: row.revision });
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
