import type { MemoryExports } from '../core/memory/exports.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.export`: fills a mem0 memory export's schema from its memories; throws (and is retried) while the model is down. */
export const memoryExportJob =
  (exports: MemoryExports): JobHandler<'memory.export'> =>
  (payload) =>
    exports.run(payload.projectId, payload.exportId);
