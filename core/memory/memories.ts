import type { MemoriesRepository, MemoryFeedback, MemoryListFilter, MemoryRow } from '../../db/repositories/memories.repository.js';
import { checkMetadataSize } from '../../contracts/vector-store.js';
import { parseFilter, toPredicate, type FilterNode } from '../../contracts/filter/filter.js';
import { badRequest, checkBatch, conflict, notFound } from '../../lib/errors.js';
import { checkBatchSize, ENTITY_IDS, filterRow, MEMORY_FILTER_SCOPE, memoryFields, newMemoryRow, requireEntity, type EntityIds, type MemoryFields, type MemoryOwner } from './rows.js';
import type { MemorySearch } from './search.js';
import type { ExportSchema } from './export-schema.js';
import { summarize, type MemorySummary } from './summary.js';
import { eventTimeOf, shownMemories } from './expiry.js';
import { nowMs } from '../../lib/time.js';
import { utcDay } from '../usage.js';

export { MEMORY_FEEDBACK, type MemoryFeedback } from '../../db/repositories/memories.repository.js';
import type { MemoryWrites } from './writes.js';
import { validIn, type ValidityView } from './validity.js';
import { nextTurn } from '../../lib/turns.js';

/** mem0's `POST /v3/memories/add/`: messages in, memories out. */
export interface AddMemoriesInput extends MemoryOwner {
  messages: Array<{ role: string; content: string }>;
  /** When what the messages say happened, in unix seconds (mem0's field); default now. */
  timestamp?: number;
  /** false: each message is stored as given; true (mem0's default): facts are picked out of the user's messages. */
  infer?: boolean;
  /** With infer: the caller's instructions to the model picking the facts (mem0's custom_instructions). */
  instructions?: string;
  /** mem0's `structured_data_schema`: the values to extract from the messages onto each memory the add stores. */
  structuredSchema?: ExportSchema;
}

/** What mem0's update may change; absent fields stay as they are. */
export interface MemoryUpdate {
  text?: string;
  metadata?: Record<string, unknown>;
  /** The event time: unix seconds, or an ISO-8601 date or date-time. */
  timestamp?: number | string;
  /** 'YYYY-MM-DD'; null clears it. */
  expiration_date?: string | null;
}

/** How a list narrows beyond its filter (mem0's get_all options). */
export interface ListOptions {
  showExpired?: boolean;
  /** A date ('YYYY-MM-DD', from its start in UTC) or an ISO-8601 date-time. */
  startDate?: string;
  /** A date (through its end in UTC) or an ISO-8601 date-time. */
  endDate?: string;
  /** Only memories in this indexing state. */
  embeddingStatus?: MemoryRow['embedding_status'];
  /** The facts valid at this time (epoch ms) instead of now; or every version (`includeSuperseded`). */
  validity?: ValidityView;
  /** Only these memories (those mentioning an entity). */
  within?: ReadonlySet<string>;
}

/** A memory a new fact is compared with, at the revision it was read. */
export type RelatedMemory = MemoryView & { revision: number };

/** A memory as mem0's v1 endpoints show it; typed records carry their schema in metadata. */
export interface MemoryView extends MemoryFields {
  /** `pending` until searchable; `failed` only for input that can never be indexed. */
  embedding_status: MemoryRow['embedding_status'];
  /** Why it failed, or the last error while it is retried (pending). */
  embedding_error: string | null;
  /** mem0's feedback on the memory (POST /v1/feedback), null when none. */
  feedback: MemoryFeedback | null;
  feedback_reason: string | null;
  /** The values its add's `structured_data_schema` asked for (null when not stated), or null when the add named none. */
  structured_data: Record<string, unknown> | null;
}

/** How many memories are in each indexing state, and in all. */
export interface IndexingStatus {
  total: number;
  pending: number;
  indexed: number;
  failed: number;
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

/** How many of an entity's newest memories `related` looks at for ones not indexed yet. */
const UNINDEXED_CANDIDATES = 20;

/**
 * mem0's free-form memories: add, get, update, delete, history and list. They share the table,
 * the write path and search with typed records, which mem0's endpoints show too.
 */
export class Memories {
  constructor(
    private readonly rows: MemoriesRepository,
    private readonly writes: MemoryWrites,
    private readonly memorySearch: MemorySearch,
  ) {}

