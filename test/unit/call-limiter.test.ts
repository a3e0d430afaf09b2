import { expect } from 'chai';
import { CallLimiter, retryAfterMs } from '../../providers/remote-calls.js';

/** A provider stand-in: each request waits until the test answers it, so what is in flight is visible. */
class Upstream {
  readonly pending: Array<{ startedAt: number; answer: (status: number, retryAfter?: string) => void }> = [];
  inFlight = 0;
  maxInFlight = 0;
  started: number[] = [];

  readonly fetch: typeof fetch = () =>
    new Promise<Response>((resolve) => {
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      this.started.push(Date.now());
      this.pending.push({
        startedAt: Date.now(),
        answer: (status, retryAfter) => {
          this.inFlight -= 1;
          resolve(new Response('{}', { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } }));
        },
      });
    });

  /** Answers the oldest pending request. */
  answer(status: number, retryAfter?: string): void {
    const next = this.pending.shift();
    if (next === undefined) throw new Error('no request is pending');
    next.answer(status, retryAfter);
  }
}

const tick = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await tick();
  expect(condition(), what).to.equal(true);
}

describe('CallLimiter (remote provider requests)', () => {
  it('keeps at most `concurrency` requests in flight and lets the rest go in order as answers come', async () => {
    const upstream = new Upstream();
    const limited = new CallLimiter('test', 3).fetch(upstream.fetch);
    const responses = Array.from({ length: 8 }, () => limited('http://provider/embed'));
    await until(() => upstream.inFlight === 3, 'three requests in flight');
    for (let answered = 0; answered < 8; answered++) {
      await until(() => upstream.pending.length > 0, 'a request pending');
      upstream.answer(200);
    }
    expect((await Promise.all(responses)).map((r) => r.status)).to.deep.equal(Array(8).fill(200));
    expect(upstream.maxInFlight).to.equal(3);
  });

  it('halves the requests in flight on a 429, once per round, sends nothing before Retry-After, and grows back with successes', async () => {
    const upstream = new Upstream();
    const limiter = new CallLimiter('test', 4);
    const limited = limiter.fetch(upstream.fetch);
    const first = Array.from({ length: 4 }, () => limited('http://provider/embed'));
    await until(() => upstream.inFlight === 4, 'four requests in flight');
    // the whole round is refused: one cut, not four
    for (let i = 0; i < 4; i++) upstream.answer(429, '0.3');
    const refusedAt = Date.now();
    expect((await Promise.all(first)).map((r) => r.status)).to.deep.equal([429, 429, 429, 429]);
    expect(limiter.current).to.equal(2);

    const second = Array.from({ length: 6 }, () => limited('http://provider/embed'));
    await until(() => upstream.inFlight === 2, 'two requests in flight after the pause');
    expect(Math.min(...upstream.started.slice(4))).to.be.at.least(refusedAt + 290);
    // two successes at limit 2 → 3; three more → 4
    upstream.answer(200);
    upstream.answer(200);
    await until(() => limiter.current === 3 && upstream.inFlight === 3, 'three in flight');
    for (let i = 0; i < 3; i++) upstream.answer(200);
    await until(() => upstream.pending.length === 1, 'the last request sent');
    upstream.answer(200);
    expect((await Promise.all(second)).every((r) => r.status === 200)).to.equal(true);
    expect(limiter.current).to.equal(4);
  });

  it('counts a 503 as a rate limit only with Retry-After, and never drops below one request', async () => {
    const upstream = new Upstream();
    const limiter = new CallLimiter('test', 2);
    const limited = limiter.fetch(upstream.fetch);
    const outage = limited('http://provider/embed');
    await until(() => upstream.inFlight === 1, 'sent');
    upstream.answer(503);
    expect((await outage).status).to.equal(503);
    expect(limiter.current).to.equal(2);
    for (let round = 0; round < 3; round++) {
      const busy = limited('http://provider/embed');
      await until(() => upstream.inFlight === 1, 'sent');
      upstream.answer(503, '0');
      await busy;
    }
    expect(limiter.current).to.equal(1);
  });

  it('gives up a wait when the caller aborts, without losing a slot', async () => {
    const upstream = new Upstream();
    const limited = new CallLimiter('test', 1).fetch(upstream.fetch);
    const running = limited('http://provider/embed');
    const abort = new AbortController();
    const waiting = limited('http://provider/embed', { signal: abort.signal });
    await until(() => upstream.inFlight === 1, 'one in flight');
    abort.abort(new Error('timed out'));
    await waiting.then(
      () => expect.fail('the aborted request should reject'),
      (err: Error) => expect(err.message).to.equal('timed out'),
    );
    upstream.answer(200);
    await running;
    const next = limited('http://provider/embed');
    await until(() => upstream.inFlight === 1, 'the next request goes out');
    upstream.answer(200);
    expect((await next).status).to.equal(200);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).to.equal(2000);
    expect(retryAfterMs('0.5', now)).to.equal(500);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:30 GMT', now)).to.equal(30_000);
    expect(retryAfterMs('Tue, 31 Dec 2024 00:00:00 GMT', now)).to.equal(0);
    expect(retryAfterMs('soon', now)).to.equal(null);
    expect(retryAfterMs(null, now)).to.equal(null);
    expect(retryAfterMs('', now)).to.equal(null);
  });
});
