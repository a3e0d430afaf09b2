import { expect } from 'chai';
import { newProject, PROFILE, startRuntime, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// The entity index: who and what an owner's memories mention, read from each memory's text when it
// is indexed (no language model), listed per owner, and used to narrow lists and searches.

interface Entity {
  name: string;
  key: string;
  kind: string;
  count: number;
  first_seen: string;
  last_seen: string;
}

const unix = (date: string) => Date.parse(`${date}T12:00:00Z`) / 1000;

describe(`memory entity index (${PROFILE})`, function () {
  this.timeout(180_000);
  let t: TestRuntime;
  let auth: string;

  const post = async (path: string, body: Record<string, unknown>, status = 200, as = auth) => {
    const res = await t.http.post(path).set('Authorization', as).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const add = async (user_id: string, content: string, date: string) =>
    ((await post('/v3/memories/add/', { messages: [{ role: 'user', content }], user_id, infer: false, timestamp: unix(date) })).results as Array<{ id: string }>)[0] as { id: string };
  const entities = async (user_id: string, extra: Record<string, unknown> = {}, as = auth) => (await post('/v3/memories/entities/', { filters: { user_id }, ...extra }, 200, as)).results as Entity[];
  const indexed = (user_id: string) =>
    waitFor(async () => ((await post('/v3/memories/', { filters: { user_id }, include_superseded: true })).results as Array<{ embedding_status: string }>).every((m) => m.embedding_status === 'indexed'), {
      timeoutMs: 60_000,
      message: `memories of ${user_id} indexed`,
    });
  const named = (list: Entity[]) => list.map((e) => [e.kind, e.key, e.count]);

  before(async () => {
    t = await startRuntime();
    auth = token((await newProject(t)).key);
  });
  after(async () => {
    await t.close();
  });

  it("lists the people, places and organisations an owner's memories mention, with counts and first and last times", async () => {
    const user = unique('maya');
    await add(user, 'We finally moved to Porto last week!', '2024-03-02');
    await add(user, 'Daniel starts at Lumen Health on Monday.', '2024-03-05');
    await add(user, 'Porto in the rain is still lovely. Daniel disagrees.', '2024-04-20');
    await add(user, 'haha same', '2024-04-21');
    await indexed(user);

    const listed = await entities(user);
    expect(named(listed)).to.deep.include.members([
      ['place', 'porto', 2],
      ['person', 'daniel', 2],
      ['organization', 'lumen health', 1],
    ]);
    const porto = listed.find((e) => e.key === 'porto') as Entity;
    expect(porto).to.include({ name: 'Porto', first_seen: new Date(unix('2024-03-02') * 1000).toISOString(), last_seen: new Date(unix('2024-04-20') * 1000).toISOString() });
    expect(named(await entities(user, { kind: 'person' })).map(([kind]) => kind)).to.satisfy((kinds: string[]) => kinds.length > 0 && kinds.every((k) => k === 'person'));

    // the memories that mention one: listed and searched, the name matched whatever its case
    const mentioning = (await post('/v3/memories/', { filters: { user_id: user }, entity: 'porto' })).results as Array<{ memory: string }>;
    expect(mentioning.map((m) => m.memory).sort()).to.deep.equal(['Porto in the rain is still lovely. Daniel disagrees.', 'We finally moved to Porto last week!']);
    const found = (await post('/v3/memories/search/', { query: 'new job', filters: { user_id: user }, entity: 'Daniel' })).results as Array<{ memory: string }>;
    expect(found.map((m) => m.memory)).to.have.members(['Daniel starts at Lumen Health on Monday.', 'Porto in the rain is still lovely. Daniel disagrees.']);
  });

  it('follows changes: a new text is indexed anew, a deleted memory leaves, and owners and projects stay apart', async () => {
    const user = unique('omar');
    const memory = await add(user, 'Priya booked a trip to Lisbon.', '2024-05-01');
    await indexed(user);
    expect(named(await entities(user))).to.deep.include.members([['place', 'lisbon', 1]]);

    const put = await t.http.put(`/v1/memories/${memory.id}/`).set('Authorization', auth).send({ text: 'Priya booked a trip to Kraków.' });
    expect(put.status).to.equal(200);
    await indexed(user);
    const now = named(await entities(user));
    expect(now, 'the current text').to.deep.include.members([['place', 'kraków', 1]]);
    expect(now.map(([, key]) => key), 'the superseded text is not a fact valid now').to.not.include('lisbon');
    // the superseded version still mentions Lisbon: found as of before the change
    const then = (await post('/v3/memories/', { filters: { user_id: user }, entity: 'Lisbon', include_superseded: true })).results as Array<{ memory: string }>;
    expect(then.map((m) => m.memory)).to.deep.equal(['Priya booked a trip to Lisbon.']);

    expect(await entities(unique('nobody'))).to.deep.equal([]);
    const other = token((await newProject(t)).key);
    expect(await entities(user, {}, other), "another project sees none of this project's entities").to.deep.equal([]);

    expect((await t.http.delete(`/v1/memories/${memory.id}/`).set('Authorization', auth)).status).to.equal(200);
    expect(await entities(user)).to.deep.equal([]);
  });

  it('refuses a listing without an owner, or with a kind it does not know, with a 400', async () => {
    for (const body of [{ filters: {} }, { filters: { user_id: 'a' }, kind: 'animal' }, { filters: { user_id: 'a' }, limit: 0 }]) {
      const res = await t.http.post('/v3/memories/entities/').set('Authorization', auth).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
  });
});
