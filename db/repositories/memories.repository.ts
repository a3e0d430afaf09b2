import type { Knex } from 'knex';
import { groupBy } from '../../lib/group-by.js';

export type EmbeddingStatus = 'pending' | 'indexed' | 'failed';

/** mem0's feedback values. */
export const MEMORY_FEEDBACK = ['POSITIVE', 'NEGATIVE', 'VERY_NEGATIVE'] as const;
export type MemoryFeedback = (typeof MEMORY_FEEDBACK)[number];

/** A memory row: a typed record (schema columns set) or a free-form memory. JSON columns are text. */
export interface MemoryRow {
  id: string;
  project_id: string;
  schema_id: string | null;
  schema_name: string | null;
  schema_version: number | null;
  record: string | null;
  memory: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  metadata: string;
  revision: number;
  embedding_status: EmbeddingStatus;
  embedding_error: string | null;
  /** Length of `memory` in keyword terms (BM25's document length); null before it was indexed. */
  term_count?: number | null;
  /** Stored as a message of a conversation (mem0 add, `infer: false`): embedded with the message before it. */
  is_message?: boolean | number;
  /** mem0's feedback on the memory; null when none was given (or it was withdrawn). */
  feedback?: MemoryFeedback | null;
  /** Why the feedback was given, as the caller said. */
  feedback_reason?: string | null;
  /** mem0's categories, a JSON array of names given when the memory was indexed; null before. */
  categories?: string | null;
  /** The catalogue the memory is categorized by (JSON `Category[]`, its add's `custom_categories`); null for the default one. */
  category_set?: string | null;
  /** The values its add's `structured_data_schema` asked for (a JSON object), null when none. */
  structured_data?: string | null;
  /** mem0's expiration date ('YYYY-MM-DD', UTC): hidden from lists and search after it; null, never. */
  expiration_date?: string | null;
  /** From when, in event time, what it says holds; null: from its `created_at`. An update that supersedes it sets the new text's. */
  valid_from?: number | null;
  /** Until when, in event time, it held: set when an update superseded it or a decision ended it; null: it still holds. */
  valid_to?: number | null;
  /** On a version an update superseded: the memory (its id, kept by the current text) that superseded it. */
  superseded_by?: string | null;
  /** When the memory's event happened (mem0's `timestamp`, default the write): what `created_at` filters and sorts by. */
  created_at: number;
  /** The last write. */
  updated_at: number;
}

export interface HistoryRow {
  id: string;
  project_id: string;
  memory_id: string;
  event: 'ADD' | 'UPDATE' | 'DELETE';
  old_memory: string | null;
  new_memory: string | null;
  created_at: number;
}

/** Listing filters: entity ids and a schema, all optional. */
export interface MemoryListFilter {
  schema_name?: string;
  user_id?: string;
  agent_id?: string;
  run_id?: string;
  app_id?: string;
}

/** An entity column of the memories table (mem0's users, agents, runs and apps). */
export type EntityColumn = 'user_id' | 'agent_id' | 'run_id' | 'app_id';

/** One entity that has memories: its id, how many, how many rows wait on indexing or failed it, and when the first happened and the last was written. */
export interface EntityCount {
  name: string;
  total: number;
  pending: number;
  failed: number;
  first_at: number;
  last_at: number;
}

/** The records one retention policy covers: one schema of one project. */
export interface RetentionScope {
  projectId: string;
  schemaId: string;
  schemaName: string;
}

/** Most lookups `UNION ALL`ed into one statement (SQLite takes at most 500 terms in a compound SELECT). */
const LOOKUPS_A_STATEMENT = 200;

/** The entity ids a conversation is told apart by (with its project). */
const CONVERSATION_IDS = ['user_id', 'agent_id', 'run_id', 'app_id'] as const;

/** Memory rows and their history, every query scoped by project. */
export class MemoriesRepository {
  constructor(private readonly db: Knex) {}

