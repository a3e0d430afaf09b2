import type { EntityOwner, EntityTally, MemoryEntitiesRepository } from '../../db/repositories/memory-entities.repository.js';
import type { OutboxTransaction } from '../../db/transactional-outbox.js';
import { badRequest } from '../../lib/errors.js';
import { entityKey, type EntityKind } from './entities.js';
import type { MemoryWriteEvent, MemoryWriteSubscriber } from './events.js';
import { listFilter } from './memories.js';

/** The most entities one listing returns. */
export const MAX_ENTITY_LIST = 1_000;

/** The most memories an entity filter narrows to: past it, a filter by that entity is refused. */
export const MAX_ENTITY_MEMORIES = 50_000;

/** An entity as a listing shows it. */
export type EntityView = EntityTally;

/**
 * The entity index: who and what an owner's memories mention. Entities are read from a memory's
 * text (`entitiesOf`, no language model) when the memory is indexed, and written in the transaction
 * that marks it indexed (`MemoryIndexer`). Through the memory-write event seam, a memory whose text
 * changes or that is deleted leaves the index in the transaction that writes it; its new text's
 * entities come with its next indexing.
 */
export class MemoryEntityIndex implements MemoryWriteSubscriber {
  constructor(private readonly entities: MemoryEntitiesRepository) {}

  async onMemoryWrite(tx: OutboxTransaction, event: MemoryWriteEvent): Promise<void> {
    if (event.kind === 'updated' && event.row.memory !== event.previous.memory) await this.entities.remove(tx.trx, [event.row.id]);
    else if (event.kind === 'deleted') await this.entities.remove(tx.trx, event.rows.map((row) => row.id));
    else if (event.kind === 'forgotten') await this.entities.remove(tx.trx, [event.version.id]);
  }

  /**
   * The entities the memories (valid now) of the owner `filters` names mention, the most mentioned
   * first: each with its kind, how many memories mention it, and the first and last event times.
   */
  async list(projectId: string, filters: unknown, options: { kind?: EntityKind; limit?: number } = {}): Promise<EntityView[]> {
    return this.entities.tally(projectId, ownerOf(filters), Math.min(options.limit ?? 100, MAX_ENTITY_LIST), options.kind);
  }

  /**
   * Ids of the memories (every version) of the owner `filters` pins that mention `entity` (a name,
   * matched as its key: case, spaces, a leading "the" and a possessive ignored). 400
   * `entity_too_common` when more than `MAX_ENTITY_MEMORIES` do.
   */
  async mentioning(projectId: string, filters: unknown, entity: string): Promise<Set<string>> {
    const ids = await this.entities.mentioning(projectId, ownerOf(filters), entityKey(entity), MAX_ENTITY_MEMORIES + 1);
    if (ids.length > MAX_ENTITY_MEMORIES) {
      throw badRequest('entity_too_common', `More than ${MAX_ENTITY_MEMORIES} memories mention "${entity}"; narrow the filters, or search without entity.`);
    }
    return new Set(ids);
  }
}

/** The owner a filter pins (400 `entity_required` unless it pins one), as the index narrows by it. */
function ownerOf(filters: unknown): EntityOwner {
  return listFilter(filters).pinned as EntityOwner;
}
