import { expect } from 'chai';
import { checkDecisions, decideByModel } from '../../providers/decisions.js';
import type { Candidate, Decision } from '../../providers/extractor.js';
import { decideByRules, NEAR_DUPLICATE } from '../../providers/local/decision-rules.js';

// The add decisions of mem0's infer step: the local model's rules, and how a remote model's
// answer is checked. Similarities are given as the local embedding model measures them.

const memory = (id: string, text: string, similarity = 0.5): Candidate => ({ id, text, similarity });
const decide = (fact: string, ...candidates: Candidate[]): Decision => decideByRules({ fact, candidates });

describe('add decisions: local rules', () => {
  it('adds a fact nothing known resembles', () => {
    expect(decide('I play chess')).to.deep.equal({ event: 'ADD', text: 'I play chess' });
    expect(decide('I play chess', memory('m1', 'I play tennis', 0.67))).to.deep.equal({ event: 'ADD', text: 'I play chess' });
  });

  it('knows a near duplicate (NOOP), unless a number or the polarity differs', () => {
    expect(decide('I like salty food', memory('m1', 'I prefer salty food', 0.94))).to.deep.equal({ event: 'NOOP', targetId: 'm1' });
    expect(decide('I like salty food', memory('m1', 'I prefer salty food', NEAR_DUPLICATE - 0.01)).event).to.equal('ADD');
    expect(decide('I have 3 cats', memory('m1', 'I have 2 cats', 0.95)).event).to.equal('ADD');
  });

  it('supersedes the value of an attribute the user has one of (UPDATE), and knows the same value (NOOP)', () => {
    expect(decide('I moved to Porto', memory('m1', 'I live in Lisbon', 0.6))).to.deep.equal({ event: 'UPDATE', targetId: 'm1', text: 'I moved to Porto' });
    expect(decide('I moved to Lyon last year', memory('m1', 'Lives in Lyon', 0.73))).to.deep.equal({ event: 'NOOP', targetId: 'm1' });
    expect(decide('I work at Globex', memory('m1', 'I work at Acme', 0.51))).to.deep.equal({ event: 'UPDATE', targetId: 'm1', text: 'I work at Globex' });
    expect(decide('My favourite colour is green', memory('m1', 'My favourite colour is blue', 0.86), memory('m2', 'My favourite food is sushi', 0.42))).to.deep.equal({
      event: 'UPDATE',
      targetId: 'm1',
      text: 'My favourite colour is green',
    });
    expect(decide("I'm 31 years old", memory('m1', 'I am 30 years old', 0.94)).event).to.equal('UPDATE');
    expect(decide('My name is Ana', memory('m1', "My name's Anna", 0.8)).event).to.equal('UPDATE');
  });

  it('does not take another person\'s attribute, or a different thing, for the user\'s', () => {
    expect(decide('I live in Porto', memory('m1', 'My sister lives in Lisbon', 0.7)).event).to.equal('ADD');
    expect(decide('My sister is in Paris', memory('m1', 'My sister is a doctor', 0.39)).event).to.equal('ADD');
    expect(decide('My birthday is May 4', memory('m1', 'My birthday is May 3', 0.95)).event).to.equal('UPDATE');
  });

  it('deletes what a retraction takes back, and adds a retraction of nothing known', () => {
    expect(decide('I no longer live in Lisbon', memory('m1', 'I live in Lisbon', 0.84))).to.deep.equal({ event: 'DELETE', targetId: 'm1' });
    expect(decide("I don't eat meat anymore", memory('m1', 'I eat meat', 0.77))).to.deep.equal({ event: 'DELETE', targetId: 'm1' });
    expect(decide("I'm not vegetarian any more", memory('m1', 'I am vegetarian', 0.8))).to.deep.equal({ event: 'DELETE', targetId: 'm1' });
    expect(decide("I don't work at Acme anymore", memory('m1', 'I work at Acme as an engineer', 0.8))).to.deep.equal({ event: 'DELETE', targetId: 'm1' });
    expect(decide('I no longer live in Lisbon', memory('m1', 'My sister lives in Lisbon', 0.8)).event).to.equal('ADD');
    expect(decide('I no longer play golf', memory('m1', 'I play chess', 0.5))).to.deep.equal({ event: 'ADD', text: 'I no longer play golf' });
  });

  it('forgets on request, and has nothing to do when nothing matches', () => {
    expect(decide('Forget that I play chess', memory('m2', 'I play tennis', 0.6), memory('m1', 'I play chess every weekend', 0.8))).to.deep.equal({ event: 'DELETE', targetId: 'm1' });
    expect(decide('Please forget that I play chess', memory('m2', 'I play tennis', 0.6))).to.deep.equal({ event: 'NOOP' });
  });

  it('updates a memory the fact negates, or that negates the fact', () => {
    expect(decide("I don't like jazz", memory('m1', 'I like jazz', 0.85))).to.deep.equal({ event: 'UPDATE', targetId: 'm1', text: "I don't like jazz" });
    expect(decide('I like jazz', memory('m1', 'I never liked jazz', 0.8)).event).to.equal('ADD');
    expect(decide('I like jazz', memory('m1', "I don't like jazz", 0.85))).to.deep.equal({ event: 'UPDATE', targetId: 'm1', text: 'I like jazz' });
  });
});

