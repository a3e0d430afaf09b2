import { expect } from 'chai';
import { PROFILE, startRuntime, unique, type TestRuntime } from '../helpers.js';
import { mem0Tenant } from '../mem0-client.js';

// mem0's structured_data_schema on add, through its own JavaScript client: the values the schema
// asks for are extracted from the messages (MEMORY_MODEL, `local` here) and carried by every
// memory the add stores, with infer false and true.

interface Mem0Memory {
  id: string;
  memory: string;
  event?: string;
  structuredData: Record<string, unknown> | null;
}
interface Mem0Client {
  add(messages: Array<{ role: string; content: string }>, options: Record<string, unknown>): Promise<{ results: Mem0Memory[] }>;
  get(id: string): Promise<Mem0Memory>;
}

/** A Pydantic model's `model_json_schema()`: Optional fields, an enum under $defs, and a nested model Cairn leaves null. */
const PROFILE_SCHEMA = {
  $defs: {
    Shift: { enum: ['day', 'night'], title: 'Shift', type: 'string' },
    Address: { properties: { street: { type: 'string' } }, type: 'object' },
  },
  properties: {
    full_name: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: "The person's full name" },
    occupation: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'Current job or occupation' },
    shift: { anyOf: [{ $ref: '#/$defs/Shift' }, { type: 'null' }], default: null },
    home: { anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }], default: null },
  },
  title: 'Profile',
  type: 'object',
};

describe(`mem0 structured_data_schema (${PROFILE})`, function () {
  this.timeout(60_000);
  let t: TestRuntime;
  let auth: string;
  let client: Mem0Client;
  let close: () => Promise<void>;

  before(async () => {
    t = await startRuntime();
    ({ auth, client, close } = await mem0Tenant<Mem0Client>(t));
  });
  after(async () => {
    await close?.();
    await t?.close();
  });

  const says = (texts: string[]) => texts.map((content) => ({ role: 'user', content }));

  it('extracts the values onto each memory the add stores, infer false: every field, null when not stated', async () => {
    const user = unique('ana');
    const added = await client.add(says(['My name is Ana Lopez.', 'I work as a nurse.', 'I work the night shift.']), { userId: user, infer: false, structuredDataSchema: PROFILE_SCHEMA });
    expect(added.results.map((m) => m.memory)).to.deep.equal(['My name is Ana Lopez.', 'I work as a nurse.', 'I work the night shift.']);
    const expected = { full_name: 'Ana Lopez', occupation: 'nurse', shift: 'night', home: null };
    for (const memory of added.results) {
      // mem0's client turns every answer's keys into camelCase, these too
      expect(memory.structuredData).to.deep.equal({ fullName: 'Ana Lopez', occupation: 'nurse', shift: 'night', home: null });
      // stored, not only answered, under the schema's own keys
      const raw = await t.http.get(`/v1/memories/${memory.id}/`).set('Authorization', auth);
      expect(raw.body.structured_data).to.deep.equal(expected);
    }
  });

  it('extracts with infer true onto the facts it adds; an add without a schema has none', async () => {
    const user = unique('ben');
    const added = await client.add(says(['My name is Ben Okafor and I work as a teacher.']), { userId: user, structuredDataSchema: PROFILE_SCHEMA });
    expect(added.results.length).to.be.greaterThan(0);
    for (const memory of added.results) expect(memory.structuredData).to.deep.include({ fullName: 'Ben Okafor', shift: null, home: null });
    const plain = await client.add(says(['I like tea.']), { userId: user, infer: false });
    expect((await client.get(plain.results[0]?.id as string)).structuredData).to.equal(null);
  });

  it('refuses a schema it cannot fill with a 400, and stores nothing', async () => {
    const user = unique('bad');
    for (const structured_data_schema of [{ type: 'object', properties: { home: PROFILE_SCHEMA.properties.home }, $defs: PROFILE_SCHEMA.$defs }, { type: 'string' }, {}]) {
      const res = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: says(['My name is Cy.']), user_id: user, infer: false, structured_data_schema });
      expect(res.status, JSON.stringify(structured_data_schema)).to.equal(400);
      expect(res.body.code).to.equal('invalid_schema');
    }
    expect((await t.http.post('/v3/memories/').set('Authorization', auth).send({ filters: { user_id: user } })).body.count).to.equal(0);
  });
});
