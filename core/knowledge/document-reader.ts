import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { siblingModule } from '../../lib/modules.js';
import type { Chunk } from './chunking.js';
import { UnreadableDocument, type SourceType } from './documents.js';
import type { ReadResult, ReadTask } from './document.worker.js';

/** Linux nice steps the document threads give up, so the thread answering requests runs first. */
const NICE_INCREMENT = 10;
/** An idle document thread ends after this long (it holds the parsers' memory). */
const IDLE_MS = 30_000;
/**
 * Heap of a document thread. A file that needs more to be read (a DOCX or PDF that inflates far
 * beyond its 10 MB) ends that thread, not the process, and the document ends `failed`.
 */
const HEAP_MB = 1024;
/**
 * How long reading and chunking one document may take. A crafted file that sends a parser into an
 * endless loop would otherwise hold a thread, and a slot of the documents queue, for good.
 */
const READ_TIMEOUT_MS = 10 * 60_000;

/**
 * Reads documents' text and cuts it into chunks on worker threads (`document.worker.ts`), so a
 * large PDF, HTML page or text file never holds the event loop that answers requests. Threads
 * start on demand (at most one per core but one) and end when idle; `close()` ends them for good.
 */
export class DocumentReader {
  private pool: Piscina<ReadTask, ReadResult> | null = null;
  private closed = false;

  /**
   * The document's text and its chunks (`chunkText` with these options). Throws
   * `UnreadableDocument` for a corrupt file, one without text, or one over the text limit.
   */
  async read(source: Buffer, type: SourceType, options: { size: number; overlap: number }): Promise<{ text: string; chunks: Chunk[] }> {
    if (this.closed) throw new Error('The document reader was closed.');
    if (this.pool === null) {
      this.pool = new Piscina<ReadTask, ReadResult>({
        filename: fileURLToPath(siblingModule(import.meta.url, 'document.worker')),
        minThreads: 0,
        maxThreads: Math.max(1, os.availableParallelism() - 1),
        idleTimeout: IDLE_MS,
        niceIncrement: NICE_INCREMENT,
        resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
      });
      // a thread that dies between tasks is replaced; unheard, the pool's error would end the process
      this.pool.on('error', () => undefined);
    }
    // a copy of exactly the document's bytes, handed over to the thread rather than cloned
    const bytes = new Uint8Array(source.length);
    bytes.set(source);
    let result: ReadResult;
    try {
      result = await this.pool.run(
        { source: bytes, type, size: options.size, overlap: options.overlap },
        { transferList: [bytes.buffer], signal: AbortSignal.timeout(READ_TIMEOUT_MS) },
      );
    } catch (err) {
      if ((err as { name?: unknown }).name === 'AbortError') {
        throw new UnreadableDocument(`The ${type} file could not be read within ${READ_TIMEOUT_MS / 60_000} minutes; split it into smaller documents.`);
      }
      if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new UnreadableDocument(`The ${type} file needs more than ${HEAP_MB} MB of memory to be read; split it into smaller documents.`);
      }
      throw err;
    }
    if (!result.ok) throw new UnreadableDocument(result.reason);
    const { text, starts, ends, headings } = result;
    const chunks: Chunk[] = headings.map((heading, i) => {
      const start = starts[i] as number;
      const end = ends[i] as number;
      return { text: text.slice(start, end), start, end, heading };
    });
    return { text, chunks };
  }

  /** Ends the threads; documents being read are rejected (their jobs run again later). */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}
