import type { MemoriesRepository, MemoryRow } from '../../db/repositories/memories.repository.js';
import type { UsageRepository } from '../../db/repositories/usage.repository.js';
import type { OutboxTransaction, TransactionalOutbox } from '../../db/transactional-outbox.js';
import { envelope, MAX_INDEX_GROUP } from '../../contracts/jobs/catalogue.js';
import { newId, nowMs } from '../../lib/time.js';
import { utcDay } from '../usage.js';
import type { TermsOf } from '../../db/repositories/memory-terms.repository.js';
import { MemoryKeywords } from './keyword.js';
import type { MemoryWriteEvents } from './events.js';
import { MAX_VERSIONS, validFrom } from './validity.js';
import { Coalescer } from '../../lib/coalescer.js';
import { MAX_BATCH } from './rows.js';
import { nextTurn } from '../../lib/turns.js';
import { groupBy } from '../../lib/group-by.js';

/** A memory write's transaction: the outbox's, and the write's indexing jobs gathered (`IndexJobs`). */
export interface MemoryTransaction extends OutboxTransaction {
  /** Queues the indexing of a memory at a revision, recorded with the write's others as its work ends. */
  index(row: Pick<MemoryRow, 'project_id' | 'id'>, revision: number): void;
}

/** Most rows of adds written together (a larger add, a whole batch import, is written alone). */
const MAX_ADD_ROWS = MAX_BATCH;

/**
 * While clients are adding at once (the last transaction held several adds), how long an add that
 * finds no transaction in progress waits for others to share its transaction, unless a job's worth
 * of rows (`MAX_INDEX_GROUP`, one indexing job) is waiting sooner. Eight clients adding chat lines
 * one at a time (bench:import, production, 6 rounds interleaved with the code before): 4–23 % fewer
 * statements and commits, a few percent more memories searchable a second (within the 2-core
 * machine's noise). A lone client's adds never wait, nor do batches (lingering only slowed those).
 */
const ADD_LINGER = { ms: 10, items: MAX_INDEX_GROUP };

/** What an update writes: the content, and optionally the event time and expiration date. */
export type MemoryChange = Pick<MemoryRow, 'record' | 'memory' | 'metadata'> & Partial<Pick<MemoryRow, 'created_at' | 'expiration_date'>>;

/**
 * How typed records and free-form memories are written. The row is the source of truth and
 * commits with its history entry, its keyword index and an outbox entry: the `memory.index` job
 * then derives the vector (see `MemoryIndexer`). A change bumps the row's revision and queues
 * the job again; a delete queues it to remove the vector. Each change is told to the memory-write
 * event seam (`MemoryWriteEvents`: the webhooks, the entity index) in the same transaction.
 */
export class MemoryWrites {
  /** Adds waiting for the transaction in progress to end, written together in the next (see `add`). */
  private readonly adds = new Coalescer<null, MemoryRow, void>(
    async (_, rows) => {
      if (this.options.synchronousDriver) await nextTurn();
      await this.transaction((tx) => this.insert(tx, rows));
      return rows.map(() => undefined);
    },
    { maxBatch: MAX_ADD_ROWS, parallel: 1, isolate: () => true, linger: ADD_LINGER },
  );

  constructor(
    private readonly rows: MemoriesRepository,
    private readonly outbox: TransactionalOutbox,
    private readonly keywords: MemoryKeywords,
    private readonly usage: UsageRepository,
    private readonly events: MemoryWriteEvents,
    /**
     * `synchronousDriver`: the database runs a whole transaction without letting the event loop
     * turn (better-sqlite3). Adds whose requests arrived with the first then never find one in
     * progress to wait for, so each group waits one turn before it starts. Not on a networked
     * database, where a transaction waits on the network anyway: there the turn only moved the
     * outbox relay's pass into the transaction's path and cost a batch import CPU (0.18 → 0.26 ms an add).
     */
    private readonly options: { synchronousDriver: boolean } = { synchronousDriver: false },
  ) {}

  /**
   * Runs a write in one transaction with its jobs. Once it has committed, its change is counted
   * for every process's keyword caches, then the outbox relay is woken for its jobs. Only then
   * is the write acknowledged.
   */
  transaction<T>(work: (tx: MemoryTransaction) => Promise<T>): Promise<T> {
    return this.outbox.write(
      async (outer) => {
        const jobs = new IndexJobs();
        const done = await work({ ...outer, index: (row, revision) => jobs.add(row.project_id, row.id, revision) });
        await jobs.record(outer);
        return done;
      },
      () => this.keywords.settled(),
    );
  }

