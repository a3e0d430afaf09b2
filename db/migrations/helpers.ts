import type { Knex } from 'knex';

/**
 * Guarded DDL. MySQL commits each DDL statement on its own, so a migration that failed half-way
 * has left some of its changes behind; every helper here checks before it acts, which makes each
 * migration safe to run again.
 */

/** Creates a table (columns and primary key only) unless it exists. Add indexes with `ensureIndex`. */
export async function createTableIfMissing(
  knex: Knex,
  table: string,
  build: (t: Knex.CreateTableBuilder) => void,
): Promise<void> {
  if (await knex.schema.hasTable(table)) return;
  await knex.schema.createTable(table, (t) => {
    build(t);
    if (knex.client.config.client === 'mysql2') {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
  });
}

/** Adds a column unless it exists. */
export async function addColumnIfMissing(
  knex: Knex,
  table: string,
  column: string,
  build: (t: Knex.AlterTableBuilder) => void,
): Promise<void> {
  if (await knex.schema.hasColumn(table, column)) return;
  await knex.schema.alterTable(table, build);
}

/** Creates a (unique) index unless one of that name exists on the table; `predicate` makes it partial (SQLite). */
export async function ensureIndex(
  knex: Knex,
  table: string,
  name: string,
  columns: string[],
  options: { unique?: boolean; predicate?: Knex.QueryBuilder } = {},
): Promise<void> {
  if (await hasIndex(knex, table, name)) return;
  await knex.schema.alterTable(table, (t) => {
    if (options.unique) t.unique(columns, { indexName: name });
    else if (options.predicate) t.index(columns, name, { predicate: options.predicate });
    else t.index(columns, name);
  });
}

/** Drops an index if one of that name exists on the table. */
export async function dropIndexIfExists(knex: Knex, table: string, name: string): Promise<void> {
  if (!(await hasIndex(knex, table, name))) return;
  await knex.schema.alterTable(table, (t) => t.dropIndex([], name));
}

/** Drops a table if it exists (for `down`). */
export async function dropTableIfExists(knex: Knex, table: string): Promise<void> {
  await knex.schema.dropTableIfExists(table);
}

async function hasIndex(knex: Knex, table: string, name: string): Promise<boolean> {
  if (knex.client.config.client === 'mysql2') {
    const rows = (await knex('information_schema.statistics')
      .whereRaw('table_schema = DATABASE()')
      .andWhere({ table_name: table, index_name: name })
      .select(knex.raw('1 as found'))
      .limit(1)) as unknown[];
    return rows.length > 0;
  }
  const rows = (await knex('sqlite_master').where({ type: 'index', name }).select('name')) as unknown[];
  return rows.length > 0;
}
