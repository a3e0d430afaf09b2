import type { RecordExtraction } from '../core/extract.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `record.extract`: extracts (and, when complete, stores) a typed record for a waiting request. */
export const recordExtractJob =
  (extraction: RecordExtraction): JobHandler<'record.extract'> =>
  (payload) =>
    extraction.run(payload);

/** `memory.infer`: picks the facts out of a conversation and adds them (ADD/UPDATE/DELETE/NOOP) for a waiting mem0 add. */
export const memoryInferJob =
  (extraction: RecordExtraction): JobHandler<'memory.infer'> =>
  (payload) =>
    extraction.runInfer(payload);
