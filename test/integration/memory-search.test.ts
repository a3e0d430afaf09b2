import { expect } from 'chai';
import { newMemoryRow } from '../../core/memory/rows.js';
import { isProduction, newProject, PROFILE, startRuntime, tempDir, token, unique, waitFor, type TestRuntime } from '../helpers.js';

// Memory search as a user of mem0's API meets it: hybrid (dense + BM25 keyword + named time) by
// default, dense or keyword alone on request, over memories that carry an event time.

interface Memory {
  id: string;
  memory: string;
  created_at: string;
  updated_at: string;
  embedding_status: string;
}

interface Hit {
  id: string;
  memory: string;
  created_at: string;
  score: number;
}

/** mem0 calls of one project. */
function mem0(t: TestRuntime, key: string) {
  const auth = token(key);
  return {
    auth,
    async add(user: string, texts: string[], timestamp?: number): Promise<Memory[]> {
      const res = await t.http
        .post('/v3/memories/add/')
        .set('Authorization', auth)
        .send({ messages: texts.map((content) => ({ role: 'user', content })), user_id: user, infer: false, ...(timestamp === undefined ? {} : { timestamp }) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.results as Memory[];
    },
    async search(body: Record<string, unknown>): Promise<{ status: number; hits: Hit[]; body: Record<string, unknown> }> {
      const res = await t.http.post('/v3/memories/search/').set('Authorization', auth).send(body);
      return { status: res.status, hits: (res.body.results ?? []) as Hit[], body: res.body };
    },
    async indexed(ids: string[]): Promise<void> {
      await waitFor(
        async () => {
          for (const id of ids) {
            const res = await t.http.get(`/v1/memories/${id}/`).set('Authorization', auth);
            if (res.body.embedding_status !== 'indexed') return false;
          }
          return true;
        },
        { timeoutMs: 60_000, message: 'memories indexed' },
      );
    },
    async put(id: string, text: string): Promise<void> {
      const res = await t.http.put(`/v1/memories/${id}/`).set('Authorization', auth).send({ text });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    },
    async remove(id: string): Promise<void> {
      const res = await t.http.delete(`/v1/memories/${id}/`).set('Authorization', auth);
      expect(res.status).to.equal(200);
    },
  };
}

const ids = (hits: Hit[]): string[] => hits.map((h) => h.id);

describe(`memory search: hybrid, keyword and event time (${PROFILE})`, function () {
  this.timeout(120_000);
  let t: TestRuntime;
  let api: ReturnType<typeof mem0>;

  before(async () => {
    t = await startRuntime();
    api = mem0(t, (await newProject(t)).key);
  });

  after(async () => {
    await t.close();
  });

  it('finds a rare word that dense search ranks low, and a paraphrase that keyword search cannot, with both in hybrid', async () => {
    const user = unique('u');
    const texts = [
      'My router model is the Zyxel VMG8825 and it keeps dropping the connection at night',
      'I adopted a small grey kitten from the shelter last weekend',
      'We are repainting the kitchen a pale shade of green',
      'I have been learning to bake sourdough bread on Sundays',
      'My sister works as a nurse at the children’s hospital',
      'I am training for a half marathon in the autumn',
      'The neighbours’ dog barks whenever the postman comes',
      'I switched my phone plan to a cheaper provider',
    ];
    const added = await api.add(user, texts);
    await api.indexed(added.map((m) => m.id));
    const [router, kitten] = [added[0] as Memory, added[1] as Memory];

    // an exact model number: keyword search puts it first
    const code = await api.search({ query: 'VMG8825', filters: { user_id: user }, mode: 'keyword' });
    expect(code.status).to.equal(200);
    expect(ids(code.hits)).to.deep.equal([router.id]);
    const hybridCode = await api.search({ query: 'VMG8825', filters: { user_id: user } });
    expect(ids(hybridCode.hits)[0]).to.equal(router.id);

    // a paraphrase without a shared word: keyword finds nothing, dense and hybrid find it
    const paraphrase = 'new pet cat rescued';
    expect(ids((await api.search({ query: paraphrase, filters: { user_id: user }, mode: 'keyword' })).hits)).to.not.include(kitten.id);
    expect(ids((await api.search({ query: paraphrase, filters: { user_id: user }, mode: 'dense', top_k: 1 })).hits)).to.deep.equal([kitten.id]);
    expect(ids((await api.search({ query: paraphrase, filters: { user_id: user }, top_k: 3 })).hits)).to.include(kitten.id);

    // scores: hybrid's are fused and scaled to 1 for first in every list, best first
    const fused = (await api.search({ query: 'kitten adopted from the shelter', filters: { user_id: user } })).hits;
    expect(fused[0]?.id).to.equal(kitten.id);
    expect(fused[0]?.score).to.be.at.most(1).and.above(0);
    for (let i = 1; i < fused.length; i++) expect((fused[i] as Hit).score).to.be.at.most((fused[i - 1] as Hit).score);
  });

  it('keeps the keyword index in step with updates and deletes, and never crosses entities', async () => {
    const user = unique('u');
    const other = unique('u');
    const [memory] = await api.add(user, ['My favourite board game is Carcassonne']);
    const [theirs] = await api.add(other, ['I never liked Carcassonne much']);
    const keyword = async (query: string, who = user) => ids((await api.search({ query, filters: { user_id: who }, mode: 'keyword' })).hits);

    // searchable by its words as soon as the write is acknowledged, before any embedding
    expect(await keyword('carcassonne')).to.deep.equal([(memory as Memory).id]);
    expect(await keyword('carcassonne', other)).to.deep.equal([(theirs as Memory).id]);

    await api.put((memory as Memory).id, 'My favourite board game is now Terraforming Mars');
    expect(await keyword('carcassonne')).to.deep.equal([]);
    expect(await keyword('terraforming')).to.deep.equal([(memory as Memory).id]);

    await api.remove((memory as Memory).id);
    expect(await keyword('terraforming')).to.deep.equal([]);
    expect(await keyword('carcassonne', other)).to.deep.equal([(theirs as Memory).id]);
  });

  it('embeds a message of a conversation with the message before it, so a reply is found by what it answers', async () => {
    const chat = [
      'Guess what, I finally signed up for the bouldering gym by the river',
      'Oh nice, how often are you planning to go?',
      'Twice a week, Tuesdays and Fridays, with my brother',
    ];
    const filler = ['The soup yesterday was far too salty', 'My phone screen cracked again', 'We should repaint the fence this summer', 'The train was late twice this week'];
    const reply = async (user: string, added: Memory[]): Promise<{ rank: number; score: number }> => {
      await api.indexed(added.map((m) => m.id));
      const hits = (await api.search({ query: 'How often does the user go climbing?', filters: { user_id: user }, mode: 'dense', top_k: 7 })).hits;
      const rank = ids(hits).indexOf((added.find((m) => m.memory === chat[2]) as Memory).id);
      return { rank, score: (hits[rank] as Hit).score };
    };
    // one conversation, sent as one add call
    const together = unique('u');
    const inChat = await api.add(together, [...filler, ...chat]);
    // the same lines, each alone: days apart, so nothing is the context of anything
    const apart = unique('u');
    const alone: Memory[] = [];
    for (const [i, text] of [...filler, ...chat].entries()) alone.push(...(await api.add(apart, [text], 1_600_000_000 + i * 86_400)));
    const withContext = await reply(together, inChat);
    const withoutContext = await reply(apart, alone);
    const seen = `with its context: rank ${withContext.rank}, similarity ${withContext.score}; alone: rank ${withoutContext.rank}, similarity ${withoutContext.score}`;
    expect(withContext.rank, seen).to.be.within(0, 1);
    expect(withContext.score, seen).to.be.above(withoutContext.score + 0.05);
  });

  it('gives a reply the same vector whether the message before it was indexed first or beside it', async () => {
    const question = 'Which instrument did your daughter pick for the school band?';
    const answer = 'She chose the trumpet, practice starts in September';
    const similarity = async (user: string, added: Memory[]): Promise<number> => {
      await api.indexed(added.map((m) => m.id));
      const hits = (await api.search({ query: 'What does the daughter play in the band?', filters: { user_id: user }, mode: 'dense', top_k: 5 })).hits;
      const hit = hits.find((h) => h.memory === answer);
      expect(hit, JSON.stringify(hits)).to.not.equal(undefined);
      return (hit as Hit).score;
    };
    // the question indexed before the answer is written
    const first = unique('u');
    const asked = await api.add(first, [question]);
    await api.indexed(asked.map((m) => m.id));
    const afterIt = await similarity(first, await api.add(first, [answer]));
    // both in one add: indexed side by side, the question's embedding serving both
    const beside = unique('u');
    const together = await similarity(beside, await api.add(beside, [question, answer]));
    // the answer with no message before it
    const alone = unique('u');
    const withoutContext = await similarity(alone, await api.add(alone, [answer]));
    const seen = `after its question: ${afterIt}; beside it: ${together}; alone: ${withoutContext}`;
    expect(Math.abs(afterIt - together), seen).to.be.below(1e-4);
    expect(Math.abs(afterIt - withoutContext), seen).to.be.above(0.02);
  });

  it('finds the message before each of many concurrent messages of a conversation in one lookup, as one at a time would', async () => {
    const project = await newProject(t);
    const chat = mem0(t, project.key);
    const user = unique('u');
    // a conversation with messages at the same second, a gap longer than the context window, and
    // another user's messages between its own
    const at = [0, 10, 10, 10, 50, 4_000, 4_100, 4_100, 9_000, 9_001];
    const added: Memory[] = [];
    const others: Memory[] = [];
    const other = unique('other');
    for (const [i, offset] of at.entries()) {
      added.push(...(await chat.add(user, [`Line ${i} of the conversation`], 1_650_000_000 + offset)));
      others.push(...(await chat.add(i % 2 === 0 ? other : unique('other'), [`Another conversation, line ${i}`], 1_650_000_000 + offset)));
    }
    const repository = t.runtime.repositories.memories;
    const rows = await repository.getMany(project.projectId, added.map((m) => m.id));
    const byId = new Map(rows.map((row) => [row.id, row]));
    const ordered = added.map((m) => byId.get(m.id) as (typeof rows)[number]);
    const hourMs = 3_600_000;
    const oneByOne = await Promise.all(ordered.map((row) => repository.previousMessage(row, hourMs)));
    const together = await repository.previousMessages(ordered, hourMs);
    const some = await repository.previousMessages([ordered[9], ordered[2], ordered[6]] as typeof ordered, hourMs);
    const names = (found: Array<{ memory: string } | undefined>) => found.map((row) => row?.memory ?? null);
    expect(names(together)).to.deep.equal(names(oneByOne));
    expect(names(some)).to.deep.equal(names([oneByOne[9], oneByOne[2], oneByOne[6]]));
    // each line's predecessor is the line before it, except after the gaps (and the first)
    expect(names(together)).to.deep.equal([null, ...ordered.slice(0, 9).map((row) => row.memory)].map((text, i) => (i === 5 || i === 8 ? null : text)));
    // far more messages between two of them than they are: each looked up on its own
    await chat.add(user, Array.from({ length: 40 }, (_, i) => `A pasted list, item ${i}`), 1_650_000_000 + 4_050);
    const apart = [ordered[0], ordered[6], ordered[9]] as typeof ordered;
    const spread = await repository.previousMessages(apart, hourMs);
    expect(names(spread)).to.deep.equal(names(await Promise.all(apart.map((row) => repository.previousMessage(row, hourMs)))));
    expect([names(spread)[0], names(spread)[1]?.replace(/\d+$/, ''), names(spread)[2]]).to.deep.equal([null, 'A pasted list, item ', ordered[8]?.memory]);
    // many conversations at once (an import's writers each add to their own), interleaved
    const otherRows = await repository.getMany(project.projectId, others.map((m) => m.id));
    const mixed = [...otherRows.reverse(), ...ordered].sort((a, b) => (a.id < b.id ? 1 : -1));
    const mixedOneByOne = await Promise.all(mixed.map((row) => repository.previousMessage(row, hourMs)));
    expect(names(await repository.previousMessages(mixed, hourMs))).to.deep.equal(names(mixedOneByOne));
    // the other user's lines 2 and 4 follow lines 0 and 2 (6 and 8 come after gaps); each odd line is its conversation's only one
    expect(mixedOneByOne.filter((row) => row?.memory.startsWith('Another')).map((row) => row?.memory)).to.have.members(['Another conversation, line 0', 'Another conversation, line 2']);
    // more conversations with one message each than one statement looks up
    const many = [...Array.from({ length: 600 }, (_, k) => ({ ...(ordered[k % 10] as (typeof ordered)[number]), user_id: `nobody-${k}` })), ...mixed];
    const manyFound = await repository.previousMessages(many, hourMs);
    expect(manyFound.slice(0, 600).every((row) => row === undefined)).to.equal(true);
    expect(names(manyFound.slice(600))).to.deep.equal(names(mixedOneByOne));
  });

  it('ranks the one line that answers above small talk that is near every question (hubs), where dense search does not', async () => {
    const user = unique('u');
    const smallTalk = [
      'Why?', 'How’s your day going?', 'What did you have for dinner?', 'It’s like an oven in here', 'I get that', 'Why do they always do that',
      'Ha, classic', 'No idea, just one of those days', 'Traffic was a nightmare this morning', 'Did four loads of laundry today',
      'Kept waking up at 3am for no reason', 'Nothing happened but I was tired the whole time', 'Settle something for me, cats or dogs?',
      'Groceries, cleaning, the glamorous life', 'Ok but how was the food', 'What are you up to this weekend?',
    ];
    const answer = 'I joined the bouldering gym near the station, the one with the orange walls';
    // a chat export's lines, days apart so that no line is another's context
    const added: Memory[] = [];
    for (const [i, text] of [...smallTalk, answer].entries()) added.push(...(await api.add(user, [`Hugo: ${text}`], 1_650_000_000 + i * 86_400)));
    await api.indexed(added.map((m) => m.id));
    const answerId = (added.at(-1) as Memory).id;
    const query = { query: 'Which indoor sport did Hugo get into?', filters: { user_id: user }, top_k: 5 };
    const dense = (await api.search({ ...query, mode: 'dense' })).hits;
    const hybrid = (await api.search(query)).hits;
    const seen = `dense: ${dense.map((h) => h.memory).join(' | ')}; hybrid: ${hybrid.map((h) => h.memory).join(' | ')}`;
    expect(ids(dense).indexOf(answerId), seen).to.be.above(0);
    expect(ids(hybrid)[0], seen).to.equal(answerId);
    // no keyword hit (the name is on every line, the other words on none): first in the one list there is
    expect(hybrid[0]?.score).to.equal(1);
    // a deeper search (its lists past the 100 reordered, their vectors read by id) ranks the same
    const deep = (await api.search({ ...query, top_k: 30 })).hits;
    expect(ids(deep)[0], seen).to.equal(answerId);
    expect(ids(deep)).to.have.members(added.map((m) => m.id));
  });

  it('ranks what was told about a topic above the questions asked about it, which still come after', async () => {
    const user = unique('u');
    const questions = ['Caroline: Where do you like to go camping?', 'Caroline: Wow, Mel! What is your best camping memory?', 'Caroline: Did you go camping again this summer?'];
    const told = ['Melanie: We spent a weekend in a tent by the lake at Pinewood, the kids loved it', 'Melanie: Two nights in the mountains with the family, we slept under the stars'];
    // days apart so that no line is another's context
    const added: Memory[] = [];
    for (const [i, text] of [...questions, ...told].entries()) added.push(...(await api.add(user, [text], 1_650_000_000 + i * 86_400)));
    await api.indexed(added.map((m) => m.id));
    const toldIds = added.slice(questions.length).map((m) => m.id);
    const query = { query: 'Where did she go camping?', filters: { user_id: user }, top_k: 2 };
    const keyword = (await api.search({ ...query, mode: 'keyword' })).hits;
    const hybrid = (await api.search(query)).hits;
    const seen = `keyword: ${keyword.map((h) => h.memory).join(' | ')}; hybrid: ${hybrid.map((h) => h.memory).join(' | ')}`;
    // the questions share the query's word, what answers does not
    expect(ids(keyword).filter((id) => toldIds.includes(id)), seen).to.deep.equal([]);
    expect(ids(hybrid), seen).to.have.members(toldIds);
    const all = (await api.search({ ...query, top_k: 10 })).hits;
    expect(ids(all)).to.have.members(added.map((m) => m.id));
    expect(all.map((h) => h.score)).to.deep.equal([...all.map((h) => h.score)].sort((a, b) => b - a));
  });

  it('takes concurrent adds for one user (an importer sending turns in parallel) without a failed write', async () => {
    const user = unique('u');
    const statuses: number[] = [];
    // four importers, each sending its turns one call after another
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          const res = await t.http
            .post('/v3/memories/add/')
            .set('Authorization', api.auth)
            .send({ messages: [{ role: 'user', content: `Turn ${w}.${i}: we talked about the lighthouse trip` }], user_id: user, infer: false });
          statuses.push(res.status);
        }
      }),
    );
    expect(statuses.filter((s) => s !== 200), 'failed adds').to.deep.equal([]);
    const hits = (await api.search({ query: 'lighthouse', filters: { user_id: user }, mode: 'keyword', top_k: 100 })).hits;
    expect(hits).to.have.length(100);
  });

  it('stores the event time mem0 sends as timestamp, filters on it, and ranks the memories of a named month first', async () => {
    const user = unique('u');
    const may2023 = Date.UTC(2023, 4, 8, 14, 30) / 1000;
    const sept2023 = Date.UTC(2023, 8, 20, 9, 0) / 1000;
    const [inMay] = await api.add(user, ['We went hiking in the mountains with the kids'], may2023);
    const [inSept] = await api.add(user, ['We went hiking along the coast with the kids'], sept2023);
    const [now] = await api.add(user, ['We went hiking in the forest with the kids']);
    await api.indexed([inMay, inSept, now].map((m) => (m as Memory).id));

    expect((inMay as Memory).created_at).to.equal('2023-05-08T14:30:00.000Z');
    expect(Date.parse((now as Memory).created_at)).to.be.closeTo(Date.now(), 120_000);

    const spring = await api.search({ query: 'hiking', filters: { AND: [{ user_id: user }, { created_at: { gte: '2023-05-01', lt: '2023-06-01' } }] } });
    expect(ids(spring.hits)).to.deep.equal([(inMay as Memory).id]);
    expect(spring.hits[0]?.created_at).to.equal('2023-05-08T14:30:00.000Z');

    // the query names a month: its memories come first, whichever text is closest
    for (const [query, first] of [
      ['Where did we go hiking in May 2023?', inMay],
      ['What hike did we do in September 2023?', inSept],
    ] as const) {
      const hits = (await api.search({ query, filters: { user_id: user } })).hits;
      expect(hits[0]?.id, query).to.equal((first as Memory).id);
    }
  });

  it('applies threshold to the cosine similarity in every mode, and refuses an unknown mode', async () => {
    const user = unique('u');
    const added = await api.add(user, ['I drink green tea every morning', 'The car needs new winter tyres']);
    await api.indexed(added.map((m) => m.id));
    const query = 'green tea in the morning';
    const dense = (await api.search({ query, filters: { user_id: user }, mode: 'dense' })).hits;
    const best = (dense[0] as Hit).score;
    for (const mode of ['hybrid', 'dense', 'keyword']) {
      const strict = await api.search({ query, filters: { user_id: user }, mode, threshold: best - 0.01 });
      expect(strict.status).to.equal(200);
      expect(ids(strict.hits), mode).to.deep.equal([(added[0] as Memory).id]);
      expect((await api.search({ query, filters: { user_id: user }, mode, threshold: Math.min(1, best + 0.01) })).hits, mode).to.deep.equal([]);
    }
    const bad = await api.search({ query, filters: { user_id: user }, mode: 'sparse' });
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.be.a('string');
  });

  it('answers hybrid searches from the keyword side while the embedding model is missing; dense search says what is missing', async () => {
    const down = await startRuntime({ env: { LOCAL_MODEL_DIR: tempDir('cairn-no-model-') } });
    try {
      const other = mem0(down, (await newProject(down)).key);
      const user = unique('u');
      const [memory] = await other.add(user, ['The spare key is under the blue flower pot']);
      const hybrid = await other.search({ query: 'where is the spare key?', filters: { user_id: user } });
      expect(hybrid.status, JSON.stringify(hybrid.body)).to.equal(200);
      expect(ids(hybrid.hits)).to.deep.equal([(memory as Memory).id]);
      const dense = await other.search({ query: 'where is the spare key?', filters: { user_id: user }, mode: 'dense' });
      expect(dense.status).to.equal(400);
      expect(dense.body.code).to.equal('embed_model_unavailable');
    } finally {
      await down.close();
    }
  });

  it('keeps a whole-app keyword search over thousands of memories in step with this process\'s adds, updates and deletes', async () => {
    const { key, projectId } = await newProject(t);
    const app = mem0(t, key);
    const appId = unique('app');
    // an app with 6 000 memories already (stored as the memories' rows and keyword index are)
    const stored = await seedApp(t, projectId, appId, 6_000);
    const keyword = async (query: string) => ids((await app.search({ query, filters: { app_id: appId }, mode: 'keyword', top_k: 5 })).hits);
    const printers = await keyword('printer toner');
    expect(printers).to.have.length(5);
    const text = new Map(stored.map((m) => [m.id, m.memory]));
    expect(printers.map((id) => text.get(id)).every((memory) => memory?.includes('printer toner'))).to.equal(true);

    // a word no memory holds yet: the cached scope keeps its count (none) until the app changes
    expect(await keyword('zanzibar')).to.deep.equal([]);
    const res = await t.http
      .post('/v3/memories/add/')
      .set('Authorization', app.auth)
      .send({ messages: [{ role: 'user', content: 'The printer on floor three is called Zanzibar' }], user_id: unique('u'), app_id: appId, infer: false });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const added = (res.body.results as Memory[])[0] as Memory;
    // the app's scope read again (and kept) by another search first, then the new word asked for
    expect(await keyword('printer toner')).to.have.length(5);
    expect(await keyword('zanzibar')).to.deep.equal([added.id]);
    expect(await keyword('timbuktu zanzibar')).to.deep.equal([added.id]);
    await app.put(added.id, 'The printer on floor three is called Timbuktu');
    expect(await keyword('zanzibar')).to.deep.equal([]);
    expect(await keyword('timbuktu')).to.deep.equal([added.id]);
    await app.remove(added.id);
    expect(await keyword('timbuktu')).to.deep.equal([]);
  });

  if (isProduction) {
    it('gives every API process the same keyword index the moment a write is acknowledged', async () => {
      const second = await startRuntime({ role: 'api' });
      try {
        const { key } = await newProject(t);
        const writer = mem0(t, key);
        const reader = mem0(second, key);
        const user = unique('u');
        const words = Array.from({ length: 20 }, (_, i) => `Ticket QZ${1000 + i} is about the printer on floor ${i}`);
        const added = await writer.add(user, words);
        for (const [i, m] of added.entries()) {
          const hits = (await reader.search({ query: `QZ${1000 + i}`, filters: { user_id: user }, mode: 'keyword' })).hits;
          expect(ids(hits)).to.deep.equal([m.id]);
        }
      } finally {
        await second.close();
      }
    });

    it('shows a write through another API process to a whole-app keyword search at once, though that search keeps the app\'s postings in memory', async () => {
      // a second API process of the same deployment: same database, same Redis prefix
      const second = await startRuntime({ role: 'api', env: { QUEUE_PREFIX: t.env.QUEUE_PREFIX as string } });
      try {
        const { key, projectId } = await newProject(t);
        const appId = unique('app');
        await seedApp(t, projectId, appId, 6_000);
        const reader = mem0(second, key);
        // the reader's search caches the app's postings of both words...
        const search = async () => ids((await reader.search({ query: 'printer toner', filters: { app_id: appId }, mode: 'keyword', top_k: 1 })).hits);
        expect(await search()).to.have.length(1);
        // ...and a shorter memory holding both, written through the other process, comes first
        const res = await t.http
          .post('/v3/memories/add/')
          .set('Authorization', token(key))
          .send({ messages: [{ role: 'user', content: 'Printer toner' }], user_id: unique('u'), app_id: appId, infer: false });
        const added = (res.body.results as Memory[])[0] as Memory;
        expect(await search()).to.deep.equal([added.id]);
      } finally {
        await second.close();
      }
    });
  }
});

/**
 * Stores `count` memories of one app directly, as `add` stores them (rows and keyword index; no
 * vectors, which keyword search does not read), for scopes too large to build through the API in a test.
 */
async function seedApp(t: TestRuntime, projectId: string, appId: string, count: number): Promise<Array<{ id: string; memory: string }>> {
  const things = ['printer toner', 'coffee machine', 'parking permit', 'laptop charger', 'meeting room', 'expense report'];
  const rows = Array.from({ length: count }, (_, i) => ({
    ...newMemoryRow(projectId, { user_id: `u${i % 50}`, app_id: appId }, `Ticket ${i}: the ${things[i % things.length] as string} on floor ${i % 9} needs attention`),
    embedding_status: 'indexed' as const,
  }));
  await t.runtime.memories.importRows(rows);
  return rows;
}
