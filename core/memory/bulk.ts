import type { EntityColumn, MemoriesRepository, MemoryRow } from '../../db/repositories/memories.repository.js';
import { checkMetadataSize } from '../../contracts/vector-store.js';
import { badRequest, checkBatch, conflict, notFound } from '../../lib/errors.js';
import type { Memories } from './memories.js';
import type { MemoryWrites } from './writes.js';

/** mem0's entity types and the memory column each names. */
export const ENTITY_TYPES = { user: 'user_id', agent: 'agent_id', app: 'app_id', run: 'run_id' } as const satisfies Record<string, EntityColumn>;
export type EntityType = keyof typeof ENTITY_TYPES;

/** An entity (a user, agent, app or run) as mem0's `GET /v1/entities/` shows it. */
export interface EntityView {
  /** `type:name`: an entity is known by its type and name alone. */
  id: string;
  name: string;
  type: EntityType;
  /** Its memories valid now (not the versions updates superseded). */
  total_memories: number;
  /** Its memory rows waiting on indexing, versions included (as `GET /v3/memories/status/` counts them). */
  pending_memories: number;
  /** Its memory rows that failed indexing, versions included. */
  failed_memories: number;
  /** The project the entity's memories belong to. */
  owner: string;
  metadata: null;
  /** When its earliest memory happened. */
  created_at: number;
  /** Its memories' last write. */
  updated_at: number;
}

/** One item of mem0's batch update: a memory's new text and/or metadata. */
export interface MemoryChange {
  memory_id: string;
  text?: string;
  metadata?: Record<string, unknown>;
}

/**
 * mem0's operations over many memories at once: the entities memories belong to (list, delete
 * one with its memories) and batch update and delete by id. A batch is validated whole — any
 * bad item is a 400 naming it by index and nothing changes — then written in one transaction,
 * each memory as its single update or delete writes it (history, outbox job for its vector).
 */
export class BulkMemories {
  constructor(
    private readonly rows: MemoriesRepository,
    private readonly writes: MemoryWrites,
    private readonly memories: Memories,
  ) {}

  /** Every user, agent, app and run with memories in the project, the latest written first. */
  async entities(projectId: string): Promise<EntityView[]> {
    const types = Object.entries(ENTITY_TYPES) as Array<[EntityType, EntityColumn]>;
    const counted = await Promise.all(types.map(async ([type, column]) => (await this.rows.entityCounts(projectId, column)).map((e) => ({ type, ...e }))));
    return counted
      .flat()
      .sort((a, b) => b.last_at - a.last_at || a.type.localeCompare(b.type) || a.name.localeCompare(b.name))
      .map((e) => ({ id: `${e.type}:${e.name}`, name: e.name, type: e.type, total_memories: e.total, pending_memories: e.pending, failed_memories: e.failed, owner: projectId, metadata: null, created_at: e.first_at, updated_at: e.last_at }));
  }

  /** Deletes an entity's memories (as mem0's delete-all does, in batches) and returns how many; 404 for an unknown type or an entity without memories. */
  async deleteEntity(projectId: string, type: string, name: string): Promise<number> {
    if (!Object.hasOwn(ENTITY_TYPES, type)) {
      throw notFound(`There is no entity type "${type}": it is one of ${Object.keys(ENTITY_TYPES).join(', ')}.`, 'entity_type_not_found');
    }
    const deleted = await this.memories.deleteAll(projectId, { [ENTITY_TYPES[type as EntityType]]: name });
    if (deleted === 0) throw notFound(`There is no ${type} "${name}" with memories in this project.`, 'entity_not_found');
    return deleted;
  }

  /** mem0's batch update: each memory's new text and/or metadata, all in one transaction or none. Returns how many. */
  async updateMany(projectId: string, changes: MemoryChange[]): Promise<number> {
    const rows = await this.found(projectId, changes);
    const planned = checkBatch(changes, '/memories', 'memories', (change, path) => {
      const row = rows(change.memory_id, path);
      if (change.text !== undefined && row.schema_name) {
        throw badRequest('typed_record', `Memory "${row.id}" is a ${row.schema_name} record; change its values with PATCH /v1/records/${row.schema_name}/${row.id}.`, [
          { path: `${path}/text`, message: `is a ${row.schema_name} record, whose text follows its values` },
        ]);
      }
      if (row.superseded_by) {
        throw badRequest('memory_superseded', `Memory "${row.id}" is a version that "${row.superseded_by}" superseded; change that memory instead.`, [
          { path: `${path}/memory_id`, message: `is a superseded version of ${row.superseded_by}` },
        ]);
      }
      const memory = change.text?.trim() ?? row.memory;
      if (memory === '') throw badRequest('validation_failed', 'text must not be empty.', [{ path: `${path}/text`, message: 'must not be empty' }]);
      if (change.metadata !== undefined) checkMetadataSize(change.metadata, `memory "${row.id}"`);
      return { row, memory, metadata: change.metadata === undefined ? row.metadata : JSON.stringify(change.metadata) };
    });
    await this.writes.transaction(async (tx) => {
      for (const { row, memory, metadata } of planned) {
        await this.writes.update(tx, row, row.revision, { record: row.record, memory, metadata }, () =>
          conflict(`Memory "${row.id}" changed while the batch was applied; nothing was changed. Read it again and retry.`, 'memory_changed'),
        );
      }
    });
    return planned.length;
  }

  /** mem0's batch delete: the memories (and their vectors), all in one transaction or none. Returns how many. */
  async deleteMany(projectId: string, ids: string[]): Promise<number> {
    const rows = await this.found(projectId, ids.map((memory_id) => ({ memory_id })));
    const planned = checkBatch(ids, '/memories', 'memories', (id, path) => rows(id, path));
    await this.writes.transaction(async (tx) => {
      for (const row of planned) {
        if (!(await this.writes.remove(tx, row))) {
          throw conflict(`Memory "${row.id}" was deleted while the batch was applied; nothing was changed. Retry without it.`, 'memory_changed');
        }
      }
    });
    return planned.length;
  }

  /**
   * The project's rows the items name, read at once, and a lookup that refuses (400, at the
   * item's `memory_id`) an id the project has no memory for or one named twice in the batch.
   */
  private async found(projectId: string, items: Array<{ memory_id: string }>): Promise<(id: string, path: string) => MemoryRow> {
    const byId = new Map((await this.rows.getMany(projectId, [...new Set(items.map((item) => item.memory_id))])).map((row) => [row.id, row]));
    const first = new Map<string, string>();
    return (id, path) => {
      const row = byId.get(id);
      if (!row) throw badRequest('memory_not_found', `There is no memory with id "${id}" in this project.`, [{ path: `${path}/memory_id`, message: `no memory "${id}" in this project` }]);
      const earlier = first.get(id);
      if (earlier !== undefined) throw badRequest('duplicate_memory', `Memory "${id}" is named twice in the batch.`, [{ path: `${path}/memory_id`, message: `names the memory ${earlier} names too` }]);
      first.set(id, path);
      return row;
    };
  }
}
