import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** Random bytes for ids, drawn 4 KB at a time: the library's own draw (Web Crypto, 16 bytes a call) costs 7–9 µs an id. */
const pool = new Uint8Array(4096);
let drawn = pool.length;
/** The last id's time and counter: ids made in the same millisecond count up from a random start, as the library's own do. */
const last = { msecs: -Infinity, seq: 0 };

/** A new resource id: UUIDv7, so ids sort by creation time and break `created_at` ties in order. */
export function newId(): string {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  const random = pool.subarray(drawn, (drawn += 16));
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = (((random[6] as number) & 0x7f) << 24) | ((random[7] as number) << 16) | ((random[8] as number) << 8) | (random[9] as number);
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs += 1;
  }
  return uuidv7({ random, msecs: last.msecs, seq: last.seq });
}

/** Epoch milliseconds, the unit every stored timestamp uses. */
export const nowMs = (): number => Date.now();

/** ISO 8601 UTC with `Z`, as every response carries timestamps. */
export const iso = (ms: number): string => new Date(Number(ms)).toISOString();

/** Same as `iso` but keeps null. */
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects with `message` when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `no answer within ${ms} ms`): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
