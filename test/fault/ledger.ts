import fs from 'node:fs';
import { waitFor } from '../helpers.js';
import type { Stack } from './stack.js';

// The writes of one fault case and what became of them. Each write is a mem0 `add` (infer: false)
// under a user id of its own, so "searchable" has one meaning: a search filtered by that user finds
// that memory. What a client was told (acknowledged) is compared with what the database holds
// (stored, indexed) and with what search finds.

const WORDS = (
  'amber birch cedar delta ember fjord granite harbor island juniper kestrel lagoon meadow nectar ' +
  'orchard prairie quarry river saffron tundra umber valley willow yarrow zephyr basalt canyon dune'
).split(' ');

// named entities, so the entity index has something to keep consistent
const PEOPLE = ['Maya', 'Daniel', 'Priya', 'Kenji', 'Rosa', 'Omar'];
const PLACES = ['Porto', 'Lyon', 'Denver', 'Glasgow', 'Toronto'];

export interface Write {
  n: number;
  userId: string;
  text: string;
  /** The id the server acknowledged, when it did. */
  id?: string;
  /** HTTP status, or the connection error's code, when not acknowledged. */
  refused?: string;
}

export interface Tally {
  case: string;
  attempted: number;
  acknowledged: number;
  refused: number;
  stored: number;
  indexed: number;
  searchable: number;
  lost: number;
  duplicated: number;
  catchUpSeconds: number;
}

/** A stream of writes against a stack, at a bounded concurrency, recording every answer. */
export class Ledger {
  readonly writes: Write[] = [];
  private readonly run = Math.random().toString(36).slice(2, 8);

  constructor(private readonly stack: Stack) {}

  private make(n: number): Write {
    const words = [0, 1, 2, 3].map((i) => WORDS[(n * 7 + i * 13 + i * n) % WORDS.length]);
    const [who, where] = [PEOPLE[n % PEOPLE.length], PLACES[(n * 3) % PLACES.length]];
    return { n, userId: `u-${this.run}-${n}`, text: `Note ${n} of run ${this.run}: ${words.join(' ')} at ${n % 97} degrees, said ${who} in ${where}.` };
  }