  /**
   * Stores free-form memories (mem0 add), each indexed in the background. With `skipKnown`, a
   * text the same entity already has as a free-form memory (ignoring case) is not stored again.
   * `eventTime` (epoch ms, default now) is when what they say happened: their `created_at`.
   */
  async add(projectId: string, owner: MemoryOwner, texts: string[], options: { skipKnown?: boolean; eventTime?: number; messages?: boolean } = {}): Promise<MemoryView[]> {
    requireEntity(owner);
    let fresh = distinct(texts);
    if (options.skipKnown && fresh.length > 0) {
      const pinned = Object.fromEntries(ENTITY_IDS.filter((k) => owner[k] !== undefined).map((k) => [k, owner[k]])) as MemoryListFilter;
      const known = await this.rows.knownTexts(projectId, pinned, fresh, utcDay(nowMs()));
      fresh = fresh.filter((t) => !known.has(t.toLowerCase()));
    }
    const rows = fresh.map((memory) => ({ ...newMemoryRow(projectId, owner, memory, undefined, options.eventTime), is_message: options.messages === true ? 1 : 0 }));
    if (rows.length === 0) return [];
    await this.writes.add(rows);
    return rows.map(memoryView);
  }

  /**
   * Stores many mem0 adds with infer: false in one transaction (a history import): each item's
   * messages as given, as `add` stores them, at most `MAX_BATCH` messages in all. Validated whole:
   * when any item is bad, a 400 lists every bad one by its index (`/memories/3`) and nothing
   * is stored. Returns the memories stored, item by item, in order.
   */
  async addMany(projectId: string, items: AddMemoriesInput[]): Promise<MemoryView[]> {
    checkBatchSize(items.reduce((n, item) => n + item.messages.length, 0), 'messages');
    const rows = checkBatch(items, '/memories', 'memories', (item) => {
      requireEntity(item);
      const eventTime = item.timestamp === undefined ? undefined : Math.round(item.timestamp * 1000);
      return distinct(item.messages.map((m) => m.content)).map((memory) => ({ ...newMemoryRow(projectId, item, memory, undefined, eventTime), is_message: 1 }));
    }).flat();
    if (rows.length > 0) await this.writes.add(rows);
    // the batches written in one transaction resume together: each builds its answer in a turn of its own
    await nextTurn();
    return rows.map(memoryView);
  }

  /**
   * Memories (free-form and typed) matching a filter that names an entity, newest first. Expired
   * ones are left out unless `showExpired`; `startDate`/`endDate` (mem0's get_all options) bound
   * the event time, a date standing for its whole UTC day.
   */
  async list(projectId: string, filters: unknown, page: number, pageSize: number, options: ListOptions = {}): Promise<{ count: number; results: MemoryView[] }> {
    const { filter, pinned } = listFilter(filters);
    // SQL narrows to the pinned entity; the predicate applies the rest of the filter exactly.
    const accept = toPredicate(filter);
    const shown = shownMemories(options.showExpired);
    const valid = validIn(options.validity);
    const since = options.startDate === undefined ? -Infinity : eventTimeOf(options.startDate);
    const until = options.endDate === undefined ? Infinity : endOf(options.endDate);
    const rows = (await this.rows.list(projectId, pinned, 100_000, 0)).filter(
      (row) =>
        shown(row) &&
        valid(row) &&
        (options.within === undefined || options.within.has(row.id)) &&
        Number(row.created_at) >= since &&
        Number(row.created_at) <= until &&
        (options.embeddingStatus === undefined || row.embedding_status === options.embeddingStatus) &&
        accept(filterRow(row)),
    );
    return { count: rows.length, results: rows.slice((page - 1) * pageSize, page * pageSize).map(memoryView) };
  }

  async get(projectId: string, id: string): Promise<MemoryView> {
    return memoryView(await this.row(projectId, id));
  }

