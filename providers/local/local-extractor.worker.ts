import type { ExtractionInput, ExtractionMessage, ExtractionSchema, FactCandidates } from '../extractor.js';
import { LocalExtractor } from './local.extractor.js';

/** One call of the local language model, run on a thread of `LocalExtractorThreads`. */
export type ExtractorTask =
  | { op: 'extract'; schema: ExtractionSchema; input: ExtractionInput }
  | { op: 'facts'; messages: readonly ExtractionMessage[] }
  | { op: 'decide'; facts: readonly FactCandidates[] };

const local = new LocalExtractor();

/** Runs one task on this thread (Piscina's entry point). */
export default function run(task: ExtractorTask): Promise<unknown> {
  switch (task.op) {
    case 'extract':
      return local.extract(task.schema, task.input);
    case 'facts':
      return local.facts(task.messages);
    case 'decide':
      return local.decide(task.facts);
  }
}
