import { expect } from 'chai';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, sqliteFile, type Knex } from '../../db/knex.js';

/** What of a second better-sqlite3 connection the tests use (the package ships no types). */
interface Connection {
  exec(sql: string): void;
  close(): void;
  readonly inTransaction: boolean;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (filename: string) => Connection;

/**
 * The embedded server's connection (`createDatabase`) against a second connection to the same
 * file that holds the write lock, as the checkpoint thread's restarting checkpoint or a CLI
 * command writing while the server runs do.
 */
describe('SQLite: a write lock held by another connection', () => {
  let dataDir: string;
  let db: Knex;
  let other: Connection;

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-locks-'));
    db = createDatabase({ databaseUrl: null, dataDir });
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('body');
    });
    other = new Database(sqliteFile(dataDir));
  });

  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The longest the event loop went without running a 1 ms timer, while `work` ran. */
  async function longestStall(work: () => Promise<unknown>): Promise<number> {
    let last = performance.now();
    let longest = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    return longest;
  }

  it('waits for it with the event loop free, then writes: a transaction and a single statement alike', async () => {
    other.exec('BEGIN IMMEDIATE');
    setTimeout(() => other.exec('COMMIT'), 300);
    const started = performance.now();
    const stall = await longestStall(() =>
      Promise.all([db.transaction((trx) => trx('notes').insert([{ body: 'in a transaction' }, { body: 'and its second row' }])), db('notes').insert({ body: 'alone' })]),
    );
    expect(performance.now() - started, 'the writes waited for the lock').to.be.greaterThan(250);
    expect(stall, 'the longest the event loop stood still').to.be.lessThan(100);
    expect((await db('notes').orderBy('id').pluck('body')).sort()).to.deep.equal(['alone', 'and its second row', 'in a transaction']);
  });

  it('gives up after 5 s with SQLite’s busy error, and has written nothing', async function () {
    this.timeout(20_000);
    other.exec('BEGIN IMMEDIATE');
    const refused = await db.transaction((trx) => trx('notes').insert({ body: 'never' })).then(
      () => null,
      (err: unknown) => err as { code?: string },
    );
    other.exec('COMMIT');
    expect(refused?.code).to.equal('SQLITE_BUSY');
    expect(await db('notes').count({ n: '*' })).to.deep.equal([{ n: 0 }]);
  });
});
