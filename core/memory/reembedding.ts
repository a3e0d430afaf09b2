import { randomBytes } from 'node:crypto';
import type { MemoriesRepository, MemoryRow } from '../../db/repositories/memories.repository.js';
import type { ProjectSettingsRepository, ProjectSettingsRow } from '../../db/repositories/project-settings.repository.js';
import type { CollectionSpec, VectorPoint, VectorStore } from '../../contracts/vector-store.js';
import { endsJob, type JobContext } from '../../contracts/jobs/handlers.js';
import { AppError, unavailable } from '../../lib/errors.js';
import { nowMs } from '../../lib/time.js';
import { rowCategories } from './categories.js';
import { memoryPoint, type MemoryIndexer } from './indexing.js';
import { liveModels, modelStateOf, type MemoryModels } from './memory-models.js';

/** Provider batches per page: enough texts in flight to keep a batching embedder's parallel calls busy. */
const BATCHES_PER_PAGE = 4;
const MIN_PAGE = 32;
const MAX_PAGE = 1_024;
/** Times a page's rows that changed while it was embedded are embedded again before their own jobs are left to it. */
const CHANGED_ROUNDS = 3;

/**
 * How long after the last change of a project's settings the vectors of a model it left are
 * removed: searches that read the old model just before the switch are still answered from it,
 * and a process that missed the change (a configuration count lost in a Redis outage) serves it at
 * most 10 s (`CONFIG_STALE_AFTER_MS`).
 */
export const DROP_GRACE_MS = 12_000;

export interface ReembeddingOptions {
  /** How long a job's hold on a project's re-embedding lasts without renewal: a worker that dies frees it after this. */
  leaseMs: number;
  /** See `DROP_GRACE_MS`. */
  dropGraceMs?: number;
}

/** Another job holds the project's re-embedding: this one is tried again later (a transient failure). */
const busy = (): AppError => unavailable("Another job is re-embedding this project's memories; this one waits for it.");

/**
 * The `memory.reembed` job: moves a project's memories (typed records and free-form memories, one
 * table) from the embedding model they are in to the one the project's setting names, while search
 * keeps answering from the old one.
 *
 * It walks the memories in id order a page at a time — two pages in flight, each embedded through
 * the batching embedder as the indexer does, so the embedder sets the pace — and upserts their
 * vectors (by id) into the target model's collection, recording the cursor and the count after
 * each page. Writes made meanwhile go to both collections (`MemoryIndexer`), and a page's rows that
 * changed or went while it was embedded are written again or removed. At the end the model is
 * switched in one row update, guarded on the re-embedding still being this one, and the project's
 * vectors in the old collection are removed.
 *
 * One job at a time works on a project (a lease in the settings row, renewed while it runs); the
 * holder notices at each page when the setting changed: a replaced or cancelled target's vectors
 * are removed and the new target (if any) is started over. A job that dies is run again (BullMQ's
 * stalled jobs; the outbox on the embedded profile; reconciliation for any left without a job) and
 * resumes at the cursor. Every write is an upsert or a delete by id, so running twice is harmless.
 */
export class MemoryReembedding {
  private stopping = false;

  constructor(
    private readonly settings: ProjectSettingsRepository,
    private readonly rows: MemoriesRepository,
    private readonly store: VectorStore,
    private readonly models: MemoryModels,
    private readonly indexer: MemoryIndexer,
    private readonly options: ReembeddingOptions,
  ) {}