describe('add decisions: a remote model\'s answer', () => {
  const facts = ['Moved to Porto', 'Plays chess', 'Is vegan'];
  const ids = new Map([
    ['0', 'uuid-lisbon'],
    ['1', 'uuid-chess'],
  ]);

  it('maps short ids back and keeps valid entries', () => {
    const decisions = checkDecisions(
      {
        memory: [
          { fact: 0, event: 'UPDATE', id: '0', text: 'Lives in Porto', old_memory: 'Lives in Lisbon' },
          { fact: '1', event: 'none', id: 1 },
          { fact: 2, event: 'ADD', text: ' Is   vegan ' },
        ],
      },
      facts,
      ids,
    );
    expect(decisions).to.deep.equal([
      { event: 'UPDATE', targetId: 'uuid-lisbon', text: 'Lives in Porto' },
      { event: 'NOOP', targetId: 'uuid-chess' },
      { event: 'ADD', text: 'Is vegan' },
    ]);
  });

  it('adds a fact whose entry names an unknown id, is missing, or is malformed; never drops one', () => {
    const decisions = checkDecisions(
      {
        memory: [
          { fact: 0, event: 'DELETE', id: 'b9f1c2d4-0000-4000-8000-000000000000' },
          { fact: 1, event: 'FORGET', id: '1' },
          { fact: 7, event: 'ADD', text: 'Out of range' },
          'junk',
        ],
      },
      facts,
      ids,
    );
    expect(decisions).to.deep.equal(facts.map((text) => ({ event: 'ADD', text })));
    for (const raw of [null, {}, { memory: 'x' }, []]) expect(checkDecisions(raw, facts, ids)).to.deep.equal(facts.map((text) => ({ event: 'ADD', text })));
  });

  it('keeps the first valid entry of a fact', () => {
    const decisions = checkDecisions(
      {
        memory: [
          { fact: 0, event: 'DELETE', id: '0' },
          { fact: 0, event: 'ADD', text: 'x' },
        ],
      },
      ['Left Lisbon'],
      ids,
    );
    expect(decisions).to.deep.equal([{ event: 'DELETE', targetId: 'uuid-lisbon' }]);
  });

  it('shows each memory once under a short id, and asks nothing when there is nothing to compare with', async () => {
    const asked: string[] = [];
    const decisions = await decideByModel(
      [
        { fact: 'Moved to Porto', candidates: [memory('uuid-lisbon', 'Lives in Lisbon'), memory('uuid-chess', 'Plays chess')] },
        { fact: 'Plays chess on Sundays', candidates: [memory('uuid-chess', 'Plays chess')] },
      ],
      (_system, user) => {
        asked.push(user);
        return Promise.resolve({ memory: [{ fact: 1, event: 'UPDATE', id: '1', text: 'Plays chess on Sundays' }] });
      },
    );
    expect(asked[0]).to.include('[{"id":"0","text":"Lives in Lisbon"},{"id":"1","text":"Plays chess"}]');
    expect(asked[0]).not.to.include('uuid');
    expect(decisions).to.deep.equal([
      { event: 'ADD', text: 'Moved to Porto' },
      { event: 'UPDATE', targetId: 'uuid-chess', text: 'Plays chess on Sundays' },
    ]);
    const none = await decideByModel([{ fact: 'Is vegan', candidates: [] }], () => Promise.reject(new Error('not called')));
    expect(none).to.deep.equal([{ event: 'ADD', text: 'Is vegan' }]);
  });
});
