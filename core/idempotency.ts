import { createHash } from 'node:crypto';
import type { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys.repository.js';
import { AppError } from '../lib/errors.js';
import { newId, nowMs, sleep } from '../lib/time.js';

/** How long a key's answer is kept (and so replayed): the IETF draft's and Stripe's 24 hours. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000;

/** What a write answered: its HTTP status and JSON body, replayed as they were. */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

/** Whose key a write is sent with, and the request (or job) that owns it. */
export interface IdempotencyClaim {
  projectId: string;
  key: string;
  requestId: string;
}

/** What `begin` found: the key is now this request's to do the work under, or it was answered before. */
export type IdempotencyStart = { claim: IdempotencyClaim } | { replay: IdempotentAnswer };

export interface IdempotencyOptions {
  /** How long a request waits for the first request with its key to finish (`EXTRACT_TIMEOUT_MS`), and how long a key whose work never started stays that request's. */
  waitMs: number;
  /** How often a waiting request looks at the key again. */
  pollMs?: number;
  now?: () => number;
}

/**
 * Idempotency keys (the IETF `Idempotency-Key` draft, as Stripe has it) for writes a client may
 * retry: the first request with a key owns it and records its answer; a later one with the same
 * key and body gets that answer, with another body a 422. The answer of work that outlives its
 * request (a model call past `EXTRACT_TIMEOUT_MS`, answered 503) is recorded by the job that does
 * the work, so the client's retry gets what the job stored rather than storing it again.
 */
export class Idempotency {
  private readonly pollMs: number;
  private readonly now: () => number;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly options: IdempotencyOptions,
  ) {
    this.pollMs = options.pollMs ?? 100;
    this.now = options.now ?? nowMs;
  }

  /**
   * Claims `key` for a request doing `operation` with `body`, or returns the answer the key already
   * has. A key still being worked on is waited for, at most `waitMs`: mem0's clients retry a 5xx
   * (and their own timeouts) but raise a 409 to the caller, so a retry that arrives while the first
   * request still runs is best served by that request's answer, and when that takes too long by a
   * 503 to retry on (the answer is recorded by then or later, and the next retry gets it).
   */
  async begin(projectId: string, key: string, operation: string, body: unknown): Promise<IdempotencyStart> {
    const fingerprint = fingerprintOf(body);
    const requestId = newId();
    const deadline = this.now() + this.options.waitMs;
    for (;;) {
      const now = this.now();
      const row = await this.keys.claim({
        project_id: projectId,
        idempotency_key: key,
        operation,
        fingerprint,
        request_id: requestId,
        locked_until: now + this.options.waitMs,
        expires_at: now + IDEMPOTENCY_RETENTION_MS,
      });
      const claim = { projectId, key, requestId };
      if (row.request_id === requestId) return { claim };
      if (row.request_id === '') continue;
      if (row.expires_at <= now) {
        await this.keys.deleteIfExpired(projectId, key, now);
        continue;
      }
      if (row.operation !== operation || row.fingerprint !== fingerprint) {
        throw new AppError(
          422,
          'idempotency_key_mismatch',
          `The Idempotency-Key "${key}" was first sent with ${row.operation === operation ? 'another body' : `another operation (${row.operation})`} in the last 24 hours; send that same request to get its answer, or use a new key for a new request.`,
        );
      }
      if (row.status !== null) return { replay: { status: row.status, body: JSON.parse(row.response ?? 'null') as unknown } };
      // its work never started (the request that claimed it died, or its job was never queued): ours now
      if (row.started_at === null && row.locked_until <= now && (await this.keys.takeOver(projectId, key, row.request_id, requestId, now, now + this.options.waitMs))) {
        return { claim };
      }
      if (this.now() >= deadline) {
        throw new AppError(
          503,
          'idempotency_key_in_progress',
          `The first request with the Idempotency-Key "${key}" is still running; retry with the same key to get its answer.`,
          undefined,
          { 'Retry-After': '1' },
        );
      }
      await sleep(Math.min(this.pollMs, Math.max(1, deadline - this.now())));
    }
  }

  /**
   * Does a write once per key: without a key, `work` runs as always; with one, the key's answer
   * when it has one (`replayed`), else `work` under the claim and its answer recorded (a failure
   * as `failed` says).
   */
  async run(
    projectId: string,
    key: string | undefined,
    operation: string,
    body: unknown,
    work: (claim?: IdempotencyClaim) => Promise<IdempotentAnswer>,
  ): Promise<IdempotentAnswer & { replayed: boolean }> {
    if (key === undefined) return { ...(await work()), replayed: false };
    const start = await this.begin(projectId, key, operation, body);
    if ('replay' in start) return { ...start.replay, replayed: true };
    try {
      const answer = await work(start.claim);
      await this.answer(start.claim, answer);
      return { ...answer, replayed: false };
    } catch (err) {
      await this.failed(start.claim, err);
      throw err;
    }
  }

  /** Records the answer of the work `claim` owns (once: an answer already recorded stays). */
  async answer(claim: IdempotencyClaim, answer: IdempotentAnswer): Promise<void> {
    await this.keys.answer(claim.projectId, claim.key, claim.requestId, answer.status, JSON.stringify(answer.body));
  }

  /**
   * What the request that owns `claim` does with an error: a client error is its answer, recorded;
   * a 503 may be work still under way (a job past the request's limit) which records its own
   * answer, so the key is left to it; after any other failure nothing was stored and the key is
   * released for a retry to run afresh.
   */
  async failed(claim: IdempotencyClaim, err: unknown): Promise<void> {
    if (err instanceof AppError && err.status < 500) {
      await this.answer(claim, { status: err.status, body: { detail: err.detail, code: err.code, ...(err.errors ? { errors: err.errors } : {}) } });
    } else if (!(err instanceof AppError && err.status === 503)) {
      await this.keys.release(claim.projectId, claim.key, claim.requestId);
    }
  }

  /**
   * A job about to do the work of `claim`: `run` when it still owns the key (from now on no one may
   * take it over); the answer recorded when it already ran (a stalled job run again); `superseded`
   * when another request took the key over before this job started.
   */
  async startJob(claim: IdempotencyClaim): Promise<'run' | 'superseded' | IdempotentAnswer> {
    if (await this.keys.start(claim.projectId, claim.key, claim.requestId, this.now())) return 'run';
    const row = await this.keys.get(claim.projectId, claim.key);
    if (row && row.request_id === claim.requestId && row.status !== null) return { status: row.status, body: JSON.parse(row.response ?? 'null') as unknown };
    return 'superseded';
  }

  /** Releases the key of a job whose work failed with a server error, so the client's retry runs afresh. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.keys.release(claim.projectId, claim.key, claim.requestId);
  }

  /** Deletes keys past their retention, in batches; returns how many. */
  async sweep(batchSize = 500): Promise<number> {
    const now = this.now();
    let deleted = 0;
    for (;;) {
      const n = await this.keys.deleteExpired(now, batchSize);
      deleted += n;
      if (n < batchSize) return deleted;
    }
  }
}

/** The same request gives the same fingerprint whatever the order of its JSON members. */
function fingerprintOf(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