  /** Runs `work` in one transaction. */
  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Rows in one statement per 200, in the caller's transaction. */
  async insertMany(trx: Knex.Transaction, rows: MemoryRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) await trx('memories').insert(rows.slice(i, i + 200));
  }

  async get(projectId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<MemoryRow | undefined> {
    return (await trx<MemoryRow>('memories').where({ project_id: projectId, id }).first()) as MemoryRow | undefined;
  }

  /**
   * The rows of `ids` that belong to the project. Looked up by id alone (the primary key, unique
   * across projects), the project checked on each row: with `project_id = ?` in the query, SQLite
   * without statistics reads the rows through a project index, i.e. every row of the project.
   */
  async getMany(projectId: string, ids: string[], trx: Knex | Knex.Transaction = this.db): Promise<MemoryRow[]> {
    if (ids.length === 0) return [];
    const rows = (await trx<MemoryRow>('memories').whereIn('id', ids)) as MemoryRow[];
    return rows.filter((row) => row.project_id === projectId);
  }

  /** The project's memories after `afterId` in id order, at most `limit` (how a re-embedding walks them). */
  async pageAfter(projectId: string, afterId: string, limit: number): Promise<MemoryRow[]> {
    return (await this.db<MemoryRow>('memories').where({ project_id: projectId }).where('id', '>', afterId).orderBy('id').limit(limit)) as MemoryRow[];
  }

  /** How many memories (and typed records) the project holds. */
  async count(projectId: string): Promise<number> {
    const [{ n }] = (await this.db('memories').where({ project_id: projectId }).count({ n: '*' })) as [{ n: number | string }];
    return Number(n);
  }

  /**
   * How many of the project's memories (and typed records, and the versions updates superseded)
   * matching `owner` (entity ids; none: the whole project) are in each embedding status. Read in
   * one snapshot from two index ranges: the pending and failed rows from the project's status
   * index (a run's or an app's looked up row by row), the total from the owner's entity index;
   * every other row is indexed. Grouping the owner's rows by status instead reads each row
   * (~0.4 s for 100k on either engine).
   */
  async statusCounts(projectId: string, owner: Omit<MemoryListFilter, 'schema_name'> = {}): Promise<Record<EmbeddingStatus, number>> {
    const scope = { project_id: projectId, ...owner };
    return this.db.transaction(async (trx) => {
      const open = (await trx('memories').where(scope).whereIn('embedding_status', ['pending', 'failed']).groupBy('embedding_status').select('embedding_status').count({ n: '*' })) as Array<{
        embedding_status: EmbeddingStatus;
        n: number | string;
      }>;
      const [{ n: total }] = (await trx('memories').where(scope).count({ n: '*' })) as [{ n: number | string }];
      const counts: Record<EmbeddingStatus, number> = { pending: 0, indexed: 0, failed: 0 };
      for (const row of open) counts[row.embedding_status] = Number(row.n);
      counts.indexed = Number(total) - counts.pending - counts.failed;
      return counts;
    });
  }

  /** The project's memories in one embedding status, the latest written first. */
  async withStatus(projectId: string, status: EmbeddingStatus, limit: number): Promise<MemoryRow[]> {
    return (await this.db<MemoryRow>('memories')
      .where({ project_id: projectId, embedding_status: status })
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)) as MemoryRow[];
  }

  async list(projectId: string, filter: MemoryListFilter, limit: number, offset: number): Promise<MemoryRow[]> {
    return (await this.db<MemoryRow>('memories')
      .where({ project_id: projectId, ...filter })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as MemoryRow[];
  }

  /**
   * The memories matching `filter` not indexed yet, the latest written first (not the latest by
   * event time: an add may say when its facts happened, years ago), at most `limit`.
   */
  async unindexedNewest(projectId: string, filter: MemoryListFilter, limit: number): Promise<MemoryRow[]> {
    return (await this.db<MemoryRow>('memories')
      .where({ project_id: projectId, ...filter })
      .whereNot('embedding_status', 'indexed')
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)) as MemoryRow[];
  }

  /**
   * The message stored just before `row` in the same conversation: same entity ids, written as a
   * message, at most `withinMs` earlier by event time (the same time: an earlier id).
   */
  async previousMessage(row: MemoryRow, withinMs: number): Promise<MemoryRow | undefined> {
    return (await this.previousOf(row, withinMs)) as MemoryRow | undefined;
  }

  /** The statement `previousMessage` runs: at most one row. */
  private previousOf(row: MemoryRow, withinMs: number): Knex.QueryBuilder<MemoryRow> {
    return this.conversationOf(row)
      .where((q) => q.where('created_at', '<', row.created_at).orWhere((same) => same.where('created_at', row.created_at).where('id', '<', row.id)))
      .where('created_at', '>=', Number(row.created_at) - withinMs)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .first();
  }

  /**
   * `previousMessage` of each of `rows`, of any conversations: one statement for each conversation
   * with several of them, its messages from `withinMs` before the earliest to the latest, in order,
   * each row's predecessor the one just before it; and one for all the rest, a lookup each (up to
   * `LOOKUPS_A_STATEMENT`): conversations with one of them — an import's concurrent writers each add
   * to their own — a conversation with many more messages in that span than `rows`, as when an
   * import's jobs run far apart in time, and a row no longer there as it was read.
   */
  async previousMessages(rows: MemoryRow[], withinMs: number): Promise<Array<MemoryRow | undefined>> {
    const found: Array<MemoryRow | undefined> = new Array(rows.length);
    const alone: number[] = [];
    const conversation = (row: MemoryRow): string => JSON.stringify([row.project_id, ...CONVERSATION_IDS.map((column) => row[column])]);
    for (const indices of groupBy(rows.keys(), (i) => conversation(rows[i] as MemoryRow)).values()) {
      if (indices.length === 1) alone.push(indices[0] as number);
      else {
        const spanned = await this.inSpan(
          indices.map((i) => rows[i] as MemoryRow),
          withinMs,
        );
        spanned.forEach((previous, k) => {
          if (previous === null) alone.push(indices[k] as number);
          else found[indices[k] as number] = previous;
        });
      }
    }
    for (const [k, previous] of (await this.eachPrevious(alone.map((i) => rows[i] as MemoryRow), withinMs)).entries()) found[alone[k] as number] = previous;
    return found;
  }

  /**
   * The predecessors of messages of one conversation from the span of its messages around them;
   * null for each one the span cannot tell (see `previousMessages`).
   */
  private async inSpan(rows: MemoryRow[], withinMs: number): Promise<Array<MemoryRow | undefined | null>> {
    const times = rows.map((row) => Number(row.created_at));
    const limit = 2 * rows.length + 32;
    const span = (await this.conversationOf(rows[0] as MemoryRow)
      .whereBetween('created_at', [Math.min(...times) - withinMs, Math.max(...times)])
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit)) as MemoryRow[];
    const at = span.length < limit ? new Map(span.map((row, i) => [row.id, i])) : new Map<string, number>();
    return rows.map((row) => {
      const i = at.get(row.id) ?? -1;
      const own = span[i];
      if (own === undefined || own.revision !== row.revision || Number(own.created_at) !== Number(row.created_at)) return null;
      const before = span[i - 1];
      return before !== undefined && Number(before.created_at) >= Number(row.created_at) - withinMs ? before : undefined;
    });
  }

  /**
   * `previousMessage` of each of `rows`, their lookups side by side (UNION ALL) in one statement
   * per `LOOKUPS_A_STATEMENT`, each result tagged with its row.
   */
  private async eachPrevious(rows: MemoryRow[], withinMs: number): Promise<Array<MemoryRow | undefined>> {
    const found: Array<MemoryRow | undefined> = new Array(rows.length).fill(undefined);
    for (let start = 0; start < rows.length; start += LOOKUPS_A_STATEMENT) {
      const lookups = rows.slice(start, start + LOOKUPS_A_STATEMENT).map((row, i) => this.db.select(this.db.raw('? as previous_of', [start + i]), 'p.*').from(this.previousOf(row, withinMs).as('p')));
      const [first, ...rest] = lookups as [Knex.QueryBuilder, ...Knex.QueryBuilder[]];
      const tagged = (await (rest.length === 0 ? first : first.unionAll(rest))) as Array<MemoryRow & { previous_of: number | string }>;
      for (const { previous_of: of, ...row } of tagged) found[Number(of)] = row;
    }
    return found;
  }

  /** The messages of `row`'s conversation: same project and entity ids, written as messages. */
  private conversationOf(row: MemoryRow): Knex.QueryBuilder<MemoryRow> {
    const query = this.db<MemoryRow>('memories').where({ project_id: row.project_id, is_message: 1 });
    for (const column of CONVERSATION_IDS) {
      if (row[column] === null) query.whereNull(column);
      else query.where(column, row[column]);
    }
    return query;
  }

  /**
   * Which of `texts` (lower-cased) free-form memories matching `filter` already hold as facts valid
   * now, ignoring case (a superseded or ended text said again is a fact again); memories expired before `today` ('YYYY-MM-DD') do not count, as lists and search no
   * longer show them.
   */
  async knownTexts(projectId: string, filter: MemoryListFilter, texts: string[], today: string): Promise<Set<string>> {
    if (texts.length === 0) return new Set();
    const rows = (await this.db('memories')
      .where({ project_id: projectId, ...filter })
      .whereNull('schema_name')
      .whereNull('valid_to')
      .where((q) => q.whereNull('expiration_date').orWhere('expiration_date', '>=', today))
      .whereIn(this.db.raw('lower(memory)') as unknown as string, texts.map((t) => t.toLowerCase()))
      .select('memory')) as Array<{ memory: string }>;
    return new Set(rows.map((r) => r.memory.toLowerCase()));
  }

  /**
   * Rewrites a row's content if it is still at `revision`; bumps the revision and sets it pending
   * again. Returns the number of rows changed (0: someone else changed it first).
   */
  async update(
    trx: Knex.Transaction,
    projectId: string,
    id: string,
    revision: number,
    changes: Pick<MemoryRow, 'record' | 'memory' | 'metadata' | 'updated_at' | 'term_count'> & Partial<Pick<MemoryRow, 'created_at' | 'expiration_date' | 'valid_from'>>,
  ): Promise<number> {
    return trx('memories')
      .where({ project_id: projectId, id, revision })
      .update({ ...changes, embedding_status: 'pending', embedding_error: null, revision: trx.raw('revision + 1') });
  }

  /**
   * Sets (or, with nulls, withdraws) the feedback on a memory. Its content, revision and index
   * are left alone: feedback is about the memory, not a change to it. Returns the rows changed.
   */
  async setFeedback(projectId: string, id: string, feedback: MemoryFeedback | null, reason: string | null): Promise<number> {
    return this.db('memories').where({ project_id: projectId, id }).update({ feedback, feedback_reason: reason });
  }

  /**
   * Ends a memory's validity at `validTo` (event time) if it is still at `revision`: a new revision,
   * indexed again. Returns the rows changed (0: someone else changed it first).
   */
  async endValidity(trx: Knex.Transaction, projectId: string, id: string, revision: number, validTo: number, updatedAt: number): Promise<number> {
    return trx('memories')
      .where({ project_id: projectId, id, revision })
      .whereNull('valid_to')
      .update({ valid_to: validTo, updated_at: updatedAt, embedding_status: 'pending', embedding_error: null, revision: trx.raw('revision + 1') });
  }

  /** The versions an update superseded of a memory, the latest first (through the successor index). */
  async versionsOf(projectId: string, id: string, trx: Knex | Knex.Transaction = this.db): Promise<MemoryRow[]> {
    return (await trx<MemoryRow>('memories')
      .where({ project_id: projectId, superseded_by: id })
      .orderBy([
        { column: 'valid_to', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])) as MemoryRow[];
  }

  async delete(trx: Knex.Transaction, projectId: string, id: string): Promise<number> {
    return trx('memories').where({ project_id: projectId, id }).delete();
  }

  /** Ids of a schema's records created before `cutoff`, oldest first (retention by age). */
  async idsCreatedBefore(scope: RetentionScope, cutoff: number, limit: number): Promise<string[]> {
    const rows = (await this.db('memories')
      .where({ project_id: scope.projectId, schema_name: scope.schemaName, schema_id: scope.schemaId })
      .where('created_at', '<', cutoff)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit)
      .select('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /**
   * Memories whose expiration date is before `day` ('YYYY-MM-DD'), in one project or all, the
   * longest expired first; read through the expiration index.
   */
  async expiredBefore(day: string, limit: number, projectId?: string): Promise<Array<{ project_id: string; id: string }>> {
    const query = this.db('memories').where('expiration_date', '<', day);
    if (projectId !== undefined) query.where('project_id', projectId);
    return (await query
      .orderBy([
        { column: 'expiration_date', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit)
      .select('project_id', 'id')) as Array<{ project_id: string; id: string }>;
  }

  /**
   * Ids of a schema's records beyond the newest `keep` of their user_id (null is a group of its
   * own), oldest first (retention by count). A window function, on SQLite and MariaDB ≥ 10.6 alike.
   */
  async idsBeyondNewest(scope: RetentionScope, keep: number, limit: number): Promise<string[]> {
    const ranked = this.db('memories')
      .where({ project_id: scope.projectId, schema_name: scope.schemaName, schema_id: scope.schemaId })
      .select('id', 'created_at', this.db.raw('row_number() over (partition by user_id order by created_at desc, id desc) as rn'));
    const rows = (await this.db
      .from(ranked.as('ranked'))
      .where('rn', '>', keep)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit)
      .select('id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** Records the outcome of indexing one revision; a newer revision is left alone. */
  /** The number of rows changed: 0 when the row is gone or at another revision. */
  async markEmbedding(
    projectId: string,
    id: string,
    revision: number,
    status: EmbeddingStatus,
    error: string | null = null,
    categories?: string[],
    trx: Knex | Knex.Transaction = this.db,
  ): Promise<number> {
    const categorized = categories === undefined ? {} : { categories: JSON.stringify(categories) };
    return trx('memories').where({ project_id: projectId, id, revision }).update({ embedding_status: status, embedding_error: error, ...categorized });
  }

  /**
   * Marks many revisions `indexed` in one statement, with the categories each was given, each only
   * while its row is still at that revision; answers, per item, whether its row was marked. Ids must be distinct. The rows are
   * found by id (the primary key; see `getMany`), each item's revision matched with a CASE on it.
   */
  async markIndexedMany(projectId: string, items: Array<{ id: string; revision: number; categories?: string[] }>, trx: Knex | Knex.Transaction = this.db): Promise<boolean[]> {
    if (items.length === 0) return [];
    const cases = items.map(() => 'WHEN ? THEN ?').join(' ');
    const changed: number = await trx('memories')
      .whereIn(
        'id',
        items.map((item) => item.id),
      )
      .where('project_id', projectId)
      .whereRaw(`revision = CASE id ${cases} END`, items.flatMap((item) => [item.id, item.revision]))
      .update({
        embedding_status: 'indexed',
        embedding_error: null,
        categories: trx.raw(`CASE id ${cases} END`, items.flatMap((item) => [item.id, JSON.stringify(item.categories ?? [])])),
      });
    if (changed === items.length) return items.map(() => true);
    // some rows changed or went meanwhile: which ones is read back (rare)
    const now = new Map((await this.getMany(projectId, items.map((item) => item.id), trx)).map((row) => [row.id, row]));
    return items.map((item) => {
      const row = now.get(item.id);
      return row !== undefined && row.revision === item.revision && row.embedding_status === 'indexed';
    });
  }

  /** History entries, in one statement per 500. */
  async addHistory(trx: Knex.Transaction, rows: HistoryRow | HistoryRow[]): Promise<void> {
    const all = Array.isArray(rows) ? rows : [rows];
    for (let i = 0; i < all.length; i += 500) await trx('memory_history').insert(all.slice(i, i + 500));
  }

  async history(projectId: string, memoryId: string): Promise<HistoryRow[]> {
    return (await this.db<HistoryRow>('memory_history')
      .where({ project_id: projectId, memory_id: memoryId })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])) as HistoryRow[];
  }

  /**
   * Every value of an entity column the project's memories valid now carry (not the versions
   * updates superseded, nor the memories add decisions ended), with its count of those memories,
   * and how many of all its rows (versions included, as `statusCounts` counts them) are pending
   * or failed, in one grouped query.
   */
  async entityCounts(projectId: string, column: EntityColumn): Promise<EntityCount[]> {
    const current = 'valid_to IS NULL';
    const rows = (await this.db('memories')
      .where('project_id', projectId)
      .whereNotNull(column)
      .groupBy(column)
      .havingRaw(`sum(CASE WHEN ${current} THEN 1 ELSE 0 END) > 0`)
      .select(
        `${column} as name`,
        this.db.raw(`sum(CASE WHEN ${current} THEN 1 ELSE 0 END) as total`),
        this.db.raw(`sum(CASE WHEN embedding_status = 'pending' THEN 1 ELSE 0 END) as pending`),
        this.db.raw(`sum(CASE WHEN embedding_status = 'failed' THEN 1 ELSE 0 END) as failed`),
        this.db.raw(`min(CASE WHEN ${current} THEN created_at END) as first_at`),
        this.db.raw(`max(CASE WHEN ${current} THEN updated_at END) as last_at`),
      )) as Array<Record<'total' | 'pending' | 'failed' | 'first_at' | 'last_at', number | string> & { name: string }>;
    return rows.map((r) => ({
      name: r.name,
      total: Number(r.total),
      pending: Number(r.pending),
      failed: Number(r.failed),
      first_at: Number(r.first_at),
      last_at: Number(r.last_at),
    }));
  }
}
