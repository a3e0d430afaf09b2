import { expect } from 'chai';
import fc from 'fast-check';
import { chunkText } from '../../core/knowledge/chunking.js';
import { keywordTerm, queryTerms } from '../../core/knowledge/keyword.js';
import { sourceTypeOf } from '../../core/knowledge/documents.js';

const GUIDE = `# Guide

Intro paragraph one. It has two sentences.

## Install

Run the installer. Then restart the machine. Then check the logs for errors.

Second paragraph here with more words to fill the chunk up.

## Use

Open the app.`;

describe('chunking', () => {
  it('never crosses a heading, names each chunk\'s section, and overlaps whole sentences within a section', () => {
    const chunks = chunkText(GUIDE, { size: 120, overlap: 40, markdown: true });
    expect(chunks.map((c) => c.heading)).to.deep.equal(['Guide', 'Guide > Install', 'Guide > Install', 'Guide > Use']);
    expect(chunks[1]?.text).to.equal('## Install\n\nRun the installer. Then restart the machine. Then check the logs for errors.');
    expect(chunks[2]?.text.startsWith('Then check the logs for errors.'), 'the last sentence repeats').to.equal(true);
    expect(chunks[3]?.text).to.equal('## Use\n\nOpen the app.');
    for (const c of chunks) expect(GUIDE.slice(c.start, c.end)).to.equal(c.text);
  });

  it('reads "#" as text outside Markdown, and cuts an over-long sentence between words', () => {
    expect(chunkText('# not a heading\n\nplain', { size: 100, overlap: 0, markdown: false }).map((c) => c.heading)).to.deep.equal([null]);
    const long = `${'word '.repeat(100)}end.`;
    const chunks = chunkText(long, { size: 60, overlap: 0, markdown: false });
    expect(chunks.length).to.be.greaterThan(5);
    for (const c of chunks) {
      expect(c.text.length).to.be.at.most(60);
      expect(c.text.startsWith(' ') || c.text.endsWith(' ')).to.equal(false);
    }
  });

  it('covers all the text with spans of at most size, in order, for any input', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('# Head', '## Sub', '', 'A short sentence.', 'Another one!', 'Is it?'), fc.lorem({ maxCount: 30 })), { maxLength: 40 }),
        fc.integer({ min: 40, max: 400 }),
        fc.boolean(),
        (lines, size, markdown) => {
          const text = lines.join('\n');
          const chunks = chunkText(text, { size, overlap: Math.floor(size / 4), markdown });
          let previous = -1;
          for (const c of chunks) {
            expect(text.slice(c.start, c.end)).to.equal(c.text);
            expect(c.end - c.start).to.be.at.most(size);
            expect(c.start, 'in order, each one further on').to.be.greaterThan(previous);
            previous = c.start;
          }
          // every word of the text is in some chunk
          for (const match of text.matchAll(/\S+/g)) {
            expect(chunks.some((c) => match.index >= c.start && match.index + match[0].length <= c.end), `"${match[0]}" is in a chunk`).to.equal(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('keyword terms and document types', () => {
  it('drops stop words and folds plurals', () => {
    expect(queryTerms('What are the API rate limits for keys?')).to.deep.equal(['api', 'rate', 'limit', 'key']);
    expect(keywordTerm('Policies')).to.equal('policy');
    expect(keywordTerm('status')).to.equal('status');
  });

  it('knows a document type by extension, then by media type', () => {
    expect(sourceTypeOf('a.PDF', 'application/octet-stream')).to.equal('pdf');
    expect(sourceTypeOf('notes', 'text/markdown; charset=utf-8')).to.equal('markdown');
    expect(sourceTypeOf('report.docx', '')).to.equal('docx');
    expect(sourceTypeOf('tool.exe', 'application/x-msdownload')).to.equal(null);
  });
});
