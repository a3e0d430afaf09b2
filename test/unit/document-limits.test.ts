import { expect } from 'chai';
import { DOCUMENT_LIMITS, uploadOverLimit } from '../../core/knowledge/documents.js';

describe('document text limit at upload', () => {
  const max = DOCUMENT_LIMITS.maxTextChars;

  it('counts the characters of text and Markdown as they will be read, CRLF as one', () => {
    expect(uploadOverLimit(Buffer.from('a'.repeat(max)), 'text')).to.equal(null);
    expect(uploadOverLimit(Buffer.from('a'.repeat(max + 1)), 'markdown')).to.equal(max + 1);
    // one character more than the limit in bytes, but the CRLF is read as one line end
    expect(uploadOverLimit(Buffer.from(`${'a'.repeat(max - 1)}\r\n`), 'text')).to.equal(null);
    expect(uploadOverLimit(Buffer.from(`${'a'.repeat(max)}\r\n`), 'text')).to.equal(max + 1);
  });

  it('counts characters, not bytes, so text in other scripts gets the same limit', () => {
    // 2 bytes each in UTF-8: over the limit in bytes, within it in characters
    expect(uploadOverLimit(Buffer.from('é'.repeat(max / 2 + 1)), 'text')).to.equal(null);
    expect(uploadOverLimit(Buffer.from('é'.repeat(max + 1)), 'text')).to.equal(max + 1);
  });

  it('leaves HTML, PDF and DOCX to the worker, which knows their text only once extracted', () => {
    const big = Buffer.from('a'.repeat(max + 1));
    for (const type of ['html', 'pdf', 'docx'] as const) expect(uploadOverLimit(big, type)).to.equal(null);
  });
});