  /** Runs the project's re-embedding (whichever is under way) and removes abandoned vectors, until nothing is left. */
  async run(projectId: string, ctx: JobContext): Promise<void> {
    const owner = `${ctx.worker}:${randomBytes(6).toString('hex')}`;
    if (!(await this.settings.lease(projectId, owner, nowMs() + this.options.leaseMs, nowMs()))) {
      if ((await this.settings.get(projectId)) === undefined) return;
      throw busy();
    }
    let lost = false;
    const renew = setInterval(() => {
      this.settings.lease(projectId, owner, nowMs() + this.options.leaseMs, nowMs()).then(
        (held) => {
          if (!held) lost = true;
        },
        (err: unknown) => ctx.log.warn({ err }, 'could not renew the re-embedding lease'),
      );
    }, Math.max(250, Math.floor(this.options.leaseMs / 3)));
    renew.unref();
    const check = (): void => {
      if (lost) throw busy();
      if (this.stopping) throw unavailable('The worker is shutting down; the re-embedding resumes at its cursor.');
    };
    try {
      for (;;) {
        check();
        const row = await this.settings.get(projectId);
        if (row === undefined) return;
        // a re-embedding under way comes first; the vectors of models left wait out their grace meanwhile
        if (row.memory_embed_status === 'migrating' && row.memory_embed_migration !== null) await this.migrate(projectId, row, check, ctx);
        else if (parseDrops(row.memory_embed_drop).length > 0) await this.dropAbandoned(projectId, row, ctx);
        else return;
      }
    } finally {
      clearInterval(renew);
      await this.settings.release(projectId, owner).catch((err: unknown) => ctx.log.warn({ err }, 'could not release the re-embedding lease'));
    }
  }

  /** Stops running jobs at their next page (shutdown); they resume at their cursor after the restart. */
  close(): Promise<void> {
    this.stopping = true;
    return Promise.resolve();
  }

  /**
   * Embeds the memories after the cursor into the target and switches the model when all are in.
   * Returns when done, or when the re-embedding was replaced or cancelled (the caller starts over).
   */
  private async migrate(projectId: string, row: ProjectSettingsRow, check: () => void, ctx: JobContext): Promise<void> {
    const migration = row.memory_embed_migration as string;
    const target = row.memory_embed_target as string;
    const from = modelStateOf(row, this.models.serverModel).model;
    let spec: CollectionSpec;
    try {
      spec = await this.models.collection(target);
    } catch (err) {
      await this.fail(projectId, migration, err);
      return;
    }
    const embedder = this.models.embedder(target);
    const pageSize = Math.min(MAX_PAGE, Math.max(MIN_PAGE, embedder.maxBatch * BATCHES_PER_PAGE));
    let done = row.memory_embed_done;
    if (row.memory_embed_total === null) {
      const total = await this.rows.count(projectId);
      if (!(await this.settings.putIf(projectId, migration, { memory_embed_total: total }, nowMs()))) return;
    }
    ctx.log.info({ projectId, from, target, cursor: row.memory_embed_cursor, done }, 're-embedding memories');

    // two pages in flight: the next is read and embedded while this one is written
    const embedPage = async (after: string): Promise<{ rows: MemoryRow[]; points: VectorPoint[] }> => {
      const page = await this.rows.pageAfter(projectId, after, pageSize);
      return { rows: page, points: await this.points(page, target) };
    };
    let next = embedPage(row.memory_embed_cursor);
    try {
      for (;;) {
        const page = await next;
        if (page.rows.length === 0) break;
        const cursor = (page.rows[page.rows.length - 1] as MemoryRow).id;
        next = embedPage(cursor);
        next.catch(() => undefined);
        if (page.points.length > 0) await this.store.upsert(spec, projectId, page.points);
        await this.settle(projectId, page.rows, target, spec);
        done += page.rows.length;
        // a change of the setting is noticed here (the guard fails), before more is embedded for a target no longer wanted
        if (!(await this.settings.putIf(projectId, migration, { memory_embed_cursor: cursor, memory_embed_done: done, memory_embed_error: null }, nowMs()))) return;
        check();
      }
    } catch (err) {
      if (endsJob(err)) {
        await this.fail(projectId, migration, err);
        return;
      }
      await this.settings.putIf(projectId, migration, { memory_embed_error: message(err) }, nowMs()).catch(() => undefined);
      throw err;
    }
    // Every memory is in the target: the model is switched in one row update (only if this is still
    // the re-embedding under way), the old model joining the list of collections to empty.
    const drops = JSON.stringify([...parseDrops((await this.settings.get(projectId))?.memory_embed_drop ?? null), from]);
    const switched = await this.models.write(projectId, () => this.settings.switchModel(projectId, migration, drops, nowMs()));
    if (switched) ctx.log.info({ projectId, from, to: target, memories: done }, 'memories re-embedded; the project searches with the new model');
  }