  /** Sends `count` writes, `concurrency` at a time; a refused or unanswered write is recorded, never retried. */
  async write(count: number, concurrency = 4): Promise<void> {
    const start = this.writes.length;
    let next = start;
    const end = start + count;
    const lane = async (): Promise<void> => {
      while (next < end) {
        const write = this.make(next++);
        this.writes.push(write);
        try {
          const res = await this.stack
            .http()
            .post('/v3/memories/add/')
            .set('Authorization', this.stack.auth())
            .timeout({ response: 15_000, deadline: 20_000 })
            .send({ messages: [{ role: 'user', content: write.text }], user_id: write.userId, infer: false });
          if (res.status === 200 && res.body.results?.[0]?.id) write.id = res.body.results[0].id;
          else write.refused = String(res.status);
        } catch (err) {
          write.refused = (err as { code?: string }).code ?? 'error';
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
  }

  /** Writes continuously until `stop` resolves (at most `max` writes). */
  async writeUntil(stop: Promise<unknown>, max = 2_000, concurrency = 4): Promise<void> {
    let done = false;
    void stop.then(() => (done = true));
    while (!done && this.writes.length < max) await this.write(concurrency, concurrency);
  }

  /**
   * Changes the text of the first `count` acknowledged writes (a PUT each, `concurrency` at a time),
   * which supersedes the text each had; returns the ids whose update was acknowledged.
   */
  async update(count: number, concurrency = 4): Promise<string[]> {
    const targets = this.acknowledged().slice(0, count);
    const updated: string[] = [];
    const lane = async (): Promise<void> => {
      for (let write = targets.shift(); write !== undefined; write = targets.shift()) {
        const res = await this.stack
          .http()
          .put(`/v1/memories/${write.id as string}/`)
          .set('Authorization', this.stack.auth())
          .timeout({ response: 15_000, deadline: 20_000 })
          .send({ text: `${write.text} Later moved to Halifax with Ingrid.` })
          .catch(() => undefined);
        if (res?.status === 200) updated.push(write.id as string);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    return updated;
  }

  /**
   * What the entity index and validity should agree with, read from the database once everything is
   * indexed: memories of this run whose entity rows differ from what their text mentions, entity
   * rows of memories that do not exist, and updated memories without exactly one version valid up
   * to when the memory's text began.
   */
  async consistency(updated: string[], mentions: (text: string) => string[]): Promise<{ entityMismatches: string[]; orphanEntities: number; badChains: string[] }> {
    const rows: Array<{ id: string; memory: string; valid_from: number | string | null; superseded_by: string | null; valid_to: number | string | null }> = await this.stack
      .db('memories')
      .select('id', 'memory', 'valid_from', 'superseded_by', 'valid_to')
      .where('user_id', 'like', `u-${this.run}-%`);
    const entityRows: Array<{ memory_id: string; kind: string; entity_key: string }> = await this.stack
      .db('memory_entities')
      .select('memory_id', 'kind', 'entity_key')
      .where('user_id', 'like', `u-${this.run}-%`);
    const indexedAs = new Map<string, string[]>();
    for (const e of entityRows) indexedAs.set(e.memory_id, [...(indexedAs.get(e.memory_id) ?? []), `${e.kind}:${e.entity_key}`]);
    const ids = new Set(rows.map((r) => r.id));
    const entityMismatches = rows.filter((r) => JSON.stringify((indexedAs.get(r.id) ?? []).sort()) !== JSON.stringify(mentions(r.memory).sort())).map((r) => r.id);
    const orphanEntities = [...indexedAs.keys()].filter((id) => !ids.has(id)).length;
    const badChains = updated.filter((id) => {
      const memory = rows.find((r) => r.id === id);
      const versions = rows.filter((r) => r.superseded_by === id);
      return memory === undefined || versions.length !== 1 || Number(versions[0]?.valid_to) !== Number(memory.valid_from);
    });
    return { entityMismatches, orphanEntities, badChains };
  }

  acknowledged(): Write[] {
    return this.writes.filter((w) => w.id);
  }

  /**
   * Whether a dense search filtered by the write's user finds it (its vector is indexed; hybrid
   * search finds a write by its words the moment it is stored); `undefined` when search did not answer.
   */
  private async searchable(write: Write): Promise<boolean | undefined> {
    const res = await this.stack
      .http()
      .post('/v3/memories/search/')
      .set('Authorization', this.stack.auth())
      .timeout({ response: 10_000 })
      .send({ query: write.text, filters: { user_id: write.userId }, top_k: 5, mode: 'dense' })
      .catch(() => undefined);
    if (res?.status !== 200) return undefined;
    const ids: string[] = res.body.results.map((r: { id: string }) => r.id);
    if (new Set(ids).size !== ids.length) throw new Error(`search for ${write.userId} returned one memory twice: ${ids.join(', ')}`);
    return ids.includes(write.id as string);
  }

  /**
   * Searches for each write of `pending` (8 at a time) and removes those found. Stops at the first
   * search that does not answer, or at `deadline`: one pass must not outlast the wait it serves.
   */
  private async findSearchable(pending: Set<Write>, deadline: number): Promise<void> {
    const queue = [...pending];
    while (queue.length > 0 && Date.now() < deadline) {
      const batch = queue.splice(0, 8);
      const found = await Promise.all(batch.map((w) => this.searchable(w)));
      batch.forEach((w, i) => found[i] && pending.delete(w));
      if (found.includes(undefined)) return;
    }
  }

  /** Rows of this run's users: how many per user, and how many are indexed. */
  private async rows(): Promise<{ perUser: Map<string, number>; indexed: number }> {
    // the texts updates superseded are versions of their memory, not writes of their own
    const rows: Array<{ user_id: string; embedding_status: string }> = await this.stack
      .db('memories')
      .select('user_id', 'embedding_status')
      .where('user_id', 'like', `u-${this.run}-%`)
      .whereNull('superseded_by');
    const perUser = new Map<string, number>();
    for (const r of rows) perUser.set(r.user_id, (perUser.get(r.user_id) ?? 0) + 1);
    return { perUser, indexed: rows.filter((r) => r.embedding_status === 'indexed').length };
  }

  /**
   * Waits until every acknowledged write is stored, indexed and searchable (or `timeoutMs` passes),
   * then counts. `since` is when the fault ended: catch-up time is measured from it.
   */
  async settle(caseName: string, since: number, timeoutMs = 240_000): Promise<Tally> {
    const acked = this.acknowledged();
    const pending = new Set(acked);
    let catchUp = Number.NaN;
    try {
      await waitFor(
        async () => {
          const { indexed } = await this.rows();
          if (indexed < acked.length) return false;
          await this.findSearchable(pending, Date.now() + 30_000);
          return pending.size === 0;
        },
        { timeoutMs, intervalMs: 1_000, message: `${caseName}: every acknowledged write searchable` },
      );
      catchUp = (Date.now() - since) / 1000;
    } catch {
      // counted below: what is still missing is reported as lost
    }
    const { perUser, indexed } = await this.rows();
    await this.findSearchable(pending, Date.now() + 30_000);
    const searchable = acked.length - pending.size;
    const stored = acked.filter((w) => (perUser.get(w.userId) ?? 0) > 0).length;
    const duplicated = [...perUser.values()].reduce((sum, c) => sum + Math.max(0, c - 1), 0);
    const tally: Tally = {
      case: caseName,
      attempted: this.writes.length,
      acknowledged: acked.length,
      refused: this.writes.length - acked.length,
      stored,
      indexed,
      searchable,
      lost: acked.length - Math.min(stored, searchable),
      duplicated,
      catchUpSeconds: Math.round(catchUp * 10) / 10,
    };
    report(tally);
    return tally;
  }
}

/** Prints a case's row and appends it to FAULT_REPORT (a JSON-lines file) when set. */
function report(tally: Tally): void {
  process.stdout.write(`      ${JSON.stringify(tally)}\n`);
  if (process.env.FAULT_REPORT) fs.appendFileSync(process.env.FAULT_REPORT, `${JSON.stringify(tally)}\n`);
}
