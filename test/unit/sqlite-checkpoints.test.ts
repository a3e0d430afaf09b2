import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, sqliteFile } from '../../db/knex.js';
import { startCheckpoints } from '../../db/sqlite-checkpoints.js';

/**
 * Writes through the embedded server's own connection (`createDatabase`: its settings), a small
 * transaction every millisecond or so, while the checkpoint thread runs, and answers the largest
 * the log file grew.
 */
async function largestLog(restartAboveBytes: number): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-checkpoints-'));
  const file = sqliteFile(dataDir);
  const db = createDatabase({ databaseUrl: null, dataDir });
  let checkpoints: { stop(): Promise<void> } | null = null;
  try {
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('body', 1000).index();
    });
    checkpoints = startCheckpoints(file, { everyMs: 20, restartAboveBytes });
    let largest = 0;
    for (let i = 0; i < 800; i++) {
      await db.transaction((trx) => trx('notes').insert(Array.from({ length: 4 }, () => ({ body: `note ${Math.random()} `.repeat(20) }))));
      largest = Math.max(largest, fs.statSync(`${file}-wal`).size);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return largest;
  } finally {
    await checkpoints?.stop();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('SQLite checkpoints', () => {
  it('start the write-ahead log afresh under a steady stream of writes once it is past its bound, where passive checkpoints alone let it grow with every write', async function () {
    this.timeout(30_000);
    const passiveOnly = await largestLog(Number.MAX_SAFE_INTEGER);
    const restarted = await largestLog(256 * 1024);
    // 800 transactions write some 35 MB of log pages
    expect(passiveOnly).to.be.greaterThan(16 * 1024 * 1024);
    expect(restarted).to.be.lessThan(8 * 1024 * 1024);
  });
});
