import type { MemoryReembedding } from '../core/memory/reembedding.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.reembed`: moves a project's memories to the embedding model its setting names. */
export const memoryReembedJob =
  (reembedding: MemoryReembedding): JobHandler<'memory.reembed'> =>
  (payload, ctx) =>
    reembedding.run(payload.projectId, ctx);
