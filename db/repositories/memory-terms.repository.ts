import type { Knex } from 'knex';

/** The entity columns a keyword search can be pinned to. */
export type EntityColumn = 'user_id' | 'agent_id' | 'run_id' | 'app_id';

/** The entity values a search is pinned to: each named column must hold one of its values. */
export type EntityPins = Partial<Record<EntityColumn, string[]>>;

/** One term of one memory: how often it occurs there, and the memory's length in terms. */
export interface Posting {
  memory_id: string;
  term: string;
  tf: number;
  doc_len: number;
}

/** What the keyword index stores of a memory. */
export interface TermsOf {
  id: string;
  project_id: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
  counts: Map<string, number>;
  length: number;
}

/** A row of `memory_terms`. */
interface PostingRow extends Posting {
  project_id: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  app_id: string | null;
}

/** Rows written per insert statement. */
const INSERT_BATCH = 500;

/** The keyword index of memories (`memory_terms`), written in the callers' transactions. */
export class MemoryTermsRepository {
  constructor(private readonly db: Knex) {}

  /**
   * Writes the postings of these memories, replacing those they had unless `fresh` says they are
   * new. New memories must not delete first: on InnoDB a delete that finds nothing locks the gap
   * where their ids go (UUIDv7 ids of one moment share it), and two transactions adding memories at
   * once would each wait on the other's gap lock to insert — a deadlock.
   */
  async write(trx: Knex | Knex.Transaction, memories: TermsOf[], fresh = false): Promise<void> {
    if (memories.length === 0) return;
    if (!fresh) await this.remove(trx, memories.map((m) => m.id));
    // built 500 rows at a time rather than all at once: a batch of long texts has hundreds of
    // thousands of postings, whose objects cost a long collection on the event loop
    // (on SQLite, whose statements run on the event loop, each waits for a turn once the work
    // running has had its slice: see `createDatabase`)
    let rows: PostingRow[] = [];
    const flush = async (): Promise<void> => {
      await trx('memory_terms').insert(rows);
      rows = [];
    };
    for (const m of memories) {
      for (const [term, tf] of m.counts) {
        rows.push({ memory_id: m.id, term, project_id: m.project_id, user_id: m.user_id, agent_id: m.agent_id, run_id: m.run_id, app_id: m.app_id, tf, doc_len: m.length });
        if (rows.length === INSERT_BATCH) await flush();
      }
    }
    if (rows.length > 0) await flush();
  }

  async remove(trx: Knex | Knex.Transaction, ids: string[]): Promise<void> {
    if (ids.length > 0) await trx('memory_terms').whereIn('memory_id', ids).delete();
  }

  /** In how many of the pinned memories each of `terms` occurs (terms in none are left out). */
  async frequencies(projectId: string, pins: EntityPins, terms: string[]): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const rows = (await this.pinned('memory_terms', projectId, pins)
      .whereIn('term', terms)
      .groupBy('term')
      .select('term', this.db.raw('count(*) as df'))) as Array<{ term: string; df: number | string }>;
    return new Map(rows.map((r) => [r.term, Number(r.df)]));
  }

  /** The postings of `terms` among the project's memories pinned by `pins`. */
  async postings(projectId: string, pins: EntityPins, terms: string[]): Promise<Posting[]> {
    if (terms.length === 0) return [];
    return (await this.pinned('memory_terms', projectId, pins).whereIn('term', terms).select('memory_id', 'term', 'tf', 'doc_len')) as Posting[];
  }

  /** How many memories the pins select, and their mean length in terms (BM25's collection statistics). */
  async scope(projectId: string, pins: EntityPins): Promise<{ documents: number; meanLength: number }> {
    const row = (await this.pinned('memories', projectId, pins).first(this.db.raw('count(*) as documents'), this.db.raw('avg(term_count) as mean'))) as { documents: number | string; mean: number | string | null };
    return { documents: Number(row.documents), meanLength: Number(row.mean ?? 0) };
  }

  /** The project's rows of `table` whose entity columns hold one of the pinned values. */
  private pinned(table: 'memory_terms' | 'memories', projectId: string, pins: EntityPins): Knex.QueryBuilder {
    const query = this.db(table).where({ project_id: projectId });
    for (const [column, values] of Object.entries(pins)) query.whereIn(column, values);
    return query;
  }
}
