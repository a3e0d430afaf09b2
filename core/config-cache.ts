import type { ChangeCounts } from '../db/change-counts.js';

/** Most projects whose configuration a process holds, and most objects held per project. */
const MAX_PROJECTS = 1_000;
const MAX_ENTRIES = 1_000;

/** One project's configuration as of one reading of its change count; an operation's reads share it. */
export interface ConfigSnapshot {
  /** The object under `key`: the one held if it was loaded under this reading, else `load()`'s (held from then on). */
  read<T>(key: string, load: () => Promise<T>): Promise<T>;
}

/** What a process holds of one project, and the reading it was loaded under. */
interface Held {
  /** The project's count of changes (`ChangeCounts`), read before anything here was loaded. */
  count: number;
  /** This process's count of its own writes to the project at that time. */
  writes: number;
  expires: number;
  entries: Map<string, unknown>;
}

const UNCACHED: ConfigSnapshot = { read: (_key, load) => load() };

/**
 * Configuration that is read on every request and written rarely — agents, record schemas,
 * indexes, knowledge bases — held in memory per project as loaded objects, so that reading it
 * builds and runs no SQL. Every write of a project's configuration, once it is over and before it
 * is acknowledged, counts a change (`ChangeCounts`: in this process on the embedded profile, in
 * Redis across API processes on production); what is held is served only while the count reads
 * as it did before it was loaded, so a read never misses a write acknowledged before it began, on
 * any process. The count is read once per operation (`at`). When it cannot be read (Redis down),
 * nothing is held and every read goes to the database.
 *
 * Held objects are frozen: callers share them and must copy what they change.
 */
export class ConfigCache {
  private readonly projects = new Map<string, Held>();
  /** Writes per project made by this process: they invalidate here even when the shared count could not be bumped. */
  private readonly writes = new Map<string, number>();

  constructor(private readonly changes: ChangeCounts) {}

  /** The project's configuration as of now: one reading of its change count. */
  async at(projectId: string): Promise<ConfigSnapshot> {
    const writes = this.writes.get(projectId) ?? 0;
    const count = await this.changes.current(projectId);
    if (count === null) {
      // what is held may miss writes counted while the count could not be read
      this.projects.clear();
      return UNCACHED;
    }
    return { read: (key, load) => this.read(projectId, count, writes, key, load) };
  }

  /**
   * Runs a write of the project's configuration, then — whether it succeeded or not, since a
   * failed one may have changed rows — counts the change before returning. Reads that the caller
   * makes after the write must come after this.
   */
  async write<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.writes.set(projectId, (this.writes.get(projectId) ?? 0) + 1);
      this.projects.delete(projectId);
      await this.changes.bump([projectId]);
    }
  }

  private async read<T>(projectId: string, count: number, writes: number, key: string, load: () => Promise<T>): Promise<T> {
    const held = this.held(projectId, count, writes);
    if (held?.entries.has(key)) return held.entries.get(key) as T;
    const value = freeze(await load());
    this.keep(projectId, count, writes, key, value);
    return value;
  }

  /** What is held of the project, if it was loaded under this reading and is not past `staleAfterMs`. */
  private held(projectId: string, count: number, writes: number): Held | undefined {
    const held = this.projects.get(projectId);
    return held !== undefined && held.count === count && held.writes === writes && held.expires > Date.now() ? held : undefined;
  }

  private keep(projectId: string, count: number, writes: number, key: string, value: unknown): void {
    // a write of this process since the reading: the value may predate it
    if ((this.writes.get(projectId) ?? 0) !== writes) return;
    let target = this.held(projectId, count, writes);
    if (target === undefined) {
      target = { count, writes, expires: Date.now() + this.changes.staleAfterMs, entries: new Map() };
      this.projects.delete(projectId);
      this.projects.set(projectId, target);
      if (this.projects.size > MAX_PROJECTS) this.projects.delete(this.projects.keys().next().value as string);
    }
    target.entries.set(key, value);
    if (target.entries.size > MAX_ENTRIES) target.entries.delete(target.entries.keys().next().value as string);
  }
}

/** Freezes an object and everything in it. */
function freeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  }
  return value;
}
