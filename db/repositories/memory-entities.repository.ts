import type { Knex } from 'knex';
import type { EntityColumn, MemoryRow } from './memories.repository.js';

/** One named entity a memory mentions. */
export interface EntityMention {
  kind: string;
  key: string;
  name: string;
}

/** An entity an owner's memories mention: how often, and the first and last event times. */
export interface EntityTally {
  kind: string;
  key: string;
  name: string;
  count: number;
  first_seen: number;
  last_seen: number;
}

/** The owner an entity listing is narrowed to: entity ids, each pinned to one value. */
export type EntityOwner = Partial<Record<EntityColumn, string>>;

/** The entity index (`memory_entities`), every query scoped by project. */
export class MemoryEntitiesRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Replaces the mentions of each memory with those given, in the caller's transaction. Rows are
   * deleted and inserted by their exact keys, read first without locking: deleting by memory id
   * alone would lock the index gap where every new memory's rows go (ids are time-ordered), and
   * concurrent indexing jobs would deadlock on it (MariaDB, repeatable read).
   */
  async replace(trx: Knex.Transaction, items: Array<{ row: MemoryRow; mentions: EntityMention[] }>): Promise<void> {
    if (items.length === 0) return;
    const wanted = items.flatMap(({ row, mentions }) =>
      mentions.map((m) => ({
        memory_id: row.id,
        kind: m.kind,
        entity_key: m.key,
        name: m.name,
        project_id: row.project_id,
        user_id: row.user_id,
        agent_id: row.agent_id,
        run_id: row.run_id,
        app_id: row.app_id,
        seen_at: Number(row.created_at),
      })),
    );
    const key = (r: { memory_id: string; kind: string; entity_key: string }): string => `${r.memory_id}\u0000${r.kind}\u0000${r.entity_key}`;
    const keep = new Set(wanted.map(key));
    const held = await this.keysOf(trx, items.map((i) => i.row.id));
    await this.deleteKeys(
      trx,
      held.filter((r) => !keep.has(key(r))),
    );
    const have = new Set(held.map(key));
    const fresh = wanted.filter((r) => !have.has(key(r)));
    for (let i = 0; i < fresh.length; i += 500) await trx('memory_entities').insert(fresh.slice(i, i + 500)).onConflict(['memory_id', 'kind', 'entity_key']).ignore();
  }

  /** Forgets the mentions of memories (deleted, or changed and waiting to be indexed again), by their exact keys (see `replace`). */
  async remove(trx: Knex | Knex.Transaction, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.deleteKeys(trx, await this.keysOf(trx, ids));
  }

  /** The keys of the rows of these memories: a plain read, which takes no lock. */
  private async keysOf(trx: Knex | Knex.Transaction, ids: string[]): Promise<Array<{ memory_id: string; kind: string; entity_key: string }>> {
    const keys: Array<{ memory_id: string; kind: string; entity_key: string }> = [];
    for (let i = 0; i < ids.length; i += 500) keys.push(...((await trx('memory_entities').whereIn('memory_id', ids.slice(i, i + 500)).select('memory_id', 'kind', 'entity_key')) as typeof keys));
    return keys;
  }

  private async deleteKeys(trx: Knex | Knex.Transaction, keys: Array<{ memory_id: string; kind: string; entity_key: string }>): Promise<void> {
    for (let i = 0; i < keys.length; i += 200) {
      const slice = keys.slice(i, i + 200);
      await trx('memory_entities')
        .where((q) => {
          for (const k of slice) q.orWhere({ memory_id: k.memory_id, kind: k.kind, entity_key: k.entity_key });
        })
        .delete();
    }
  }

  /**
   * The entities the owner's memories valid now mention, the most mentioned first, at most `limit`;
   * of one `kind` when given.
   */
  async tally(projectId: string, owner: EntityOwner, limit: number, kind?: string): Promise<EntityTally[]> {
    const query = this.db('memory_entities as e')
      .join('memories as m', 'm.id', 'e.memory_id')
      .where('e.project_id', projectId)
      .whereNull('m.valid_to');
    for (const [column, value] of Object.entries(owner)) query.where(`e.${column}`, value);
    if (kind !== undefined) query.where('e.kind', kind);
    const rows = (await query
      .groupBy('e.kind', 'e.entity_key')
      .select('e.kind', 'e.entity_key', this.db.raw('max(e.name) as name'), this.db.raw('count(*) as n'), this.db.raw('min(e.seen_at) as first_seen'), this.db.raw('max(e.seen_at) as last_seen'))
      .orderBy([
        { column: 'n', order: 'desc' },
        { column: 'e.entity_key', order: 'asc' },
      ])
      .limit(limit)) as Array<{ kind: string; entity_key: string; name: string; n: number | string; first_seen: number | string; last_seen: number | string }>;
    return rows.map((r) => ({ kind: r.kind, key: r.entity_key, name: r.name, count: Number(r.n), first_seen: Number(r.first_seen), last_seen: Number(r.last_seen) }));
  }

  /** Ids of the owner's memories (every version) that mention the entity `key`, at most `limit`. */
  async mentioning(projectId: string, owner: EntityOwner, key: string, limit: number): Promise<string[]> {
    const query = this.db('memory_entities').where({ project_id: projectId, entity_key: key });
    for (const [column, value] of Object.entries(owner)) query.where(column, value);
    return ((await query.distinct('memory_id').limit(limit)) as Array<{ memory_id: string }>).map((r) => r.memory_id);
  }
}
