import type { Memories } from '../core/memories.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.index`: derives (or removes) a memory's vector from its row. */
export const memoryIndexJob =
  (memories: Memories): JobHandler<'memory.index'> =>
  (payload, ctx) =>
    memories.index(payload.projectId, payload.memoryId, payload.revision, ctx);
