import type { MemoryInference } from '../core/memory/inference.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `memory.infer`: picks the facts out of a conversation and adds them (ADD/UPDATE/DELETE/NOOP) for a waiting mem0 add. */
export const memoryInferJob =
  (inference: MemoryInference): JobHandler<'memory.infer'> =>
  (payload) =>
    inference.runInfer(payload);
