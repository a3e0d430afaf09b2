import type { MemoryRow } from '../../db/repositories/memories.repository.js';
import type { OutboxTransaction } from '../../db/transactional-outbox.js';

/**
 * What one memory write did, told to every subscriber inside the transaction that writes it: what
 * a subscriber writes commits or rolls back with the memory, as the outbox's jobs do.
 * - `added`: new memories (one add, a batch, a typed record).
 * - `updated`: a memory's new content (`row`), with its text before.
 * - `superseded`: the text an update replaced, kept as a version of its own (`by`: the memory).
 * - `ended`: a memory whose validity a decision ended (it stays, readable as of a time).
 * - `deleted`: memories gone for good (a user's delete, retention), each followed by a
 *   `forgotten` for every superseded version deleted with it (or past the versions kept).
 */
export type MemoryWriteEvent =
  | { kind: 'added'; projectId: string; rows: MemoryRow[] }
  | { kind: 'updated'; projectId: string; row: MemoryRow; previous: MemoryRow }
  | { kind: 'superseded'; projectId: string; version: MemoryRow; by: string }
  | { kind: 'ended'; projectId: string; row: MemoryRow }
  | { kind: 'deleted'; projectId: string; rows: MemoryRow[] }
  | { kind: 'forgotten'; projectId: string; version: MemoryRow };

/** Something that reacts to memory writes in their transaction (the webhooks, the entity index). */
export interface MemoryWriteSubscriber {
  onMemoryWrite(tx: OutboxTransaction, event: MemoryWriteEvent): Promise<void>;
}

/** The memory-write event seam: every subscriber, in order, in the writing transaction. */
export class MemoryWriteEvents {
  private readonly subscribers: MemoryWriteSubscriber[] = [];

  subscribe(subscriber: MemoryWriteSubscriber): void {
    this.subscribers.push(subscriber);
  }

  async emit(tx: OutboxTransaction, event: MemoryWriteEvent): Promise<void> {
    for (const subscriber of this.subscribers) await subscriber.onMemoryWrite(tx, event);
  }
}
