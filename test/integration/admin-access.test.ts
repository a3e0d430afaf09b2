import { expect } from 'chai';
import type { Response } from 'supertest';
import { isProduction, PROFILE, startRuntime, unique, type TestRuntime } from '../helpers.js';

// The admin token's one failure limit, whichever way a client presents the token, and sign-out
// ending a session for good. On the production profile two API processes (runtimes sharing the
// database and the Redis prefix) stand in for a balancer's: what one counts or signs out, the
// other sees.

const ADMIN_TOKEN = 'admin-token-for-admin-access-0123456789';
const WRONG = 'not-the-admin-token-not-at-all';
/** The board's JSON: what a script (or the board's own fetches) asks for. */
const BOARD_API = isProduction ? '/admin/queues/api/queues' : '/admin/queues';
/** More tries than any limit allows: the form must have answered 429 long before. */
const MAX_TRIES = 100;

const basic = (password: string): string => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
const cookieOf = (res: Response): string => ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).map((c) => c.split(';')[0]).join('; ');

describe(`admin access (${PROFILE})`, function () {
  this.timeout(60_000);
  const started: TestRuntime[] = [];
  /** The API processes of one test: two sharing their state on production, one on embedded. */
  let apis: TestRuntime[];

  beforeEach(async () => {
    // a prefix of their own per test, so each test starts with no failures counted
    const env = { ADMIN_TOKEN, ...(isProduction ? { QUEUE_PREFIX: unique('adm').replace('-', '') } : {}) };
    const first = await startRuntime({ start: false, env });
    started.push(first);
    apis = [first];
    if (isProduction) {
      const second = await startRuntime({ start: false, env });
      started.push(second);
      apis.push(second);
    }
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((t) => t.close()));
  });

  const first = (): TestRuntime => apis[0] as TestRuntime;
  const last = (): TestRuntime => apis[apis.length - 1] as TestRuntime;

  /** Wrong tokens through the form until it answers 429; that answer. */
  async function exhaustForm(t: TestRuntime): Promise<Response> {
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const res = await t.http.post('/admin/sign-in').type('form').send({ token: WRONG });
      if (res.status === 429) return res;
      expect(res.status).to.equal(401);
    }
    throw new Error(`the sign-in form took ${MAX_TRIES} wrong tokens without answering 429`);
  }

  const expectLimited = (res: Response, what: string): void => {
    expect(res.status, what).to.equal(429);
    expect(Number(res.headers['retry-after']), `${what}: Retry-After`).to.be.within(1, 60);
  };

  it('answers every way of presenting the token 429 once the form is over the limit, the right token too', async () => {
    // signed in before the guesses: a session is not a guess, and stays open
    const session = cookieOf(await first().http.post('/admin/sign-in').type('form').send({ token: ADMIN_TOKEN }));
    expect(session).to.match(/^cairn_admin=/);

    expectLimited(await exhaustForm(first()), 'form');
    // on production, the other API process: the count is shared
    for (const t of apis) {
      for (const token of [WRONG, ADMIN_TOKEN]) {
        const kind = token === WRONG ? 'wrong' : 'right';
        expectLimited(await t.http.get('/admin/queues').set('Authorization', `Bearer ${token}`), `Bearer, ${kind} token`);
        expectLimited(await t.http.get(BOARD_API).set('Authorization', `Bearer ${token}`).set('Accept', 'application/json'), `Bearer to the board's API, ${kind} token`);
        expectLimited(await t.http.get('/admin/sign-in/basic').set('Authorization', basic(token)), `Basic, ${kind} token`);
        expectLimited(await t.http.get(BOARD_API).set('Authorization', basic(token)), `Basic to the board's API, ${kind} token`);
        expectLimited(await t.http.post('/admin/sign-in').type('form').send({ token }), `form, ${kind} token`);
      }
      expect((await t.http.get(BOARD_API).set('Cookie', session).set('Accept', 'application/json')).status, 'session').to.equal(200);
    }
  });

  it('counts wrong Bearer and Basic tokens against the same limit as the form', async () => {
    let limited: Response | undefined;
    for (let tries = 0; tries < MAX_TRIES && !limited; tries += 1) {
      // the guesses alternate between ways (and, on production, between processes)
      const t = apis[tries % apis.length] as TestRuntime;
      const res = tries % 2 === 0
        ? await t.http.get(BOARD_API).set('Authorization', `Bearer ${WRONG}`).set('Accept', 'application/json')
        : await t.http.get('/admin/sign-in/basic').set('Authorization', basic(WRONG));
      if (res.status === 429) limited = res;
      else expect(res.status).to.equal(401);
    }
    expect(limited, `${MAX_TRIES} wrong Bearer and Basic tokens without a 429`).not.to.equal(undefined);
    expectLimited(limited as Response, 'Bearer or Basic');
    const form = await last().http.post('/admin/sign-in').type('form').send({ token: ADMIN_TOKEN });
    expectLimited(form, 'form, right token');
    expect(form.headers['set-cookie']).to.equal(undefined);
  });

  it('refuses a session cookie copied before sign-out, and signs in again', async () => {
    const signIn = async (t: TestRuntime): Promise<string> => {
      const res = await t.http.post('/admin/sign-in').type('form').send({ token: ADMIN_TOKEN });
      expect(res.status).to.equal(303);
      return cookieOf(res);
    };
    const board = (t: TestRuntime, cookie: string) => t.http.get(BOARD_API).set('Cookie', cookie).set('Accept', 'application/json');

    const copied = await signIn(first());
    const otherBrowser = await signIn(first());
    for (const t of apis) expect((await board(t, copied)).status).to.equal(200);

    const out = await first().http.post('/admin/sign-out').set('Cookie', copied);
    expect(out.status).to.equal(302);
    expect(out.headers.location).to.equal('/admin/sign-in');

    for (const t of apis) {
      expect((await board(t, copied)).status, 'the copied cookie, API call').to.equal(401);
      const page = await t.http.get('/admin/queues').set('Cookie', copied).set('Accept', 'text/html');
      expect(page.status, 'the copied cookie, page load').to.equal(302);
      expect(page.headers.location).to.equal('/admin/sign-in');
      // signing out one browser leaves the others signed in
      expect((await board(t, otherBrowser)).status, 'another browser').to.equal(200);
    }
    // signing out again with the copy changes nothing
    expect((await last().http.get('/admin/sign-out').set('Cookie', copied)).status).to.equal(302);
    expect((await board(last(), copied)).status).to.equal(401);

    const fresh = await signIn(last());
    expect(fresh).not.to.equal(copied);
    for (const t of apis) expect((await board(t, fresh)).status, 'a new sign-in').to.equal(200);
  });
});
