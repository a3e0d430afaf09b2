import { expect } from 'chai';
import { namedTime } from '../../core/memory/signals.js';
import { queryTerms, termCounts } from '../../contracts/memory-terms.js';
import { lessAsking, lessHubs, mostlyAsks } from '../../core/ranking.js';

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
    // the written-out forms of a day
    const june5 = { start: Date.UTC(2022, 5, 4), end: Date.UTC(2022, 5, 7) };
    expect(namedTime('the meeting on June 5th, 2022 at 5pm')).to.deep.equal(june5);
    expect(namedTime('what happened 2022-06-05')).to.deep.equal(june5);
    expect(namedTime('what happened on 06/05/2022')).to.deep.equal(june5);
    expect(namedTime('what happened on 2022/06/05')).to.deep.equal(june5);
    expect(namedTime('what happened in 2022 June')).to.deep.equal({ start: Date.UTC(2022, 5, 1), end: Date.UTC(2022, 6, 1) });
  });
});

describe('memory search: less weight on hubs (lessHubs)', () => {
  // unit vectors at an angle in the plane of the first two axes, spread over the others by `extra`
  const at = (deg: number, extra: number[] = []): number[] => [Math.cos((deg * Math.PI) / 180), Math.sin((deg * Math.PI) / 180), ...extra];
  const hit = (id: string, score: number, values?: number[]) => ({ id, score, ...(values ? { values } : {}) });

  it('puts a candidate close to the query but alone above a closer one that sits among many like it', () => {
    // eleven generic lines bunched together, each a little nearer the query than the answer
    const generic = Array.from({ length: 11 }, (_, i) => hit(`generic-${i}`, 0.62, at(10 + i * 0.5, [0.3])));
    const answer = hit('answer', 0.55, at(80, [0]));
    const ranked = lessHubs([...generic, answer]);
    expect(ranked[0]?.id).to.equal('answer');
    // the reported score stays the cosine the store gave; the corrected one says why
    expect(ranked[0]?.score).to.equal(0.55);
    expect(ranked[0]?.corrected).to.be.greaterThan(ranked[1]?.corrected as number);
    expect(ranked.map((h) => h.id).sort()).to.deep.equal([...generic, answer].map((h) => h.id).sort());
  });

  it('keeps the order of candidates equally alone, and of one candidate, and puts those without vectors last', () => {
    const spread = [hit('a', 0.9, at(0)), hit('b', 0.8, at(120)), hit('c', 0.7, at(240))];
    expect(lessHubs(spread).map((h) => h.id)).to.deep.equal(['a', 'b', 'c']);
    expect(lessHubs([hit('only', 0.4, at(0))]).map((h) => [h.id, h.corrected])).to.deep.equal([['only', 0.4]]);
    expect(lessHubs([hit('bare', 0.99), ...spread]).map((h) => h.id)).to.deep.equal(['a', 'b', 'c', 'bare']);
  });
});

describe('memory search: less weight on what mostly asks (mostlyAsks, lessAsking)', () => {
  it('tells a question from a line that tells something and ends with one', () => {
    expect(mostlyAsks('Cool! What did it look like?')).to.equal(true);
    expect(mostlyAsks('Caroline: Wow, Mel! What is your best camping memory?')).to.equal(true);
    expect(mostlyAsks('Nadia: Not yet, is it worth it?')).to.equal(true);
    expect(mostlyAsks('Kenji: 今日は何を食べた？')).to.equal(true);
    expect(mostlyAsks('I went to the support group yesterday, it was so powerful. How about you?')).to.equal(false);
    expect(mostlyAsks('Wow! Did you see that band? [shares a photo of a crowd in front of a stage at night]')).to.equal(false);
    expect(mostlyAsks('Kenji: Back from Kyoto! We walked through the bamboo grove at sunrise')).to.equal(false);
    expect(mostlyAsks('')).to.equal(false);
  });

  it('ranks a question below what answers it when it was first by less than half its score', () => {
    const asks = new Set(['question', 'other-question']);
    const ranked = lessAsking(
      [
        { id: 'question', score: 1 },
        { id: 'answer', score: 0.6 },
        { id: 'other-question', score: 0.5 },
        { id: 'small-talk', score: 0.4 },
      ],
      (id) => asks.has(id),
    );
    expect(ranked.map((h) => [h.id, h.score])).to.deep.equal([
      ['answer', 0.6],
      ['question', 0.5],
      ['small-talk', 0.4],
      ['other-question', 0.25],
    ]);
  });

  it('keeps the order of what tells, and of equal scores', () => {
    const ranked = lessAsking(
      [
        { id: 'a', score: 0.9 },
        { id: 'b', score: 0.5 },
        { id: 'c', score: 0.5 },
      ],
      () => false,
    );
    expect(ranked.map((h) => h.id)).to.deep.equal(['a', 'b', 'c']);
  });
});
