import { envelope } from '../../contracts/jobs/catalogue.js';
import { endsJob } from '../../contracts/jobs/handlers.js';
import { parseFilter, type FilterNode } from '../../contracts/filter/filter.js';
import type { ExportEntities, MemoryExportRow, MemoryExportStatus, MemoryExportsRepository } from '../../db/repositories/memory-exports.repository.js';
import type { TransactionalOutbox } from '../../db/transactional-outbox.js';
import { AppError, badRequest, notFound } from '../../lib/errors.js';
import { iso, newId, nowMs } from '../../lib/time.js';
import type { Extractors } from '../../providers/registry.js';
import { everyField, readExportSchema, type UnsupportedField } from './export-schema.js';
import { entityPins, listFilter, type Memories } from './memories.js';
import { ENTITY_IDS, MEMORY_FILTER_SCOPE, type EntityIds } from './rows.js';
import { statements } from './summary.js';

/** The key of a get's answer that holds the export's own fields; no schema may name a field so. */
export const EXPORT_KEY = 'memory_export';

/** Most statements an export hands the model, newest first. */
export const EXPORT_MAX_STATEMENTS = 200;
/** Longest text an export hands the model. */
export const EXPORT_MAX_CHARS = 20_000;

/** mem0's create_memory_export: the schema to fill, and whose memories (filters and/or top-level entity ids). */
export interface CreateExportInput extends EntityIds {
  schema: unknown;
  filters?: Record<string, unknown>;
}

/** mem0's get_memory_export: an export's id, or the entity ids of the latest export to show. */
export interface GetExportInput extends EntityIds {
  memory_export_id?: string;
  filters?: Record<string, unknown>;
}

/** An export as a get shows it besides the exported fields. */
export interface ExportStatusView {
  id: string;
  /** pending until the job starts; running while it runs (and while it is retried); then completed or failed. */
  status: MemoryExportStatus;
  /** How many memories it read; null until completed. */
  memory_count: number | null;
  /** Fields of the schema extraction cannot fill, exported as null. */
  unsupported_fields: UnsupportedField[];
  /** Why it failed, or the last error while it is retried. */
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** What a get answers: the exported fields once completed (every top-level field of the schema, null when not found), and the export. */
export type ExportView = Record<string, unknown> & { [EXPORT_KEY]: ExportStatusView };

/**
 * mem0's memory exports: a JSON Schema (a Pydantic model's) filled from an entity's memories by
 * the project's extraction model (`MEMORY_MODEL`). Creating one stores the export with its
 * `memory.export` job in one transaction, so an acknowledged export runs even if the process
 * dies; the job reads the memories, hands their statements to the model, and records the filled
 * object, or why it failed.
 */
export class MemoryExports {
  constructor(
    private readonly repository: MemoryExportsRepository,
    private readonly outbox: TransactionalOutbox,
    private readonly memories: Memories,
    private readonly extractors: Extractors,
    private readonly model: string,
  ) {}

  /** Checks the schema and filters, and stores the export with its job; returns its id. */
  async create(projectId: string, input: CreateExportInput): Promise<string> {
    const schema = readExportSchema(input.schema);
    if (schema.fields.includes(EXPORT_KEY)) {
      throw badRequest('invalid_schema', `The schema names a field "${EXPORT_KEY}", which an export's answer uses for the export itself; rename that field.`);
    }
    const filters = joinEntities(input.filters, input);
    const { pinned } = listFilter(filters);
    const now = nowMs();
    const row: MemoryExportRow = {
      id: newId(),
      project_id: projectId,
      schema: typeof input.schema === 'string' ? input.schema : JSON.stringify(input.schema),
      filters: JSON.stringify(filters),
      user_id: pinned.user_id ?? null,
      agent_id: pinned.agent_id ?? null,
      run_id: pinned.run_id ?? null,
      app_id: pinned.app_id ?? null,
      status: 'pending',
      result: null,
      error: null,
      memory_count: null,
      created_at: now,
      updated_at: now,
    };
    await this.outbox.write(async (tx) => {
      await this.repository.insert(tx.trx, row);
      await tx.add(projectId, envelope('memory.export', { projectId, exportId: row.id }));
    });
    return row.id;
  }

  /**
   * The export with `memory_export_id` (whose entity ids, if also given, must be its own), or
   * the project's latest export for the entity ids named at the top level or in `filters`.
   * 404 `export_not_found` when there is none.
   */
  async get(projectId: string, input: GetExportInput): Promise<ExportView> {
    const entities = lookupEntities(input);
    let row: MemoryExportRow | undefined;
    if (input.memory_export_id !== undefined) {
      row = await this.repository.get(projectId, input.memory_export_id);
      if (row && Object.entries(entities).some(([k, v]) => row?.[k as keyof ExportEntities] !== v)) row = undefined;
      if (!row) throw notFound(`There is no memory export "${input.memory_export_id}" in this project${Object.keys(entities).length > 0 ? ' for those entities' : ''}.`, 'export_not_found');
    } else {
      if (Object.keys(entities).length === 0) {
        throw badRequest('entity_required', `Name the export: memory_export_id, or one of ${ENTITY_IDS.join(', ')} (at the top level or in filters) for the latest export of that entity.`);
      }
      row = await this.repository.latest(projectId, entities);
      if (!row) throw notFound(`There is no memory export in this project for ${JSON.stringify(entities)}.`, 'export_not_found');
    }
    return view(row);
  }

