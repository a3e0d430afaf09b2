import { convert } from 'html-to-text';
import mammoth from 'mammoth';

/** What a document is, which decides how its text is read and how it is chunked. */
export const SOURCE_TYPES = ['text', 'markdown', 'html', 'pdf', 'docx'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
/** The source types JSON uploads may name (their content is text); files may be any. */
export const TEXT_SOURCE_TYPES = ['text', 'markdown', 'html'] as const;

/** Limits on documents, documented in the README. */
export const DOCUMENT_LIMITS = {
  /** Largest document, in bytes (upload or JSON content). */
  maxBytes: 10 * 1024 * 1024,
  /** Most documents in one knowledge base. */
  maxPerBase: 10_000,
  /**
   * Most characters of text in one document: a text or Markdown upload over it is refused (400),
   * any other document whose extracted text is over it ends `failed`. Never cut.
   */
  maxTextChars: 5_000_000,
} as const;

const EXTENSIONS: Record<string, SourceType> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
  docx: 'docx',
};

/** The source type of an uploaded file, from its extension (then its media type); null when unsupported. */
export function sourceTypeOf(filename: string, mimeType: string): SourceType | null {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  if (extension !== undefined && EXTENSIONS[extension] !== undefined) return EXTENSIONS[extension];
  const media = mimeType.toLowerCase().split(';')[0]?.trim();
  if (media === 'text/plain') return 'text';
  if (media === 'text/markdown') return 'markdown';
  if (media === 'text/html') return 'html';
  if (media === 'application/pdf') return 'pdf';
  if (media === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') return 'docx';
  return null;
}

/** A document whose text cannot be read or is over a limit: it ends `failed` with this message, and is not retried. */
export class UnreadableDocument extends Error {
  override name = 'UnreadableDocument';
}

/**
 * The text of a document: UTF-8 for text and Markdown, the visible text of HTML (html-to-text),
 * the text layer of a PDF (unpdf, pages separated by blank lines) and the paragraphs of a DOCX
 * (mammoth). Throws `UnreadableDocument` for a corrupt file, one without text, or one whose text
 * is over `DOCUMENT_LIMITS.maxTextChars`.
 */
export async function documentText(source: Buffer, type: SourceType): Promise<string> {
  let text: string;
  try {
    text = await read(source, type);
  } catch (err) {
    throw new UnreadableDocument(`The ${type} file could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  text = text.replace(/\r\n?/g, '\n').replaceAll('\u0000', '');
  if (text.trim() === '') {
    throw new UnreadableDocument(type === 'pdf' ? 'The PDF has no text layer (a scan needs OCR first).' : `The ${type} document holds no text.`);
  }
  if (text.length > DOCUMENT_LIMITS.maxTextChars) throw new UnreadableDocument(overLimit(text.length));
  return text;
}

/** Why a document of `chars` characters is refused. */
export function overLimit(chars: number): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  return `The document's text is ${n(chars)} characters, over the limit of ${n(DOCUMENT_LIMITS.maxTextChars)}; split it into smaller documents.`;
}

/**
 * The length in characters of a text or Markdown upload whose text is over
 * `DOCUMENT_LIMITS.maxTextChars` (counted as the worker will: CRLF line ends as one), or null
 * when it is within the limit or its text is known only once extracted (HTML, PDF, DOCX).
 */
export function uploadOverLimit(source: Buffer, type: SourceType): number | null {
  if (type !== 'text' && type !== 'markdown') return null;
  // UTF-8 never has fewer bytes than UTF-16 code units: only a large upload needs counting
  if (source.length <= DOCUMENT_LIMITS.maxTextChars) return null;
  let chars = source.toString('utf8').length;
  for (let at = source.indexOf('\r\n'); at !== -1; at = source.indexOf('\r\n', at + 2)) chars -= 1;
  return chars > DOCUMENT_LIMITS.maxTextChars ? chars : null;
}

async function read(source: Buffer, type: SourceType): Promise<string> {
  switch (type) {
    case 'text':
    case 'markdown':
      return new TextDecoder('utf-8', { fatal: true }).decode(source);
    case 'html':
      return convert(new TextDecoder('utf-8').decode(source), {
        wordwrap: false,
        selectors: [
          { selector: 'a', options: { ignoreHref: true } },
          { selector: 'img', format: 'skip' },
          ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
          { selector: 'table', options: { uppercaseHeaderCells: false } },
        ],
      });
    case 'pdf': {
      // imported on first use: pdf.js is large
      const { extractText, getDocumentProxy } = await import('unpdf');
      const pdf = await getDocumentProxy(new Uint8Array(source));
      const { text } = await extractText(pdf, { mergePages: false });
      return text.map((page) => page.trim()).join('\n\n');
    }
    case 'docx': {
      const { value } = await mammoth.extractRawText({ buffer: source });
      return value;
    }
  }
}