  /**
   * Stores new rows (see `insert`) and resolves once they have committed. Adds arriving while
   * another is being written wait and are then written together, in one transaction: under load
   * (a chat import, many clients at once) a handful of statements and one commit serve many adds;
   * an add arriving alone is written at once. When a shared transaction fails, each of its adds is
   * tried again alone, so one add's error is that add's only.
   */
  async add(rows: MemoryRow[]): Promise<void> {
    await this.adds.submit('', null, rows);
  }

  /** New rows, each with its ADD history entry and its indexing job, metered: a few statements however many rows. */
  private async insert(tx: MemoryTransaction, rows: MemoryRow[]): Promise<void> {
    if (rows.length === 0) return;
    // metered on the day of the write, not of the event (mem0's timestamp may be years ago); the
    // counters in one order, so that two transactions metering the same ones never wait on each other
    for (const [key, metered] of [...groupBy(rows, (row) => `${row.project_id} ${utcDay(row.updated_at)}`)].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const [projectId, day] = key.split(' ') as [string, string];
      await this.usage.increment(tx.trx, projectId, 'memory.add', day, metered.length);
    }
    const terms = await this.keywords.termsOf(rows);
    rows.forEach((row, i) => (row.term_count = (terms[i] as TermsOf).length));
    await this.rows.insertMany(tx.trx, rows);
    // history tells when a change was written (the row's created_at is when its event happened)
    await this.rows.addHistory(
      tx.trx,
      rows.map((row) => ({ id: newId(), project_id: row.project_id, memory_id: row.id, event: 'ADD', old_memory: null, new_memory: row.memory, created_at: row.updated_at })),
    );
    for (const row of rows) tx.index(row, 1);
    await this.keywords.write(tx.trx, rows, true, terms);
    for (const [projectId, added] of groupBy(rows, (row) => row.project_id)) await this.events.emit(tx, { kind: 'added', projectId, rows: added });
  }

  /**
   * Writes a row's new text, values and metadata (and, when given, its event time and expiration
   * date) with its UPDATE history entry and indexing job — the vector carries the event time
   * search filters by — and its keyword index when the text changed, if the row is still at
   * `revision`; throws what `changed` makes otherwise. A free-form memory whose text changes keeps
   * the text it had as a superseded version, valid until `validFrom` (event time, default now),
   * from when the new text holds. Returns the row as written.
   */
  async update(tx: MemoryTransaction, row: MemoryRow, revision: number, change: MemoryChange, changed: () => Error, at?: number): Promise<MemoryRow> {
    const now = nowMs();
    const { memory } = change;
    const supersedes = row.schema_name === null && memory !== row.memory;
    // an update said to happen before the text it replaces began leaves that text no time of its own
    const from = supersedes ? Math.max(at ?? now, validFrom(row)) : undefined;
    const written = { ...change, updated_at: now, term_count: MemoryKeywords.length(memory), ...(from === undefined ? {} : { valid_from: from }) };
    if ((await this.rows.update(tx.trx, row.project_id, row.id, revision, written)) === 0) throw changed();
    if (memory !== row.memory) await this.keywords.write(tx.trx, [{ ...row, memory }]);
    await this.rows.addHistory(tx.trx, { id: newId(), project_id: row.project_id, memory_id: row.id, event: 'UPDATE', old_memory: row.memory, new_memory: memory, created_at: now });
    tx.index(row, row.revision + 1);
    const current = (await this.rows.get(row.project_id, row.id, tx.trx)) as MemoryRow;
    await this.events.emit(tx, { kind: 'updated', projectId: row.project_id, row: current, previous: row });
    if (from !== undefined) await this.supersede(tx, row, from);
    return current;
  }

  /**
   * Keeps `row` as it was before an update as a version of its own, valid until `until`: a new id,
   * `superseded_by` the memory, indexed and searchable (with `as_of` or `include_superseded`). Past
   * `MAX_VERSIONS` versions of the memory, the oldest is deleted.
   */
  private async supersede(tx: MemoryTransaction, row: MemoryRow, until: number): Promise<void> {
    const now = nowMs();
    const version: MemoryRow = { ...row, id: newId(), revision: 1, embedding_status: 'pending', embedding_error: null, valid_from: validFrom(row), valid_to: until, superseded_by: row.id, updated_at: now };
    await this.rows.insertMany(tx.trx, [version]);
    await this.keywords.write(tx.trx, [version], true);
    tx.index(version, 1);
    await this.events.emit(tx, { kind: 'superseded', projectId: row.project_id, version, by: row.id });
    const versions = await this.rows.versionsOf(row.project_id, row.id, tx.trx);
    await this.forget(tx, versions.slice(MAX_VERSIONS));
  }

