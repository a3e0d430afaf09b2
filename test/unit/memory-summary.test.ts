import { expect } from 'chai';
import { summarize, SUMMARY_MAX_CHARS, SUMMARY_MAX_MEMORIES } from '../../core/memory/summary.js';

describe('mem0 summary (deterministic)', () => {
  it('states each memory once as a sentence, newest first, and counts them', () => {
    const summary = summarize([{ memory: 'Moved to Porto' }, { memory: 'I drink  green tea.' }, { memory: 'moved to porto.' }, { memory: 'Is it raining?' }]);
    expect(summary).to.deep.equal({ summary: 'Moved to Porto. I drink green tea. Is it raining?', memory_count: 4 });
  });

  it('leaves out memories marked VERY_NEGATIVE, keeps the rest of the feedback', () => {
    const summary = summarize([
      { memory: 'Wrong fact', feedback: 'VERY_NEGATIVE' },
      { memory: 'Dull fact', feedback: 'NEGATIVE' },
      { memory: 'Good fact', feedback: 'POSITIVE' },
    ]);
    expect(summary).to.deep.equal({ summary: 'Dull fact. Good fact.', memory_count: 2 });
  });

  it('is empty with no memories', () => {
    expect(summarize([])).to.deep.equal({ summary: '', memory_count: 0 });
  });

  it('stops at its limits and says how many more there are', () => {
    const many = Array.from({ length: SUMMARY_MAX_MEMORIES + 5 }, (_, i) => ({ memory: `Fact number ${i}` }));
    const summary = summarize(many);
    expect(summary.memory_count).to.equal(SUMMARY_MAX_MEMORIES + 5);
    expect(summary.summary).to.match(/^Fact number 0\. /).and.match(/Fact number 49\. \(and 5 more\)$/);

    const long = summarize([{ memory: 'x'.repeat(SUMMARY_MAX_CHARS * 2) }, { memory: 'Short one' }]);
    expect(long.summary).to.have.length.below(SUMMARY_MAX_CHARS + 20).and.match(/… \(and 1 more\)$/);
  });
});
