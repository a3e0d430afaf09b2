import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import knexModule, { type Knex } from 'knex';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { sleep } from '../lib/time.js';
import { sliced } from '../lib/turns.js';

export type { Knex };

const knexFactory = (knexModule as unknown as { knex: typeof knexModule }).knex ?? knexModule;

const require = createRequire(import.meta.url);
const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3/index.js') as new (config: Knex.Config) => { _query(connection: unknown, obj: unknown): Promise<unknown> };

/**
 * knex's better-sqlite3 client, its statements sliced. better-sqlite3 runs each statement on the
 * event loop, and a transaction's statements follow each other without letting it turn: a batch
 * import's transaction, or several requests' statements one after another, held it for 50–90 ms
 * (bench:import, chat-line batches). Each statement waits for the next turn once the work running
 * has had its slice (`sliced`). A class, not a patched instance: a transaction's client is made
 * from the class's prototype.
 */
class SlicedSqlite extends BetterSqlite3Client {
  override async _query(connection: { inTransaction: boolean }, obj: { sql?: string }): Promise<unknown> {
    await sliced();
    // A transaction takes the write lock when it begins, so that the wait for it (below) is the
    // only wait: a deferred BEGIN's first write could find the lock taken mid-way, and SQLite says
    // to roll back then rather than try again.
    if (obj.sql === 'BEGIN;') obj.sql = 'BEGIN IMMEDIATE;';
    let deadline: number | undefined;
    for (;;) {
      try {
        return await super._query(connection, obj);
      } catch (err) {
        deadline ??= performance.now() + BUSY_WAIT_MS;
        if (!isBusy(err) || connection.inTransaction || performance.now() > deadline) throw err;
        await sleep(BUSY_RETRY_MS);
      }
    }
  }
}

/**
 * How long a statement waits for a lock another connection holds (the checkpoint thread's
 * restarting checkpoint, a CLI command writing while the server runs), and how often it asks
 * again meanwhile. SQLite's own wait (busy_timeout) sleeps on the calling thread, which here is
 * the event loop: an strace of bench:import's chat-line single adds caught it sleeping there while
 * the checkpoint thread restarted the log. This wait is a timer, the loop free meanwhile.
 */
const BUSY_WAIT_MS = 5_000;
const BUSY_RETRY_MS = 2;

/** SQLITE_BUSY and its extended codes: a lock another connection holds. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The relational store: a SQLite file on the embedded profile, MySQL/MariaDB in production. */
export function createDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>, logger?: Logger): Knex {
  // knex logs pool and driver trouble to the console unless told otherwise.
  const log = logger
    ? {
        warn: (m: unknown) => logger.warn({ knex: m }, 'database warning'),
        error: (m: unknown) => logger.error({ knex: m }, 'database error'),
        deprecate: (m: unknown) => logger.debug({ knex: m }, 'database deprecation'),
        debug: (m: unknown) => logger.debug({ knex: m }, 'database debug'),
      }
    : undefined;
  if (config.databaseUrl !== null) {
    const url = new URL(config.databaseUrl);
    return knexFactory({
      log,
      client: 'mysql2',
      connection: {
        host: url.hostname,
        port: url.port === '' ? 3306 : Number(url.port),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        database: url.pathname.replace(/^\//, ''),
        charset: 'utf8mb4',
        // Timestamps are stored as epoch milliseconds; BIGINT fits a JS number for that range.
        supportBigNumbers: true,
        bigNumberStrings: false,
        connectTimeout: 5_000,
      },
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 10_000,
    });
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const filename = sqliteFile(config.dataDir);
  const db = knexFactory({
    log,
    client: SlicedSqlite as unknown as typeof knexModule.Client,
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
        // WAL lets readers proceed during a write
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = NORMAL');
        // the log is checkpointed by a thread of its own (`startCheckpoints`, started by the runtime), not
        // inside a COMMIT on the event loop; a short-lived tool's log is checkpointed when it closes
        conn.pragma('wal_autocheckpoint = 0');
        // and the log is never truncated by a COMMIT: with a size limit, the first write after the
        // log restarts cuts the file back to it, and on ext4 that ftruncate slept 209 ms on the
        // event loop once an import had grown the log past 64 MB (strace of bench:import). The file
        // keeps its largest size while the server runs, its space reused, and is removed with the
        // last connection
        conn.pragma('journal_size_limit = -1');
        conn.pragma('foreign_keys = ON');
        // a lock held elsewhere is waited for by SlicedSqlite, off the event loop: SQLite answers busy at once
        conn.pragma('busy_timeout = 0');
        keepPrepared(conn);
        done(null, conn);
      },
    },
  });
  return db;
}

/** What of a better-sqlite3 connection the pool's set-up uses. */
interface SqliteConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): { busy: boolean };
}

/** Most statements a SQLite connection keeps prepared (see `keepPrepared`). */
const PREPARED_STATEMENTS = 256;

/**
 * Keeps the statements a connection prepared, by SQL text, the most recently used first: knex
 * prepares each query afresh, and preparing one of a memory add's inserts costs about as much as
 * running it. knex runs a statement to its end before the next (`all` or `run`, never an iterator),
 * so one is free again by the time its SQL comes back; one still busy is prepared anew all the same.
 */
function keepPrepared(conn: SqliteConnection): void {
  const prepare = conn.prepare.bind(conn);
  const statements = new Map<string, { busy: boolean }>();
  conn.prepare = (sql) => {
    let statement = statements.get(sql);
    statements.delete(sql);
    if (statement === undefined || statement.busy) statement = prepare(sql);
    statements.set(sql, statement);
    if (statements.size > PREPARED_STATEMENTS) statements.delete(statements.keys().next().value as string);
    return statement;
  };
}

/** The SQLite file of the embedded profile's database under `dataDir`. */
export const sqliteFile = (dataDir: string): string => path.join(dataDir, 'cairn.sqlite');

/** True on MySQL/MariaDB, where row locks (`FOR UPDATE SKIP LOCKED`) exist. */
export function supportsRowLocks(db: Knex): boolean {
  return db.client.config.client === 'mysql2';
}

/** Creates the database named in a MySQL URL if it is missing (used by migrate and tests). */
export async function ensureMysqlDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.replace(/^\//, '');
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Refusing to create database with unusual name "${name}"`);
  url.pathname = '/';
  const admin = createDatabase({ databaseUrl: url.toString().replace(/\/$/, '/mysql'), dataDir: '' });
  try {
    await admin.raw(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await admin.destroy();
  }
}
