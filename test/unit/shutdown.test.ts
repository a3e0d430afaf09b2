import { expect } from 'chai';
import { createLogger } from '../../lib/logger.js';
import { Shutdown, ShutdownPhase } from '../../lib/shutdown.js';

describe('shutdown', () => {
  it('closes HTTP, workers, queues, database, vectors, Redis in that order, whatever the registration order', async () => {
    const closed: string[] = [];
    const shutdown = new Shutdown(createLogger('silent'), 1000);
    const step = (name: string) => async () => {
      await new Promise((r) => setTimeout(r, 5));
      closed.push(name);
    };
    shutdown.add('redis', ShutdownPhase.redis, step('redis'));
    shutdown.add('database', ShutdownPhase.database, step('database'));
    shutdown.add('http', ShutdownPhase.http, step('http'));
    shutdown.add('milvus', ShutdownPhase.vectors, step('milvus'));
    shutdown.add('queues', ShutdownPhase.queues, step('queues'));
    shutdown.add('workers', ShutdownPhase.workers, step('workers'));
    await shutdown.run();
    expect(closed).to.deep.equal(['http', 'workers', 'queues', 'database', 'milvus', 'redis']);
  });

  it('runs once however often it is called, and a failing step does not stop the rest', async () => {
    let runs = 0;
    const shutdown = new Shutdown(createLogger('silent'), 1000);
    shutdown.add('broken', ShutdownPhase.http, () => Promise.reject(new Error('boom')));
    shutdown.add('db', ShutdownPhase.database, async () => {
      runs += 1;
    });
    await Promise.all([shutdown.run(), shutdown.run()]);
    await shutdown.run();
    expect(runs).to.equal(1);
  });

  it('moves on from a step that hangs, so later phases still close', async () => {
    const closed: string[] = [];
    const shutdown = new Shutdown(createLogger('silent'), 50);
    shutdown.add('stuck workers', ShutdownPhase.workers, () => new Promise<void>(() => undefined));
    shutdown.add('database', ShutdownPhase.database, async () => {
      closed.push('database');
    });
    await shutdown.run();
    expect(closed).to.deep.equal(['database']);
  });
});
