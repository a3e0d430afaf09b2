import { expect } from 'chai';
import { JOB_NAMES } from '../../contracts/jobs/catalogue.js';
import type { JobHandlers } from '../../contracts/jobs/handlers.js';
import { ConfigError, loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { InProcessQueue } from '../../workers/in-process.driver.js';

const noops = (): JobHandlers => Object.fromEntries(JOB_NAMES.map((n) => [n, async () => undefined])) as unknown as JobHandlers;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('retention sweep schedule (in-process timer)', () => {
  it('runs at once, then every interval, never two at a time, and stops when the workers close', async () => {
    const queue = new InProcessQueue(createLogger('silent'), 4);
    let runs = 0;
    let running = 0;
    let overlapped = false;
    queue.startWorkers({
      ...noops(),
      'retention.sweep': async () => {
        runs += 1;
        running += 1;
        if (running > 1) overlapped = true;
        // slower than the interval: the ticks that fall due meanwhile are skipped
        await pause(45);
        running -= 1;
      },
    });
    await queue.schedule('retention.sweep', 10, {});
    await pause(5);
    expect(runs).to.equal(1);
    await pause(200);
    expect(runs).to.be.at.least(2);
    expect(overlapped).to.equal(false);
    await queue.closeWorkers();
    const after = runs;
    await pause(100);
    expect(runs).to.equal(after);
  });
});

describe('RETENTION_SWEEP_MS', () => {
  it('defaults to an hour and refuses less than a second', () => {
    expect(loadConfig({}).retentionSweepMs).to.equal(3_600_000);
    expect(loadConfig({ RETENTION_SWEEP_MS: '1000' }).retentionSweepMs).to.equal(1000);
    expect(() => loadConfig({ RETENTION_SWEEP_MS: '999' })).to.throw(ConfigError, /RETENTION_SWEEP_MS/);
  });
});
