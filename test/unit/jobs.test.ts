import { expect } from 'chai';
import { envelope, JOB_NAMES } from '../../jobs/catalogue.js';
import { assertHandlers, PoisonJobError, runJob, type JobHandlers } from '../../jobs/handlers.js';
import { createLogger } from '../../lib/logger.js';
import { InProcessQueue } from '../../workers/in-process.driver.js';

/** A handler for every job that does nothing; tests override the one they exercise. */
const noops = (): JobHandlers => Object.fromEntries(JOB_NAMES.map((n) => [n, async () => undefined])) as unknown as JobHandlers;

const log = createLogger('silent');
const ctx = { attempt: 1, worker: 'test', log };

describe('job catalogue', () => {
  it('derives job ids from the entity, so the same work is enqueued once', () => {
    const a = envelope('probe.touch', { projectId: 'p', probeId: 'abc' });
    const b = envelope('probe.touch', { projectId: 'p', probeId: 'abc' });
    expect(a.jobId).to.equal(b.jobId).and.to.equal('probe.touch-abc');
  });

  it('refuses handlers that miss a job or name an unknown one', () => {
    expect(() => assertHandlers({})).to.throw(/missing probe.touch/);
    const noop = async (): Promise<void> => undefined;
    expect(() => assertHandlers({ 'probe.touch': noop, 'mystery.job': noop })).to.throw(/unknown mystery.job/);
    expect(() => assertHandlers(Object.fromEntries(JOB_NAMES.map((n) => [n, noop])))).not.to.throw();
  });

  it('re-validates payloads and names before running a handler', async () => {
    const handlers: JobHandlers = { ...noops(), 'probe.touch': async () => undefined };
    await runJob(handlers, 'probe.touch', { projectId: 'p', probeId: 'x' }, ctx);
    let error: unknown;
    try {
      await runJob(handlers, 'probe.touch', { projectId: 'p' }, ctx);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(PoisonJobError);
    try {
      await runJob(handlers, 'no.such.job', {}, ctx);
      expect.fail('should have thrown');
    } catch (err) {
      expect(err).to.be.instanceOf(PoisonJobError);
    }
  });
});

describe('in-process queue', () => {
  it('retries a failing job with exponential backoff until it succeeds', async () => {
    const queue = new InProcessQueue(log, 2, 20);
    const attempts: number[] = [];
    const times: number[] = [];
    queue.startWorkers({
      ...noops(),
      'probe.touch': async (_payload, jobCtx) => {
        attempts.push(jobCtx.attempt);
        times.push(Date.now());
        if (jobCtx.attempt < 3) throw new Error('transient');
      },
    });
    await queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'retry' }));
    expect(attempts).to.deep.equal([1, 2, 3]);
    // 20 ms, then 40 ms: each wait at least its exponential delay (a busy machine only adds to it)
    expect((times[1] as number) - (times[0] as number)).to.be.at.least(19);
    expect((times[2] as number) - (times[1] as number)).to.be.at.least(39);
    const [depth] = await queue.depths();
    expect(depth).to.include({ completed: 1, failed: 0, active: 0, waiting: 0 });
  });

  it('gives up after five attempts and drops poison jobs at once', async () => {
    const queue = new InProcessQueue(log, 2, 1);
    let runs = 0;
    queue.startWorkers({
      ...noops(),
      'probe.touch': async () => {
        runs += 1;
        throw new Error('always');
      },
    });
    await queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'doomed' }));
    expect(runs).to.equal(5);
    await queue.dispatch({ name: 'probe.touch', jobId: 'poison', payload: { nope: 1 } as never });
    expect(runs).to.equal(5);
    const [depth] = await queue.depths();
    expect(depth?.failed).to.equal(2);
  });

  it('holds a job id once while it is queued or running, and respects concurrency', async () => {
    const queue = new InProcessQueue(log, 1, 1);
    let running = 0;
    let peak = 0;
    let runs = 0;
    queue.startWorkers({
      ...noops(),
      'probe.touch': async () => {
        runs += 1;
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 10));
        running -= 1;
      },
    });
    const same = envelope('probe.touch', { projectId: 'p', probeId: 'same' });
    await Promise.all([
      queue.dispatch(same),
      queue.dispatch(same),
      queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'other' })),
    ]);
    expect(runs).to.equal(2);
    expect(peak).to.equal(1);
  });
});
