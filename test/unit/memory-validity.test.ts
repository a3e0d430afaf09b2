import { expect } from 'chai';
import { successorsFirst, validIn } from '../../core/memory/validity.js';

describe('memory validity', () => {
  const row = (created_at: number, valid_from: number | null, valid_to: number | null) => ({ created_at, valid_from, valid_to });

  it('sees the facts valid now by default, those valid at as_of, or every version', () => {
    const current = row(10, null, null);
    const superseded = row(10, null, 50);
    const later = row(10, 50, null);
    expect([current, superseded, later].map(validIn())).to.deep.equal([true, false, true]);
    // as of 30: the fact before its supersession, not the text that began at 50
    expect([current, superseded, later].map(validIn({ asOf: 30 }))).to.deep.equal([true, true, false]);
    // validity ends at valid_to: at 50 the new text holds, not the old
    expect([superseded, later].map(validIn({ asOf: 50 }))).to.deep.equal([false, true]);
    // nothing said after as_of was true then
    expect(validIn({ asOf: 5 })(current)).to.equal(false);
    expect([current, superseded, later].map(validIn({ includeSuperseded: true }))).to.deep.equal([true, true, true]);
  });

  it('puts a superseded version after the memory that superseded it, keeping every other hit in place', () => {
    const hits = [
      { id: 'v1', superseded_by: 'm' },
      { id: 'a', superseded_by: null },
      { id: 'm', superseded_by: null },
      { id: 'v2', superseded_by: 'gone' },
      { id: 'b', superseded_by: null },
    ];
    expect(successorsFirst(hits).map((h) => h.id)).to.deep.equal(['a', 'm', 'v1', 'v2', 'b']);
    // a version whose memory comes first stays where it is
    expect(successorsFirst([hits[2], hits[0], hits[1]] as typeof hits).map((h) => h.id)).to.deep.equal(['m', 'v1', 'a']);
  });
});
