import type { MemoryIndexer } from '../core/memory/indexing.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.index`: derives (or removes) the vector of a memory, or of each memory one write touched, from its row. */
export const memoryIndexJob =
  (indexer: MemoryIndexer): JobHandler<'memory.index'> =>
  ({ projectId, memoryId, revision, more }, ctx) =>
    more === undefined ? indexer.index(projectId, memoryId, revision, ctx) : indexer.indexMany(projectId, [{ memoryId, revision }, ...more], ctx);
