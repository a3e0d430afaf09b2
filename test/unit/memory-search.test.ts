import { expect } from 'chai';
import { namedTime } from '../../core/memory/signals.js';
import { queryTerms, termCounts } from '../../contracts/memory-terms.js';

describe('memory search: keyword terms and the named time', () => {
  it('stems English words, folds possessives, and drops conversational stop words, keeping names and numbers', () => {
    expect(queryTerms("When did Caroline's dogs start painting in 2023?")).to.deep.equal(['carolin', 'dog', 'start', 'paint', '2023']);
    expect(queryTerms('I’m really going, yeah')).to.deep.equal([]);
    const { counts, length } = termCounts('Kenji: the VMG8825 router, the VMG8825!');
    expect([...counts]).to.deep.equal([['kenji', 1], ['vmg8825', 2], ['router', 1]]);
    expect(length).to.equal(4);
    expect(queryTerms('Zürich café 東京')).to.deep.equal(['zürich', 'café', '東京']);
  });

  it('reads the day, month or year a query names with its year, and nothing from relative dates', () => {
    expect(namedTime('What did Caroline do in May 2023?')).to.deep.equal({ start: Date.UTC(2023, 4, 1), end: Date.UTC(2023, 5, 1) });
    expect(namedTime('What happened on 8 May 2023')).to.deep.equal({ start: Date.UTC(2023, 4, 7), end: Date.UTC(2023, 4, 10) });
    expect(namedTime('where did he travel in 2022')).to.deep.equal({ start: Date.UTC(2022, 0, 1), end: Date.UTC(2023, 0, 1) });
    expect(namedTime('What did she buy last week?')).to.equal(null);
    expect(namedTime('Which book did she read in March?')).to.equal(null);
    expect(namedTime('When did Melanie paint a sunrise?')).to.equal(null);
  });
});