  /**
   * The `memory.export` job. An export already settled is skipped. A failure the input causes
   * (it can never succeed) marks the export failed with the reason; any other (the model or the
   * database is down) is recorded and thrown, so the queue retries it with backoff.
   */
  async run(projectId: string, exportId: string): Promise<void> {
    const row = await this.repository.get(projectId, exportId);
    if (!row || row.status === 'completed' || row.status === 'failed') return;
    await this.repository.record(row.id, { status: 'running', updated_at: nowMs() });
    try {
      const schema = readExportSchema(row.schema);
      const { results } = await this.memories.list(projectId, JSON.parse(row.filters), 1, Number.MAX_SAFE_INTEGER);
      const { sentences, kept } = statements(results);
      const text = bounded(sentences);
      const found = text === '' ? {} : await this.extractors.get(this.model).extract(schema.extraction, { text });
      const result = everyField(schema.extraction, schema.fields, found);
      await this.repository.record(row.id, { status: 'completed', result: JSON.stringify(result), error: null, memory_count: kept, updated_at: nowMs() });
    } catch (err) {
      const reason = err instanceof AppError ? err.detail : err instanceof Error ? err.message : String(err);
      if (endsJob(err)) {
        await this.repository.record(row.id, { status: 'failed', error: reason, updated_at: nowMs() });
        return;
      }
      await this.repository.record(row.id, { error: reason, updated_at: nowMs() });
      throw err;
    }
  }
}

/**
 * The filter an export reads: `filters` with the entity ids given at the top level (as mem0's add
 * takes them) joined in; a top-level id may repeat one in `filters` but not contradict it.
 */
function joinEntities(filters: Record<string, unknown> | undefined, top: EntityIds): Record<string, unknown> {
  const given = ENTITY_IDS.filter((k) => top[k] !== undefined);
  if (given.length === 0) return filters ?? {};
  const node = filters === undefined ? null : parseFilter(filters, MEMORY_FILTER_SCOPE, '/filters');
  const pinned = node ? entityPins(node) : {};
  for (const key of given) {
    if (pinned[key] !== undefined && pinned[key] !== top[key]) {
      throw badRequest('validation_failed', `${key} is "${top[key]}" but filters.${key} is "${pinned[key]}"; name the owner once, or the same in both.`);
    }
  }
  const eqs = given.map((k) => ({ [k]: top[k] }));
  return { AND: filters === undefined ? eqs : [filters, ...eqs] };
}

/** The entity ids a get names, at the top level or in `filters`, which may name entity ids only. */
function lookupEntities(input: GetExportInput): ExportEntities {
  const node = input.filters === undefined ? null : parseFilter(input.filters, MEMORY_FILTER_SCOPE, '/filters');
  if (node && !entitiesOnly(node)) {
    throw badRequest('invalid_filter', `A get's filters name the export by its entity ids only (${ENTITY_IDS.join(', ')}, equal to a value); the memories an export reads are chosen when it is created.`);
  }
  const pinned = node ? entityPins(node) : {};
  const entities: ExportEntities = {};
  for (const key of ENTITY_IDS) {
    const top = input[key];
    if (top !== undefined && pinned[key] !== undefined && pinned[key] !== top) {
      throw badRequest('validation_failed', `${key} is "${top}" but filters.${key} is "${pinned[key]}"; name the entity once, or the same in both.`);
    }
    const value = top ?? pinned[key];
    if (value !== undefined) entities[key] = value;
  }
  return entities;
}

function entitiesOnly(node: FilterNode): boolean {
  if (node.kind === 'and') return node.nodes.every(entitiesOnly);
  return node.kind === 'cmp' && node.op === 'eq' && node.target.kind === 'column' && (ENTITY_IDS as readonly string[]).includes(node.target.name);
}

/** The statements, newest first, one a line: at most `EXPORT_MAX_STATEMENTS` and `EXPORT_MAX_CHARS`. */
function bounded(sentences: string[]): string {
  let text = '';
  for (const sentence of sentences.slice(0, EXPORT_MAX_STATEMENTS)) {
    const next = text === '' ? sentence : `${text}\n${sentence}`;
    if (next.length > EXPORT_MAX_CHARS) break;
    text = next;
  }
  return text;
}

function view(row: MemoryExportRow): ExportView {
  const export_: ExportStatusView = {
    id: row.id,
    status: row.status,
    memory_count: row.memory_count,
    unsupported_fields: unsupportedFields(row.schema),
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
  const result = row.status === 'completed' && row.result !== null ? (JSON.parse(row.result) as Record<string, unknown>) : {};
  return { ...result, [EXPORT_KEY]: export_ };
}

/** The fields a stored export's schema leaves null; none for a schema stored before a bound refused it (its export failed). */
function unsupportedFields(schema: string): UnsupportedField[] {
  try {
    return readExportSchema(schema).unsupported;
  } catch {
    return [];
  }
}
