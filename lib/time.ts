import { v7 as uuidv7 } from 'uuid';

/** A new resource id: UUIDv7, so ids sort by creation time and break `created_at` ties in order. */
export const newId = (): string => uuidv7();

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
