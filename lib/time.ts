import { randomUUID } from 'node:crypto';

/** A new resource id. */
export const newId = (): string => randomUUID();

/** Epoch milliseconds, the unit every stored timestamp uses. */
export const nowMs = (): number => Date.now();

/** ISO 8601 UTC with `Z`, as every response carries timestamps. */
export const iso = (ms: number): string => new Date(Number(ms)).toISOString();

/** Same as `iso` but keeps null. */
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