  /**
   * The points of a page in the target model. A memory whose text the model refuses for good (its
   * row is `failed` in the model it is in, most likely) is left out rather than stopping the
   * re-embedding; any other failure fails the page, which is retried from the cursor.
   */
  private async points(page: MemoryRow[], model: string): Promise<VectorPoint[]> {
    try {
      const vectors = await this.indexer.vectorsOf(page, model);
      return page.map((row, i) => memoryPoint(row, vectors[i] as Float32Array, rowCategories(row.categories)));
    } catch (err) {
      if (!endsJob(err)) throw err;
    }
    // a batch refused as a whole may hold one bad text: each memory is tried alone, one after the other
    const points: VectorPoint[] = [];
    for (const row of page) {
      const vector = await this.indexer.vectorOf(row, model).catch((err: unknown) => {
        if (!endsJob(err)) throw err;
        return null;
      });
      if (vector !== null) points.push(memoryPoint(row, vector, rowCategories(row.categories)));
    }
    return points;
  }

  /**
   * Rows of a page that changed or went while it was embedded: a deleted one's vector is removed
   * from the target, a changed one is embedded again (its own indexing job, which writes to both
   * models, may have written before this page did).
   */
  private async settle(projectId: string, embedded: MemoryRow[], model: string, spec: CollectionSpec): Promise<void> {
    let rows = embedded;
    for (let round = 0; round < CHANGED_ROUNDS && rows.length > 0; round++) {
      const now = new Map((await this.rows.getMany(projectId, rows.map((r) => r.id))).map((r) => [r.id, r]));
      const gone = rows.filter((r) => !now.has(r.id)).map((r) => r.id);
      if (gone.length > 0) await this.store.deleteByIds(spec, projectId, gone);
      rows = rows.flatMap((r) => {
        const current = now.get(r.id);
        return current !== undefined && current.revision !== r.revision ? [current] : [];
      });
      if (rows.length === 0) return;
      const points = await this.points(rows, model);
      if (points.length > 0) await this.store.upsert(spec, projectId, points);
    }
  }

  /**
   * Empties the collections of models the project no longer uses (the old model after a switch, a
   * target replaced or cancelled) of its vectors. A model in use again since (changed back) is
   * only taken off the list.
   */
  private async dropAbandoned(projectId: string, row: ProjectSettingsRow, ctx: JobContext): Promise<void> {
    const wait = row.updated_at + (this.options.dropGraceMs ?? DROP_GRACE_MS) - nowMs();
    if (wait > 0) {
      // the caller reads the row again after this: a change meanwhile is seen within a step
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, wait)));
      return;
    }
    const list = row.memory_embed_drop;
    const live = liveModels(modelStateOf(row, this.models.serverModel));
    for (const model of new Set(parseDrops(list))) {
      if (live.includes(model)) continue;
      try {
        await this.store.deleteByFilter(await this.models.collection(model), projectId, null);
        ctx.log.info({ projectId, model }, "removed the project's memory vectors of a model it no longer uses");
      } catch (err) {
        // a model this server can no longer use (its provider unset) cannot be reached to empty
        if (!endsJob(err)) throw err;
        ctx.log.warn({ projectId, model, err: message(err) }, 'could not remove memory vectors of a model this server cannot use; left in place');
      }
    }
    // a change of the setting meanwhile wrote the list: it is read again
    await this.settings.setDropList(projectId, list, null, nowMs());
  }

  /** Ends a re-embedding that can never succeed (the target refuses every input, or cannot be used): `failed`, with the reason. */
  private async fail(projectId: string, migration: string, err: unknown): Promise<void> {
    if (!endsJob(err)) throw err;
    await this.models.write(projectId, () => this.settings.putIf(projectId, migration, { memory_embed_status: 'failed', memory_embed_error: message(err) }, nowMs()));
  }
}

/** A settings row's list of models to empty. */
export function parseDrops(list: string | null): string[] {
  return list ? (JSON.parse(list) as string[]) : [];
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}
