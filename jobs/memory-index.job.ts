import type { MemoryIndexer } from '../core/memory/indexing.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.index`: derives (or removes) a memory's vector from its row. */
export const memoryIndexJob =
  (indexer: MemoryIndexer): JobHandler<'memory.index'> =>
  (payload, ctx) =>
    indexer.index(payload.projectId, payload.memoryId, payload.revision, ctx);
