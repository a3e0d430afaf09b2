import type { RecordExtraction } from '../core/memory/record-extraction.js';
import type { JobHandler } from '../contracts/jobs/handlers.js';

/** `record.extract`: extracts (and, when complete, stores) a typed record for a waiting request. */
export const recordExtractJob =
  (extraction: RecordExtraction): JobHandler<'record.extract'> =>
  (payload) =>
    extraction.run(payload);
