import { expect } from 'chai';
import { eventTimeOf, shownMemories } from '../../core/memory/expiry.js';
import { queryFilters } from '../../api/mem0/query-filters.js';
import { loadConfig } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';

describe('mem0 memory expiration', () => {
  it('shows a memory through its expiration day (UTC) and hides it from the next; show_expired shows every one', () => {
    const on = (iso: string) => shownMemories(false, Date.parse(iso));
    const expiring = { expiration_date: '2030-01-31' };
    expect(on('2030-01-31T23:59:59.999Z')(expiring)).to.equal(true);
    expect(on('2030-02-01T00:00:00Z')(expiring)).to.equal(false);
    expect(on('2999-01-01T00:00:00Z')({ expiration_date: null })).to.equal(true);
    expect(shownMemories(true, Date.parse('2030-02-01T00:00:00Z'))(expiring)).to.equal(true);
  });

  it("reads update's timestamp as unix seconds or ISO 8601, UTC when it names no zone", () => {
    expect(eventTimeOf(1_500_000_000.5)).to.equal(1_500_000_000_500);
    expect(eventTimeOf('2020-02-29')).to.equal(Date.parse('2020-02-29T00:00:00Z'));
    expect(eventTimeOf('2020-02-29T12:00:00')).to.equal(Date.parse('2020-02-29T12:00:00Z'));
    expect(eventTimeOf('2020-02-29 12:00:00z')).to.equal(Date.parse('2020-02-29T12:00:00Z'));
    expect(eventTimeOf('2020-02-29T12:00:00+02:00')).to.equal(Date.parse('2020-02-29T10:00:00Z'));
  });

  it('MEMORY_EXPIRY_GRACE_DAYS defaults to 30 days', () => {
    expect(loadConfig({}).memoryExpiryGraceDays).to.equal(30);
    expect(loadConfig({ MEMORY_EXPIRY_GRACE_DAYS: '0' }).memoryExpiryGraceDays).to.equal(0);
  });
});

describe("delete_all's filters query parameter", () => {
  const refused = (text: string) => {
    try {
      queryFilters(text);
    } catch (err) {
      return err instanceof AppError ? err.status : err;
    }
    return 'accepted';
  };

  it("reads the dict's Python form, as httpx sends it, and JSON", () => {
    expect(queryFilters("{'user_id': 'alice'}")).to.deep.equal({ user_id: 'alice' });
    expect(queryFilters(`{'user_id': "o'neil", 'agent_id': 'caf\\xe9 \\u00e9'}`)).to.deep.equal({ user_id: "o'neil", agent_id: 'café é' });
    expect(queryFilters('{"run_id": "r\\"1"}')).to.deep.equal({ run_id: 'r"1' });
    expect(queryFilters('{}')).to.deep.equal({});
  });

  it('refuses anything but a flat object of entity ids with string values (400)', () => {
    for (const text of ["{'metadata': 'x'}", "{'user_id': 5}", "{'user_id': True}", "{'AND': [{'user_id': 'a'}]}", 'user_id=alice', "{'user_id': 'a'", "{'user_id': '\\q'}"]) {
      expect(refused(text), text).to.equal(400);
    }
  });
});