  /**
   * mem0 update: new text, metadata, event time (`timestamp`: unix seconds or ISO 8601) and/or
   * expiration date (null clears it) for a memory; any of them makes a new revision. A typed
   * record's text is derived from its values, so its text is changed through PATCH /v1/records
   * instead; the rest may change here. With `revision`, only that revision is changed (409
   * `memory_changed` otherwise). A new text supersedes the old one from `at` (event time: the
   * update's `timestamp`, default now), which stays as a version of its own (see `validity.ts`).
   * A superseded version cannot be changed (409 `memory_superseded`).
   */
  async update(projectId: string, id: string, input: MemoryUpdate, revision?: number, at?: number): Promise<MemoryView> {
    const row = await this.row(projectId, id);
    if (input.text !== undefined && row.schema_name) {
      throw badRequest('typed_record', `Memory "${id}" is a ${row.schema_name} record; change its values with PATCH /v1/records/${row.schema_name}/${id}.`);
    }
    const memory = input.text?.trim() ?? row.memory;
    if (memory === '') throw badRequest('validation_failed', 'text must not be empty.');
    if (row.superseded_by) throw conflict(`Memory "${id}" is a version that "${row.superseded_by}" superseded; change that memory instead.`, 'memory_superseded');
    if (input.metadata !== undefined) checkMetadataSize(input.metadata, `memory "${id}"`);
    const change = {
      record: row.record,
      memory,
      metadata: input.metadata === undefined ? row.metadata : JSON.stringify(input.metadata),
      created_at: input.timestamp === undefined ? row.created_at : eventTimeOf(input.timestamp),
      expiration_date: input.expiration_date === undefined ? (row.expiration_date ?? null) : input.expiration_date,
    };
    const updated = await this.writes.transaction((tx) =>
      this.writes.update(
        tx,
        row,
        revision ?? row.revision,
        change,
        () => conflict(`Memory "${id}" changed while this update was applied; read it again and retry.`, 'memory_changed'),
        at ?? (input.timestamp === undefined ? undefined : change.created_at),
      ),
    );
    return memoryView(updated);
  }

  /**
   * Ends a memory's validity at `at` (event time, default now) — what a DELETE decided by an add
   * does: the memory stays, hidden from reads of what is valid now, found with `as_of` before `at`.
   * Only at `revision` (409 `memory_changed` otherwise).
   */
  async end(projectId: string, id: string, revision: number, at: number = nowMs()): Promise<MemoryView> {
    const row = await this.row(projectId, id);
    const changed = () => conflict(`Memory "${id}" changed before its validity could be ended; read it again and retry.`, 'memory_changed');
    if (row.revision !== revision || row.valid_to != null) throw changed();
    return memoryView(await this.writes.transaction((tx) => this.writes.end(tx, row, revision, at, changed)));
  }

  /**
   * A memory's versions, the current text first: the memory itself, then the texts updates
   * superseded, the latest first, each with its validity. A version's id gives its memory's chain.
   */
  async versions(projectId: string, id: string): Promise<MemoryView[]> {
    const row = await this.row(projectId, id);
    const head = row.superseded_by ? await this.row(projectId, row.superseded_by).catch(() => row) : row;
    return [head, ...(await this.rows.versionsOf(projectId, head.id))].map(memoryView);
  }

  /** Deletes a memory with its superseded versions; with `revision`, only that revision of it (409 `memory_changed` otherwise). */
  async delete(projectId: string, id: string, revision?: number): Promise<void> {
    const row = await this.row(projectId, id);
    if (revision !== undefined && row.revision !== revision) throw conflict(`Memory "${id}" changed before it could be deleted; read it again and retry.`, 'memory_changed');
    await this.writes.transaction((tx) => this.writes.remove(tx, row));
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
      await this.writes.transaction(async (tx) => {
        for (const row of batch) await this.writes.remove(tx, row);
      });
      deleted += batch.length;
    }
    return deleted;
  }

  /**
   * mem0 feedback: sets the feedback on a memory (typed records included), or withdraws it with
   * null. The memory's content, revision and history stay as they are. 404 for a memory this
   * project does not have.
   */
  async feedback(projectId: string, id: string, feedback: MemoryFeedback | null, reason: string | null): Promise<MemoryView> {
    const row = await this.row(projectId, id);
    if ((await this.rows.setFeedback(projectId, id, feedback, reason)) === 0) {
      throw notFound(`There is no memory with id "${id}" in this project.`, 'memory_not_found');
    }
    return memoryView({ ...row, feedback, feedback_reason: reason });
  }

  /**
   * mem0 get_summary: a deterministic summary of the memories matching a filter that names an
   * entity (see `summarize`); no language model is asked.
   */
  async summary(projectId: string, filters: unknown): Promise<MemorySummary> {
    const { results } = await this.list(projectId, filters, 1, 100_000);
    return summarize(results);
  }

