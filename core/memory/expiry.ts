import type { MemoryRow } from '../../db/repositories/memories.repository.js';
import { nowMs } from '../../lib/time.js';
import { utcDay } from '../usage.js';

/**
 * mem0's memory expiration: a memory's `expiration_date` ('YYYY-MM-DD', UTC) is the last day it is
 * shown. From the next day lists and search leave it out unless asked to show expired memories;
 * get by id still returns it, and clearing the date brings it back. Nothing is deleted here: the
 * retention sweep deletes a memory once it has been expired for MEMORY_EXPIRY_GRACE_DAYS.
 */

/** Whether a memory is shown on `today` ('YYYY-MM-DD'): no date, or a date not before it. */
const unexpiredOn = (today: string) => (row: Pick<MemoryRow, 'expiration_date'>): boolean => row.expiration_date == null || row.expiration_date >= today;

/** What lists and search keep: every memory with `showExpired`, else those not expired today (UTC). */
export function shownMemories(showExpired: boolean | undefined, now: number = nowMs()): (row: Pick<MemoryRow, 'expiration_date'>) => boolean {
  return showExpired === true ? () => true : unexpiredOn(utcDay(now));
}

/**
 * An event time in epoch ms from mem0's `timestamp`: unix seconds, or an ISO-8601 date or date-time
 * (UTC when it names no zone). Both arrive already checked against the request schema.
 */
export function eventTimeOf(timestamp: number | string): number {
  if (typeof timestamp === 'number') return Math.round(timestamp * 1000);
  const [date, time = '00:00:00'] = timestamp.split(/[Tt ]/);
  return Date.parse(`${date}T${/(Z|[+-]\d\d:?\d\d)$/i.test(time) ? time : `${time}Z`}`);
}
