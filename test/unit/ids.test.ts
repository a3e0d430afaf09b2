import { expect } from 'chai';
import { validate, version } from 'uuid';
import { newId } from '../../lib/time.js';

describe('ids', () => {
  it('are distinct UUIDv7s that sort in the order they were made, many in one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids.slice(0, 100)) {
      expect(validate(id)).to.equal(true);
      expect(version(id)).to.equal(7);
    }
    expect(ids.every((id, i) => i === 0 || (ids[i - 1] as string) < id)).to.equal(true);
  });

  it('carry the time they were made', () => {
    const before = Date.now();
    const id = newId();
    const msecs = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs).to.be.within(before, Date.now() + 1);
  });
});
