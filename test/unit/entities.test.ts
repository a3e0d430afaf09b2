import { expect } from 'chai';
import { ENTITY_LIMIT, entitiesOf, type MemoryEntity } from '../../core/memory/entities.js';

const pairs = (entities: MemoryEntity[]): string[] => entities.map((e) => `${e.kind}:${e.key}`);

describe('entities of a memory', () => {
  it('finds the people, places, organisations and dates of a chat line, not its speaker', () => {
    const found = pairs(entitiesOf('Maya: We finally moved to Porto last week, Daniel starts at Lumen Health on Monday'));
    expect(found).to.include.members(['place:porto', 'person:daniel', 'organization:lumen health', 'date:last week', 'date:monday']);
    expect(found).not.to.include('person:maya');
  });

  it('finds names the lexicon does not know from the words around them', () => {
    const found = pairs(entitiesOf('Hiroshi flew to Nairobi on 12 May with Priya and Olúwaseun'));
    expect(found).to.include.members(['person:hiroshi', 'place:nairobi', 'date:12 may', 'person:priya', 'person:olúwaseun']);
  });

  it('names a product by its model number', () => {
    expect(pairs(entitiesOf('Wei: my phone died so I am getting an iPhone 15 on Saturday'))).to.include.members(['product:iphone 15', 'date:saturday']);
  });

  it('finds known cities and companies in lower-case chat', () => {
    expect(pairs(entitiesOf('omg just landed in tokyo, meeting the google folks'))).to.include.members(['place:tokyo', 'organization:google']);
  });

  it('does not take a capitalised word opening a sentence for a name', () => {
    expect(pairs(entitiesOf('Coffee with Aditi. Honestly the best day. Gardening keeps me sane.'))).to.deep.equal(['person:aditi']);
    expect(entitiesOf('I prefer tea over coffee, always have')).to.deep.equal([]);
  });

  it('keys a name as two mentions share it: case, spaces, a leading "the" and a possessive ignored', () => {
    expect(entitiesOf("Dinner at Olivia's parents went well")).to.deep.include({ name: 'Olivia', key: 'olivia', kind: 'person' });
    expect(entitiesOf('Daniel starts at Lumen   Health')).to.deep.include({ name: 'Lumen   Health', key: 'lumen health', kind: 'organization' });
    expect(entitiesOf('We live in The Hague now').map((e) => e.key)).to.include('hague');
  });

  it('takes no pronoun or chat interjection for a name, however it is capitalised', () => {
    for (const line of ['I’m so tired today', "I'm back!", 'Heyy how was it', 'Hiii', 'Gotta run, Lol', "We'll see"]) {
      expect(entitiesOf(line).filter((e) => e.kind !== 'date'), line).to.deep.equal([]);
    }
    expect(entitiesOf('I’m meeting Priya in Kraków').map((e) => e.key)).to.include.members(['priya', 'kraków']);
  });

  it('gives each name and kind once, as first written', () => {
    const found = entitiesOf('Anna met Anna and ANNA in Lisbon, then lisbon again with Anna.');
    expect(found.filter((e) => e.key === 'anna')).to.have.length(1);
    expect(found.find((e) => e.key === 'anna')?.name).to.equal('Anna');
  });

  it('returns nothing for text without names and never throws on hostile input', () => {
    const hostile = ['', '   ', '😀🎉🔥', '\u0000\u0007\u001b[31m\u009b', 'a'.repeat(8192), 'Word '.repeat(3000), ':::', 'Maya:', '\ud800', '<script>alert(1)</script>'];
    for (const text of hostile) {
      const found = entitiesOf(text);
      expect(found).to.be.an('array');
      expect(found.length).to.be.at.most(ENTITY_LIMIT);
    }
    expect(entitiesOf('\u0000\u0007')).to.deep.equal([]);
  });

  it('reads only the start of a long memory and returns at most 32 entities', () => {
    const names = Array.from({ length: 200 }, (_, i) => `Person${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}ova`);
    const crowded = entitiesOf(`Met ${names.join(' and ')} in Lisbon.`);
    expect(crowded).to.have.length(ENTITY_LIMIT);
    const late = entitiesOf(`${'nothing to see here. '.repeat(500)}We moved to Porto.`);
    expect(late.map((e) => e.key)).not.to.include('porto');
  });
});
