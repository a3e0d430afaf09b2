import { expect } from 'chai';
import { envelope, JOB_NAMES } from '../../contracts/jobs/catalogue.js';
import { assertHandlers, endsJob, PermanentJobError, PoisonJobError, runJob, type JobHandlers } from '../../contracts/jobs/handlers.js';
import { badRequest, unavailable, AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { InProcessQueue } from '../../workers/in-process.driver.js';
import { retryDelayMs } from '../../workers/retry-policy.js';

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
    const queue = new InProcessQueue(log, 2, { baseMs: 20, maxMs: 1_000 });
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

  it('retries a transient failure past any fixed number of attempts, and ends a permanent one at once', async () => {
    const queue = new InProcessQueue(log, 2, { baseMs: 1, maxMs: 4 });
    let runs = 0;
    let rejected = 0;
    queue.startWorkers({
      ...noops(),
      'probe.touch': async (payload) => {
        if (payload.probeId === 'bad-input') {
          rejected += 1;
          throw badRequest('embed_input_rejected', 'The provider rejected the input');
        }
        runs += 1;
        if (runs < 12) throw unavailable('Milvus is unreachable (upsert); retry later');
      },
    });
    await queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'outage' }));
    expect(runs).to.equal(12);
    await queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'bad-input' }));
    expect(rejected).to.equal(1);
    await queue.dispatch({ name: 'probe.touch', jobId: 'poison', payload: { nope: 1 } as never });
    const [depth] = await queue.depths();
    expect(depth).to.include({ completed: 1, failed: 2 });
    // the board lists them, newest first, with their reasons
    const [poison, rejectedJob] = queue.failed();
    expect(poison).to.include({ id: 'poison', queue: 'maintenance', name: 'probe.touch', attempts: 1 });
    expect(poison?.reason).to.match(/^Invalid payload for probe\.touch: /);
    expect(rejectedJob).to.include({ id: 'probe.touch-bad-input', reason: 'The provider rejected the input', attempts: 1 });
  });

  it('runs indexing jobs waiting out a backoff as soon as an indexing job that had failed succeeds', async function () {
    this.timeout(20_000);
    const queue = new InProcessQueue(log, 4, { baseMs: 250, maxMs: 60_000 });
    let storeUp = false;
    const failures = new Map<string, number>();
    queue.startWorkers({
      ...noops(),
      'memory.index': async (payload) => {
        if (!storeUp) {
          failures.set(payload.memoryId, (failures.get(payload.memoryId) ?? 0) + 1);
          throw new Error('Milvus is unreachable (upsert)');
        }
      },
    });
    const settled = new Map<string, number>();
    const track = (id: string): Promise<void> =>
      queue.dispatch(envelope('memory.index', { projectId: 'p', memoryId: id, revision: 1 })).then(() => void settled.set(id, Date.now()));
    const waiting = [track('m1'), track('m2')];
    // five failures each: the next retry is 4 s away
    while ((failures.get('m1') ?? 0) < 5 || (failures.get('m2') ?? 0) < 5) await new Promise((r) => setTimeout(r, 5));
    const recovering = track('m3');
    while (!failures.get('m3')) await new Promise((r) => setTimeout(r, 5));
    storeUp = true;
    const upAt = Date.now();
    await Promise.all([...waiting, recovering]);
    // m3 succeeds on its second attempt (250 ms later) and wakes the others well before their 4 s
    expect((settled.get('m1') as number) - upAt).to.be.below(2_000);
    expect((settled.get('m2') as number) - upAt).to.be.below(2_000);
    expect(failures.get('m1')).to.equal(5);
    await queue.closeWorkers();
  });

  it('stops a job waiting to retry when it closes, rejecting so that its outbox entry is kept', async () => {
    const queue = new InProcessQueue(log, 1, { baseMs: 60_000, maxMs: 60_000 });
    let runs = 0;
    queue.startWorkers({
      ...noops(),
      'probe.touch': async () => {
        runs += 1;
        throw new Error('connect ECONNREFUSED');
      },
    });
    const run = queue.dispatch(envelope('probe.touch', { projectId: 'p', probeId: 'closing' }));
    while (runs === 0) await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    await queue.closeWorkers();
    expect(Date.now() - started).to.be.below(1_000);
    let error: unknown;
    await run.catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/runs again after a restart/);
  });

  it('holds a job id once while it is queued or running, and respects concurrency', async () => {
    const queue = new InProcessQueue(log, 1, { baseMs: 1, maxMs: 1 });
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

describe('retry policy', () => {
  it('backs off exponentially up to its cap', () => {
    const policy = { baseMs: 1_000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100, 10_000].map((a) => retryDelayMs(policy, a))).to.deep.equal([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('ends a job only for input that can never succeed', () => {
    const transient = [
      unavailable('Milvus is unreachable (upsert); retry later'),
      new AppError(429, 'rate_limited', 'slow down'),
      new AppError(408, 'timeout', 'too slow'),
      badRequest('embed_model_unavailable', 'The local model is not in LOCAL_MODEL_DIR'),
      new Error('connect ECONNREFUSED 127.0.0.1:19530'),
      Object.assign(new Error('Deadlock found'), { code: 'ER_LOCK_DEADLOCK' }),
    ];
    const permanent = [badRequest('embed_input_rejected', 'rejected the input (400)'), badRequest('invalid_vector', 'wrong dimension'), new PoisonJobError('Invalid payload'), new PermanentJobError('The pdf file could not be read')];
    expect(transient.map(endsJob)).to.deep.equal(transient.map(() => false));
    expect(permanent.map(endsJob)).to.deep.equal(permanent.map(() => true));
  });
});
