import type { MemoryRow } from '../../db/repositories/memories.repository.js';
import { iso } from '../../lib/time.js';

/**
 * Facts that keep what was true when. An update that changes a memory's text keeps the text it
 * replaces as a version of its own (a new id, `superseded_by` the memory, valid until the update's
 * event time); the memory keeps its id and holds the new text from then. A DELETE decided by an
 * add ends the memory's validity instead of deleting it; a user's delete deletes it with its
 * versions. Reads see the facts valid now by default; `as_of` sees those valid at a time.
 */

/** The most superseded versions one memory keeps; past it the oldest is deleted. */
export const MAX_VERSIONS = 100;

/** Which facts a read sees: those valid now (the default), those valid at `asOf` (epoch ms), or (`includeSuperseded`) every version. */
export interface ValidityView {
  asOf?: number;
  includeSuperseded?: boolean;
}

/** From when (epoch ms, event time) what the memory says holds. */
export function validFrom(row: Pick<MemoryRow, 'valid_from' | 'created_at'>): number {
  return Number(row.valid_from ?? row.created_at);
}

/** Whether a row is a fact the view sees. `asOf` wins over `includeSuperseded`. */
export function validIn(view: ValidityView = {}): (row: Pick<MemoryRow, 'valid_from' | 'valid_to' | 'created_at'>) => boolean {
  const { asOf } = view;
  if (asOf !== undefined) return (row) => validFrom(row) <= asOf && (row.valid_to == null || Number(row.valid_to) > asOf);
  if (view.includeSuperseded === true) return () => true;
  return (row) => row.valid_to == null;
}

/**
 * Hits in their order, except that a superseded version never comes before the memory that
 * superseded it when both are there: it moves to just after its successor.
 */
export function successorsFirst<T extends { id: string; superseded_by: string | null }>(hits: T[]): T[] {
  const present = new Set(hits.map((h) => h.id));
  const waiting = new Map<string, T[]>();
  const out: T[] = [];
  const emitted = new Set<string>();
  const emit = (hit: T): void => {
    out.push(hit);
    emitted.add(hit.id);
    for (const version of waiting.get(hit.id) ?? []) emit(version);
    waiting.delete(hit.id);
  };
  for (const hit of hits) {
    const successor = hit.superseded_by;
    if (successor !== null && present.has(successor) && !emitted.has(successor)) waiting.set(successor, [...(waiting.get(successor) ?? []), hit]);
    else emit(hit);
  }
  for (const versions of waiting.values()) out.push(...versions);
  return out;
}

/** A memory's validity as the API shows it: its times as ISO 8601. */
export function showValidity(m: { valid_from: number; valid_to: number | null }): { valid_from: string; valid_to: string | null } {
  return { valid_from: iso(m.valid_from), valid_to: m.valid_to === null ? null : iso(m.valid_to) };
}
