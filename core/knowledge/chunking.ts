/** One chunk: a span of the document's extracted text, and the section it sits in. */
export interface Chunk {
  text: string;
  /** Offsets into the extracted text: `text === source.slice(start, end)`. */
  start: number;
  end: number;
  /** The heading path of the chunk's section (`Install > Linux`), when the document has headings. */
  heading: string | null;
}

export interface ChunkOptions {
  /** Largest chunk, in characters. */
  size: number;
  /** Characters of the previous chunk's end repeated at the start of the next, within a section. */
  overlap: number;
  /** Markdown: `#` headings start sections and name them. */
  markdown: boolean;
}

/** A sentence (or a piece of an over-long one) with where it sits in the structure. */
interface Unit {
  start: number;
  end: number;
  /** First unit of a paragraph: the preferred place to end a chunk. */
  paragraph: boolean;
  /** First unit of a section (a heading line): always starts a chunk. */
  section: boolean;
  heading: string | null;
}

const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/;
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Cuts extracted text into chunks that respect its structure: a chunk never crosses a heading,
 * ends at a paragraph or sentence boundary when it can, and is cut between words only when one
 * sentence is longer than `size`. Consecutive chunks of one section overlap by up to `overlap`
 * characters of whole sentences. Whitespace-only text gives no chunks.
 */
export function chunkText(source: string, options: ChunkOptions): Chunk[] {
  const units = unitsOf(source, options);
  const chunks: Chunk[] = [];
  let first = 0;
  while (first < units.length) {
    let last = first;
    const startAt = (units[first] as Unit).start;
    let best = first;
    while (last + 1 < units.length) {
      const next = units[last + 1] as Unit;
      if (next.section || next.end - startAt > options.size) break;
      last += 1;
      best = last;
    }
    // prefer ending where a paragraph ends, if that keeps at least half the chunk
    if (last + 1 < units.length && !(units[last + 1] as Unit).paragraph && !(units[last + 1] as Unit).section) {
      for (let i = last; i > first; i -= 1) {
        if ((units[i + 1] as Unit).paragraph && (units[i] as Unit).end - startAt >= options.size / 2) {
          best = i;
          break;
        }
      }
    }
    const end = (units[best] as Unit).end;
    chunks.push({ text: source.slice(startAt, end), start: startAt, end, heading: (units[first] as Unit).heading });
    if (best + 1 >= units.length) break;
    // the next chunk starts with the last sentences of this one, unless a section starts there
    const fresh = best + 1;
    let next = fresh;
    if (!(units[fresh] as Unit).section && options.overlap > 0) {
      while (next - 1 > first && end - (units[next - 1] as Unit).start <= options.overlap && !(units[next - 1] as Unit).section) next -= 1;
      // no overlap when it would leave no room for anything new
      if ((units[fresh] as Unit).end - (units[next] as Unit).start > options.size) next = fresh;
    }
    first = next;
  }
  return chunks;
}

function unitsOf(source: string, options: ChunkOptions): Unit[] {
  const units: Unit[] = [];
  const path: string[] = [];
  let heading: string | null = null;
  // paragraphs: runs of non-blank lines; in Markdown a heading line is a paragraph of its own
  const lines = /[^\n]*(?:\n|$)/g;
  let paragraph: { start: number; end: number } | null = null;
  const flush = (): void => {
    if (paragraph === null) return;
    sentences(source, paragraph.start, paragraph.end, options.size, units, heading);
    paragraph = null;
  };
  for (let match = lines.exec(source); match !== null && match[0] !== ''; match = lines.exec(source)) {
    const line = match[0];
    const start = match.index;
    const end = start + line.replace(/\s+$/, '').length;
    const h = options.markdown ? HEADING.exec(line.trim()) : null;
    if (h !== null) {
      flush();
      const level = (h[1] as string).length;
      path.length = Math.min(path.length, level - 1);
      path[level - 1] = (h[2] as string).trim();
      heading = path.filter(Boolean).join(' > ');
      const lead = start + line.indexOf('#');
      units.push({ start: lead, end, paragraph: true, section: true, heading });
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (paragraph === null) paragraph = { start: start + (line.length - line.trimStart().length), end };
    else paragraph.end = end;
  }
  flush();
  return units;
}

/** The sentences of one paragraph, over-long ones cut between words into pieces of at most `size`. */
function sentences(source: string, from: number, to: number, size: number, units: Unit[], heading: string | null): void {
  let firstOfParagraph = true;
  for (const { segment, index } of segmenter.segment(source.slice(from, to))) {
    const trimmed = segment.trimEnd();
    if (trimmed.trim() === '') continue;
    let start = from + index + (trimmed.length - trimmed.trimStart().length);
    const end = from + index + trimmed.length;
    while (end - start > size) {
      const window = source.slice(start, start + size);
      const cut = window.lastIndexOf(' ');
      const pieceEnd = start + (cut > size / 2 ? cut : size);
      units.push({ start, end: pieceEnd, paragraph: firstOfParagraph, section: false, heading });
      firstOfParagraph = false;
      start = pieceEnd;
      while (start < end && /\s/.test(source[start] as string)) start += 1;
    }
    if (end > start) units.push({ start, end, paragraph: firstOfParagraph, section: false, heading });
    firstOfParagraph = false;
  }
}