  /**
   * Ends a memory's validity at `at` (event time) — a DELETE decided by an add: it stays, readable
   * with `as_of` and `include_superseded` — with its DELETE history entry, if it is still at
   * `revision`; throws what `changed` makes otherwise.
   */
  async end(tx: MemoryTransaction, row: MemoryRow, revision: number, at: number, changed: () => Error): Promise<MemoryRow> {
    const now = nowMs();
    if ((await this.rows.endValidity(tx.trx, row.project_id, row.id, revision, Math.max(at, validFrom(row)), now)) === 0) throw changed();
    await this.rows.addHistory(tx.trx, { id: newId(), project_id: row.project_id, memory_id: row.id, event: 'DELETE', old_memory: row.memory, new_memory: null, created_at: now });
    tx.index(row, row.revision + 1);
    const ended = (await this.rows.get(row.project_id, row.id, tx.trx)) as MemoryRow;
    await this.events.emit(tx, { kind: 'ended', projectId: row.project_id, row: ended });
    return ended;
  }

  /** Deletes a row with its superseded versions, its DELETE history entry and vector removal; false (and nothing written) when it was already gone. */
  async remove(tx: MemoryTransaction, row: MemoryRow): Promise<boolean> {
    if ((await this.rows.delete(tx.trx, row.project_id, row.id)) === 0) return false;
    await this.keywords.remove(tx.trx, [row.id], row.project_id);
    await this.rows.addHistory(tx.trx, { id: newId(), project_id: row.project_id, memory_id: row.id, event: 'DELETE', old_memory: row.memory, new_memory: null, created_at: nowMs() });
    tx.index(row, row.revision + 1);
    // a version deleted directly (a user's delete-all reaches them too) is its memory's past, not a memory
    await this.events.emit(tx, row.superseded_by ? { kind: 'forgotten', projectId: row.project_id, version: row } : { kind: 'deleted', projectId: row.project_id, rows: [row] });
    await this.forget(tx, await this.rows.versionsOf(row.project_id, row.id, tx.trx));
    return true;
  }

  /** Deletes superseded versions with their keyword index and vectors (no history: they are their memory's past). */
  private async forget(tx: MemoryTransaction, versions: MemoryRow[]): Promise<void> {
    for (const version of versions) {
      if ((await this.rows.delete(tx.trx, version.project_id, version.id)) === 0) continue;
      await this.keywords.remove(tx.trx, [version.id], version.project_id);
      tx.index(version, version.revision + 1);
      await this.events.emit(tx, { kind: 'forgotten', projectId: version.project_id, version });
    }
  }

  /**
   * Stores rows whose vectors are written elsewhere (a bulk import or a benchmark's seed, rows from
   * `newMemoryRow`): the rows and their keyword index in one transaction, without history or jobs.
   */
  async import(rows: MemoryRow[]): Promise<void> {
    const terms = await this.keywords.termsOf(rows);
    rows.forEach((row, i) => (row.term_count = (terms[i] as TermsOf).length));
    await this.transaction(async (tx) => {
      await this.rows.insertMany(tx.trx, rows);
      await this.keywords.write(tx.trx, rows, true, terms);
    });
  }
}

/**
 * The `memory.index` jobs of one write, recorded together when its work is done: one job per
 * project and up to `MAX_INDEX_GROUP` memories (`more`), not one per memory. A job costs the queue a
 * few Redis scripts and the worker a run, whatever it holds, and its memories' texts reach the
 * model together.
 */
class IndexJobs {
  private readonly memories = new Map<string, Array<{ memoryId: string; revision: number }>>();

  add(projectId: string, memoryId: string, revision: number): void {
    const queued = this.memories.get(projectId);
    if (queued === undefined) this.memories.set(projectId, [{ memoryId, revision }]);
    else queued.push({ memoryId, revision });
  }

  async record(tx: OutboxTransaction): Promise<void> {
    for (const [projectId, memories] of this.memories) {
      for (let i = 0; i < memories.length; i += MAX_INDEX_GROUP) {
        const [first, ...more] = memories.slice(i, i + MAX_INDEX_GROUP) as [{ memoryId: string; revision: number }, ...Array<{ memoryId: string; revision: number }>];
        await tx.add(projectId, envelope('memory.index', { projectId, ...first, ...(more.length > 0 ? { more } : {}) }));
      }
    }
  }
}