  /**
   * How many memories of `owner` (every row: the versions updates superseded are indexed too; no
   * entity id: the whole project) wait on indexing, are indexed (searchable) or failed it.
   */
  async indexingStatus(projectId: string, owner: EntityIds): Promise<IndexingStatus> {
    const counts = await this.rows.statusCounts(projectId, owner);
    return { total: counts.pending + counts.indexed + counts.failed, ...counts };
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
   * Stores rows whose vectors are written elsewhere (a bulk import or a benchmark's seed, rows from
   * `newMemoryRow`): the rows and their keyword index in one transaction, without history or jobs.
   */
  importRows(rows: MemoryRow[]): Promise<void> {
    return this.writes.import(rows);
  }

  /**
   * mem0 add with infer: for each fact, the entity's free-form memories it is compared with — the
   * `topK` search finds for it, and the entity's newest memories not indexed yet, which search
   * cannot see (a fact said a moment ago). Typed records are left out: their text follows their
   * values; so are expired memories, which search does not show either.
   */
  async related(projectId: string, owner: EntityIds, facts: string[], topK: number): Promise<RelatedMemory[][]> {
    const pins = Object.fromEntries(ENTITY_IDS.filter((k) => owner[k] !== undefined).map((k) => [k, owner[k]])) as MemoryListFilter;
    const filters = { AND: Object.entries(pins).map(([k, v]) => ({ [k]: v })) };
    const shown = shownMemories(false);
    const current = validIn();
    // the latest written, whatever their event time: a fact told a moment ago about years ago is one
    const unindexed = (await this.rows.unindexedNewest(projectId, pins, UNINDEXED_CANDIDATES)).filter((r) => r.schema_name === null && shown(r) && current(r));
    const hits = await Promise.all(facts.map((query) => this.memorySearch.search(projectId, { query, filters, top_k: topK, mode: 'dense' })));
    const found = new Map((await this.rows.getMany(projectId, [...new Set(hits.flat().map((h) => h.id))])).map((r) => [r.id, r]));
    return hits.map((matches) => {
      const rows = [...matches.flatMap((m) => found.get(m.id) ?? []), ...unindexed].filter((r) => r.schema_name === null);
      return [...new Map(rows.map((r) => [r.id, { ...memoryView(r), revision: r.revision }])).values()];
    });
  }
}

/** The last epoch ms an end bound takes in: a date's last millisecond (UTC), a date-time itself. */
function endOf(bound: string): number {
  return /^\d{4}-\d\d-\d\d$/.test(bound) ? eventTimeOf(bound) + 86_400_000 - 1 : eventTimeOf(bound);
}

/** Texts trimmed, empty ones dropped, and each kept once (ignoring case; the last spelling wins). */
function distinct(texts: string[]): string[] {
  return [...new Map(texts.map((t) => t.trim()).filter(Boolean).map((t) => [t.toLowerCase(), t])).values()];
}

/**
 * A memory list's filter and the entity ids it pins; 400 `entity_required` unless it pins at
 * least one (a list never reads the whole project).
 */
export function listFilter(filters: unknown): { filter: FilterNode; pinned: MemoryListFilter } {
  const filter = parseFilter(filters, MEMORY_FILTER_SCOPE, '/filters');
  const pinned = filter ? entityPins(filter) : {};
  if (!filter || Object.keys(pinned).length === 0) {
    throw badRequest('entity_required', `filters must hold at least one of ${ENTITY_IDS.join(', ')} (e.g. {"user_id": "alice"}).`);
  }
  return { filter, pinned };
}

/** The entity ids a filter pins with `eq` (directly or in ANDs): what SQL can narrow by. */
export function entityPins(node: FilterNode): MemoryListFilter {
  const pins: MemoryListFilter = {};
  for (const n of node.kind === 'and' ? node.nodes : [node]) {
    if (n.kind === 'and') Object.assign(pins, entityPins(n));
    else if (n.kind === 'cmp' && n.op === 'eq' && n.target.kind === 'column' && (ENTITY_IDS as readonly string[]).includes(n.target.name)) {
      pins[n.target.name as keyof MemoryListFilter] = String(n.value);
    }
  }
  return pins;
}

function memoryView(row: MemoryRow): MemoryView {
  return {
    ...memoryFields(row),
    embedding_status: row.embedding_status,
    embedding_error: row.embedding_error,
    feedback: row.feedback ?? null,
    feedback_reason: row.feedback_reason ?? null,
    structured_data: row.structured_data ? (JSON.parse(row.structured_data) as Record<string, unknown>) : null,
  };
}
