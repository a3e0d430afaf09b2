import { chunkText } from './chunking.js';
import { documentText, UnreadableDocument, type SourceType } from './documents.js';

// The body of the document threads (`DocumentReader`): reading a file's text (HTML, PDF, DOCX
// parsers) and cutting it into chunks take seconds of CPU for a large document, which must not
// be spent on the event loop that answers HTTP requests.

/** One document to read and chunk. */
export interface ReadTask {
  source: Uint8Array;
  type: SourceType;
  size: number;
  overlap: number;
}

/** The extracted text and its chunks as offsets into it (cheap to hand across threads). */
export type ReadResult =
  | { ok: true; text: string; starts: Int32Array; ends: Int32Array; headings: Array<string | null> }
  | { ok: false; reason: string };

/** Reads and chunks one document; an unreadable one answers `ok: false` with the reason. */
export default async function read(task: ReadTask): Promise<ReadResult> {
  let text: string;
  try {
    text = await documentText(Buffer.from(task.source.buffer, task.source.byteOffset, task.source.byteLength), task.type);
  } catch (err) {
    if (err instanceof UnreadableDocument) return { ok: false, reason: err.message };
    throw err;
  }
  const chunks = chunkText(text, { size: task.size, overlap: task.overlap, markdown: task.type === 'markdown' });
  const starts = new Int32Array(chunks.length);
  const ends = new Int32Array(chunks.length);
  const headings = chunks.map((c, i) => {
    starts[i] = c.start;
    ends[i] = c.end;
    return c.heading;
  });
  return { ok: true, text, starts, ends, headings };
}
