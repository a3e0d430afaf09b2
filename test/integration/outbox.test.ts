import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { JOB_ATTEMPTS } from '../../workers/retry-policy.js';
import {
  freePort,
  isolatedDatabaseEnv,
  isProduction,
  newProject,
  spawnCairn,
  startRuntime,
  token,
  unique,
  waitFor,
  type TestRuntime,
} from '../helpers.js';

interface Probe {
  id: string;
  status: string;
  attempts: number;
  processed_by: string | null;
}

async function probeOf(t: TestRuntime, key: string, id: string): Promise<Probe> {
  const res = await t.http.get(`/v1/probes/${id}`).set('Authorization', token(key));
  expect(res.status).to.equal(200);
  return res.body as Probe;
}

describe('outbox and queue', () => {
  it('a probe write is completed by a worker through outbox, relay and queue', async () => {
    const t = await startRuntime();
    try {
      const { key } = await newProject(t);
      const created = await t.http.post('/v1/probes').set('Authorization', token(key)).send({});
      expect(created.status).to.equal(202);
      expect(created.body.status).to.equal('pending');
      const done = await waitFor(async () => {
        const p = await probeOf(t, key, created.body.id);
        return p.status === 'done' ? p : null;
      });
      expect(done.attempts).to.equal(1);
      expect(done.processed_by).to.be.a('string');
      expect(await t.runtime.repositories.outbox.countPending()).to.equal(0);
    } finally {
      await t.close();
    }
  });

  it('stores neither the row nor its job when the job cannot be recorded', async () => {
    const t = await startRuntime({ env: await isolatedDatabaseEnv() });
    try {
      const { key, projectId } = await newProject(t);
      await t.runtime.relay.stop();
      await t.runtime.db.schema.renameTable('outbox', 'outbox_away');
      const res = await t.http.post('/v1/probes').set('Authorization', token(key)).send({});
      expect(res.status).to.be.at.least(500);
      const rows = await t.runtime.db('probes').where({ project_id: projectId });
      expect(rows).to.have.length(0);
      await t.runtime.db.schema.renameTable('outbox_away', 'outbox');
    } finally {
      await t.close();
    }
  });

  it("delivers a write's jobs as it commits, without waiting for the relay's next poll", async () => {
    // the relay polls once at start, then not for an hour: only the hand-off on commit can deliver
    const t = await startRuntime({ relay: { pollMs: 3_600_000 } });
    try {
      const { key } = await newProject(t);
      const created = await t.http.post('/v1/probes').set('Authorization', token(key)).send({});
      expect(created.status).to.equal(202);
      const done = await waitFor(async () => {
        const p = await probeOf(t, key, created.body.id);
        return p.status === 'done' ? p : null;
      });
      expect(done.attempts).to.equal(1);
      await waitFor(async () => (await t.runtime.repositories.outbox.countPending()) === 0, { message: 'outbox emptied' });
    } finally {
      await t.close();
    }
  });

  it('gives every recorded job the id of its own row, with many transactions recording at once', async () => {
    const t = await startRuntime({ env: await isolatedDatabaseEnv(), start: false });
    try {
      const { outbox } = t.runtime.repositories;
      const tag = unique('ids');
      // 8 transactions side by side, 1 to 120 jobs each (on MySQL, InnoDB numbers each multi-row insert)
      const written = await Promise.all(
        [1, 7, 120, 3, 64, 2, 31, 90].map((count, w) =>
          t.runtime.db.transaction((trx) =>
            outbox.add(
              trx,
              Array.from({ length: count }, (_, i) => ({ projectId: 'p', job: { name: 'probe.touch' as const, jobId: `${tag}-${w}-${i}`, payload: { projectId: 'p', probeId: `${w}-${i}` } } })),
              60_000,
            ),
          ),
        ),
      );
      const entries = written.flat();
      expect(entries).to.have.length(318);
      const rows = (await t.runtime.db('outbox').whereIn('id', entries.map((e) => e.id)).select('id', 'job_id', 'locked_until')) as Array<{ id: number; job_id: string; locked_until: number | null }>;
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      for (const entry of entries) {
        expect(byId.get(entry.id)?.job_id, `row ${entry.id}`).to.equal(entry.envelope.jobId);
        // held for the writer: no other relay claims them while it delivers
        expect(Number(byId.get(entry.id)?.locked_until)).to.be.greaterThan(Date.now());
      }
      // delivered: deleted by id and job id, every one
      await outbox.complete(entries);
      expect(await outbox.countPending()).to.equal(0);
    } finally {
      await t.close();
    }
  });

  it('work recorded before a process stopped is done by the next one', async () => {
    // A process that accepts the write but runs no relay or worker, then goes away.
    const writer = await startRuntime({ start: false });
    const { key } = await newProject(writer);
    const created = await writer.http.post('/v1/probes').set('Authorization', token(key)).send({});
    expect(created.status).to.equal(202);
    expect(await writer.runtime.repositories.outbox.countPending()).to.be.at.least(1);
    await writer.close();

    const next = await startRuntime({ env: writer.env });
    try {
      const done = await waitFor(async () => {
        const p = await probeOf(next, key, created.body.id);
        return p.status === 'done' ? p : null;
      });
      expect(done.attempts).to.equal(1);
    } finally {
      await next.close();
    }
  });

  if (isProduction) {
    describe('on BullMQ', () => {
      let redis: ChildProcess | null = null;

      afterEach(() => {
        redis?.kill('SIGKILL');
        redis = null;
      });

      it('keeps outbox entries through a Redis outage and delivers them when Redis returns', async function () {
        this.timeout(90_000);
        const port = await freePort();
        const t = await startRuntime({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
        try {
          const { key } = await newProject(t);
          // Redis is down: the write is still acknowledged (auth falls back to the database).
          const created = await t.http.post('/v1/probes').set('Authorization', token(key)).send({});
          expect(created.status).to.equal(202);
          await new Promise((r) => setTimeout(r, 1500));
          expect((await probeOf(t, key, created.body.id)).status).to.equal('pending');
          expect(await t.runtime.repositories.outbox.countPending()).to.be.at.least(1);
          const ready = await t.http.get('/readyz');
          expect(ready.status).to.equal(503);
          expect(ready.headers['retry-after']).to.equal('5');
          expect(ready.body.checks.find((c: { name: string }) => c.name === 'queue').ok).to.equal(false);

          redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let redisOutput = '';
          redis.stdout?.on('data', (d: Buffer) => (redisOutput += d.toString()));
          redis.stderr?.on('data', (d: Buffer) => (redisOutput += d.toString()));
          await waitFor(
            async () => {
              if (redis?.exitCode !== null) throw new Error(`redis-server exited: ${redisOutput.slice(-500)}`);
              const checks = await t.runtime.readiness();
              return checks.every((c) => c.ok) ? checks : null;
            },
            { timeoutMs: 20_000, message: `Redis answering on port ${port}` },
          );
          const done = await waitFor(
            async () => {
              const p = await probeOf(t, key, created.body.id);
              return p.status === 'done' ? p : null;
            },
            { timeoutMs: 30_000, message: 'probe done after Redis came back' },
          ).catch(async (err: Error) => {
            const entries = await t.runtime.db('outbox').select('job_id', 'attempts', 'locked_until', 'last_error');
            throw new Error(`${err.message}; outbox now: ${JSON.stringify(entries)}`);
          });
          expect(done.attempts).to.equal(1);
          expect(await t.runtime.repositories.outbox.countPending()).to.equal(0);
          await waitFor(async () => (await t.http.get('/readyz')).status === 200, { message: 'ready again' });
        } finally {
          await t.close();
        }
      });

      it('re-runs the job of a worker killed mid-job', async function () {
        this.timeout(90_000);
        // The API process runs no worker; the workers are separate processes, as in production.
        const api = await startRuntime({ role: 'api', env: { JOB_LOCK_MS: '1500' } });
        const workerEnv = { ...api.env, JOB_LOCK_MS: '1500', LOG_LEVEL: 'warn' };
        const first = await spawnCairn('start-worker.ts', workerEnv);
        let second: Awaited<ReturnType<typeof spawnCairn>> | null = null;
        try {
          const { key } = await newProject(api);
          const created = await api.http.post('/v1/probes').set('Authorization', token(key)).send({ hold_ms: 4000 });
          await waitFor(async () => (await probeOf(api, key, created.body.id)).attempts >= 1, {
            timeoutMs: 30_000,
            message: 'first worker started the job',
          });
          await first.kill('SIGKILL');
          expect((await probeOf(api, key, created.body.id)).status).to.equal('pending');

          second = await spawnCairn('start-worker.ts', workerEnv);
          const done = await waitFor(
            async () => {
              const p = await probeOf(api, key, created.body.id);
              return p.status === 'done' ? p : null;
            },
            { timeoutMs: 60_000, message: 'job re-run by the second worker' },
          );
          expect(done.attempts).to.be.at.least(2);
          expect(done.processed_by).to.include(String(second.child.pid));
        } finally {
          await first.kill('SIGKILL');
          await second?.kill('SIGTERM');
          await api.close();
        }
      });

      it('enqueues with unbounded attempts, capped exponential backoff, bounded retention and idempotent job ids', async () => {
        const t = await startRuntime({ role: 'api' });
        try {
          const job = { name: 'probe.touch' as const, jobId: `probe.touch-${unique('x')}`, payload: { projectId: 'p', probeId: 'x' } };
          await t.runtime.queue.dispatch(job);
          await t.runtime.queue.dispatch(job);
          const [queue] = t.runtime.bullQueues();
          const stored = await queue!.getJob(job.jobId);
          // transient failures retry for as long as it takes (1 s doubling, capped at 60 s)
          expect(stored?.opts.attempts).to.equal(JOB_ATTEMPTS).and.to.be.at.least(1_000_000);
          expect(stored?.opts.backoff).to.deep.equal({ type: 'capped' });
          expect(stored?.opts.removeOnComplete).to.deep.include({ count: 1000 });
          expect(stored?.opts.removeOnFail).to.deep.include({ count: 5000 });
          expect(await queue!.getWaitingCount()).to.equal(1);
        } finally {
          await t.close();
        }
      });

      it('drops a job whose payload is invalid without retrying it', async () => {
        const t = await startRuntime();
        try {
          const jobId = `probe.touch-${unique('poison')}`;
          await t.runtime.queue.dispatch({ name: 'probe.touch', jobId, payload: { bogus: true } as never });
          const [queue] = t.runtime.bullQueues();
          const failed = await waitFor(async () => ((await queue!.getJobState(jobId)) === 'failed' ? queue!.getJob(jobId) : null));
          expect(failed?.attemptsMade).to.equal(1);
          expect(failed?.failedReason).to.match(/Invalid payload/);
        } finally {
          await t.close();
        }
      });
    });
  }
});
