import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { exportSPKI, SignJWT } from 'jose';
import type { Response } from 'supertest';
import { JWKS_COOLDOWN_MS } from '../../core/registry/identity.js';
import { newProject, PROFILE, startRuntime, token as apiKeyHeader, unique, type TestRuntime } from '../helpers.js';
import { newKey, TestIssuer } from '../oidc-issuer.js';

const REGISTRY_CODES = ['unauthenticated', 'forbidden', 'not_found', 'invalid_argument', 'conflict', 'unavailable'];

/** Every refusal on a registry path: this status, and a body of exactly `{error: {code, message}}`. */
function expectError(res: Response, status: number, code: string, message?: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body).to.have.all.keys('error');
  expect(res.body.error).to.have.all.keys('code', 'message');
  expect(res.body.error.code).to.equal(code);
  expect(REGISTRY_CODES).to.include(code);
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  if (message) expect(res.body.error.message).to.match(message);
}

/** Canonical JSON computed here, independently of the server: sorted keys through a replacer. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

const VERSION_KEYS = [
  'id',
  'project_id',
  'owner',
  'project',
  'version',
  'spec_digest',
  'status',
  'release_notes',
  'published_by',
  'published_at',
  'deprecated',
  'deprecated_at',
  'deprecation_reason',
];

describe(`registry (${PROFILE})`, function () {
  this.timeout(60_000);
  let issuer: TestIssuer;
  let t: TestRuntime;

  before(async () => {
    issuer = await TestIssuer.start();
    t = await startRuntime({ env: { OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience } });
  });
  after(async () => {
    await t?.close();
    await issuer?.close();
  });

  /** `Authorization` value for a user signed in at the test issuer. */
  const as = async (username: string | null, options: Parameters<TestIssuer['token']>[1] = {}) => TestIssuer.bearer(await issuer.token(username, options));
  const spec = (extra: Record<string, unknown> = {}) => ({ name: 'app', agents: [{ name: 'support', model: 'local' }], ...extra });
  const publish = async (auth: string, owner: string, project: string, version: string, body: Record<string, unknown> = {}) =>
    t.http.post(`/projects/${owner}/${project}/versions`).set('Authorization', auth).send({ version, spec: spec(), ...body });
  /** A fresh project of a fresh owner, with version 1.0.0 published. */
  const ownedProject = async () => {
    const owner = unique('alice');
    const project = unique('app');
    const auth = await as(owner);
    const res = await publish(auth, owner, project, '1.0.0');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { owner, project, auth, base: `/projects/${owner}/${project}` };
  };

  describe('identity', () => {
    it('refuses a missing header, a project API key, another scheme and a token that is not a JWT (401)', async () => {
      const { base } = await ownedProject();
      const { key } = await newProject(t);
      const cases: Array<[string | null, RegExp]> = [
        [null, /Missing credentials.*Bearer <ID_TOKEN>/],
        [apiKeyHeader(key), /API keys/],
        ['Basic dXNlcjpwYXNz', /Malformed/],
        ['Bearer', /Malformed/],
        ['Bearer not-a-jwt', /not a valid/],
        [`Bearer ${b64url({ alg: 'RS256' })}.e30.c2ln`, /./],
      ];
      for (const [header, message] of cases) {
        const req = t.http.get(`${base}/versions`);
        const res = header === null ? await req : await req.set('Authorization', header);
        expectError(res, 401, 'unauthenticated', message);
        expect(res.headers['www-authenticate'], String(header)).to.match(/^Bearer realm="cairn-registry"/);
      }
      // writes are refused the same way, before the body is looked at
      expectError(await t.http.post(`${base}/versions`).set('Authorization', apiKeyHeader(key)).send({ version: '9.0.0', spec: {} }), 401, 'unauthenticated');
    });

    it('refuses a token signed with a key the issuer does not publish', async () => {
      const { base } = await ownedProject();
      const foreign = await newKey('RS256');
      // the kid of a published key, the signature of another: the signature check fails
      const impostor = await issuer.token(unique('mallory'), { key: foreign, kid: issuer.rsa.kid });
      expectError(await t.http.get(`${base}/versions`).set('Authorization', TestIssuer.bearer(impostor)), 401, 'unauthenticated', /signature/);
      // a kid the issuer never published
      const stranger = await issuer.token(unique('mallory'), { key: foreign });
      expectError(await t.http.get(`${base}/versions`).set('Authorization', TestIssuer.bearer(stranger)), 401, 'unauthenticated', /does not publish/);
    });

    it('checks iss, aud, exp and nbf, with 60 s of clock skew', async () => {
      const { base } = await ownedProject();
      const reader = unique('reader');
      const refused: Array<[Parameters<TestIssuer['token']>[1], RegExp]> = [
        [{ issuer: 'https://login.example.com' }, /OIDC_ISSUER/],
        [{ claims: { iss: undefined } }, /iss/],
        [{ audience: 'some-other-app' }, /audience/],
        [{ audience: ['some-other-app', 'another'] }, /audience/],
        [{ expiresIn: -120 }, /expired/],
        [{ notBefore: 300 }, /not valid yet/],
        [{ claims: { exp: undefined } }, /exp/],
      ];
      for (const [options, message] of refused) {
        expectError(await t.http.get(`${base}/versions`).set('Authorization', await as(reader, options)), 401, 'unauthenticated', message);
      }
      for (const options of [{ expiresIn: -30 }, { notBefore: 30 }, { audience: ['some-other-app', issuer.audience] }]) {
        const res = await t.http.get(`${base}/versions`).set('Authorization', await as(reader, options));
        expect(res.status, JSON.stringify(options)).to.equal(200);
      }
    });

    it('refuses alg none and HMAC tokens, the RSA public key as HMAC secret included, without fetching keys', async () => {
      const { base } = await ownedProject();
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: issuer.url, aud: issuer.audience, sub: 'mallory', preferred_username: 'mallory', iat: now, exp: now + 300 };
      const fetches = issuer.fetches.jwks;
      const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
      const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(randomBytes(32).toString('hex')));
      const pem = await exportSPKI(issuer.rsa.publicKey);
      const confused = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: issuer.rsa.kid }).sign(new TextEncoder().encode(pem));
      for (const jwt of [unsigned, hs256, confused]) {
        expectError(await t.http.get(`${base}/versions`).set('Authorization', TestIssuer.bearer(jwt)), 401, 'unauthenticated', /algorithm/);
      }
      expect(issuer.fetches.jwks).to.equal(fetches);
    });

    it('accepts RSA and EC signatures, and names the caller by preferred_username, else sub', async () => {
      const { base } = await ownedProject();
      expect((await t.http.get(`${base}/versions`).set('Authorization', await as(unique('reader')))).status).to.equal(200);
      expect((await t.http.get(`${base}/versions`).set('Authorization', await as(unique('reader'), { key: issuer.ec }))).status).to.equal(200);
      // no preferred_username: the subject is the caller, and may own a project
      const subject = unique('sub');
      const bySubject = await as(null, { claims: { sub: subject } });
      const res = await t.http.post(`/projects/${subject}/${unique('app')}/versions`).set('Authorization', bySubject).send({ version: '1.0.0', spec: {} });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.published_by).to.equal(subject);
      expectError(await t.http.get(`${base}/versions`).set('Authorization', await as(null, { claims: { sub: undefined } })), 401, 'unauthenticated', /sub/);
    });
  });

  describe('access', () => {
    it('makes the first publisher of {owner}/{project} be {owner}', async () => {
      const owner = unique('alice');
      const project = unique('app');
      expectError(await publish(await as(unique('bob')), owner, project, '1.0.0'), 403, 'forbidden', new RegExp(`must be published by ${owner}`));
      expectError(await t.http.get(`/projects/${owner}/${project}/versions`).set('Authorization', await as(owner)), 404, 'not_found');
      const res = await publish(await as(owner), owner, project, '1.0.0');
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ owner, project, published_by: owner });
    });

    it('lets the owner add and remove members with write access, and only the owner', async () => {
      const { owner, project, base, auth } = await ownedProject();
      const bob = unique('bob');
      const carol = unique('carol');
      const asBob = await as(bob);
      const asCarol = await as(carol);

      expectError(await publish(asBob, owner, project, '1.1.0'), 403, 'forbidden', /write access/);
      expectError(await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', asBob).send({}), 403, 'forbidden');

      const added = await t.http.put(`${base}/members/${bob}`).set('Authorization', auth);
      expect(added.status).to.equal(201);
      expect(added.body).to.include({ name: bob, access: 'write', added_by: owner });
      expect(added.body.added_at).to.match(/Z$/);
      const again = await t.http.put(`${base}/members/${bob}`).set('Authorization', auth).send({ access: 'write' });
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(added.body);
      const members = await t.http.get(`${base}/members`).set('Authorization', asCarol);
      expect(members.status).to.equal(200);
      expect(members.body).to.deep.equal({ owner, members: [added.body] });

      // a member writes...
      const published = await t.http.post(`${base}/versions`).set('Authorization', asBob).send({ version: '1.1.0', spec: spec() });
      expect(published.status).to.equal(201);
      expect(published.body.published_by).to.equal(bob);
      expect((await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', asBob).send({ reason: 'use 1.1.0' })).status).to.equal(200);
      // ...but does not manage members; nor does anyone else but the owner
      expectError(await t.http.put(`${base}/members/${carol}`).set('Authorization', asBob), 403, 'forbidden', /Only/);
      expectError(await t.http.delete(`${base}/members/${bob}`).set('Authorization', asBob), 403, 'forbidden');
      expectError(await t.http.put(`${base}/members/${carol}`).set('Authorization', asCarol), 403, 'forbidden');
      expectError(await t.http.put(`${base}/members/${owner}`).set('Authorization', auth), 400, 'invalid_argument', /owns/);
      expectError(await t.http.put(`${base}/members/${carol}`).set('Authorization', auth).send({ access: 'admin' }), 400, 'invalid_argument');

      expect((await t.http.delete(`${base}/members/${bob}`).set('Authorization', auth)).status).to.equal(204);
      expectError(await t.http.delete(`${base}/members/${bob}`).set('Authorization', auth), 404, 'not_found', /not a member/);
      expect((await t.http.get(`${base}/members`).set('Authorization', auth)).body.members).to.deep.equal([]);
      expectError(await t.http.post(`${base}/versions`).set('Authorization', asBob).send({ version: '1.2.0', spec: spec() }), 403, 'forbidden');
      expectError(await t.http.post(`${base}/versions/1.1.0/deprecate`).set('Authorization', asBob).send({}), 403, 'forbidden');
      // reads stay open to any signed-in user
      for (const path of [`${base}/versions`, `${base}/versions/1.1.0`, `${base}/versions/1.1.0/spec`, `${base}/members`]) {
        expect((await t.http.get(path).set('Authorization', asCarol)).status, path).to.equal(200);
      }
    });

    it('answers 404 for an unknown project or version', async () => {
      const { base, auth, owner } = await ownedProject();
      const nowhere = `/projects/${owner}/${unique('none')}`;
      for (const path of [`${nowhere}/versions`, `${nowhere}/versions/1.0.0`, `${nowhere}/versions/1.0.0/spec`, `${nowhere}/members`, `${base}/versions/9.9.9`, `${base}/versions/9.9.9/spec`]) {
        expectError(await t.http.get(path).set('Authorization', auth), 404, 'not_found');
      }
      expectError(await t.http.post(`${base}/versions/9.9.9/deprecate`).set('Authorization', auth).send({}), 404, 'not_found', /9\.9\.9/);
      expectError(await t.http.post(`${nowhere}/versions/1.0.0/deprecate`).set('Authorization', auth).send({}), 404, 'not_found');
      expectError(await t.http.put(`${nowhere}/members/bob`).set('Authorization', auth), 404, 'not_found');
      expectError(await t.http.delete(`${nowhere}/members/bob`).set('Authorization', auth), 404, 'not_found');
      expectError(await t.http.get(`${base}/nothing-here`).set('Authorization', auth), 404, 'not_found');
    });
  });

  describe('versions', () => {
    it('publishes a version as a Registry version, and gets and pulls it', async () => {
      const owner = unique('alice');
      const project = unique('app');
      const auth = await as(owner);
      const sent = spec({ limits: { b: 2, a: [1, { y: 1, x: 2 }] } });
      const res = await t.http.post(`/projects/${owner}/${project}/versions`).set('Authorization', auth).send({ version: 'v1.0.0', spec: sent, release_notes: 'First.' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.have.all.keys(...VERSION_KEYS);
      expect(res.body).to.include({
        owner,
        project,
        version: '1.0.0',
        status: 'published',
        release_notes: 'First.',
        published_by: owner,
        deprecated: false,
        deprecated_at: null,
        deprecation_reason: null,
      });
      expect(res.body.published_at).to.match(/^\d{4}-\d\d-\d\dT.*Z$/);
      expect(res.body.spec_digest).to.equal(sha256(canonical(sent)));
      expect(res.headers.location).to.equal(`/projects/${owner}/${project}/versions/1.0.0`);

      const got = await t.http.get(`/projects/${owner}/${project}/versions/1.0.0/`).set('Authorization', await as(unique('reader')));
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
      const pulled = await t.http.get(`/projects/${owner}/${project}/versions/1.0.0/spec`).set('Authorization', await as(unique('reader')));
      expect(pulled.status).to.equal(200);
      expect(pulled.body).to.deep.include({ version: '1.0.0', spec_digest: res.body.spec_digest, spec: sent, deprecated: false });
      expect(sha256(canonical(pulled.body.spec))).to.equal(res.body.spec_digest);
    });

    it('digests the canonical JSON: key order and spacing in the request do not change the digest', async () => {
      const { base, auth } = await ownedProject();
      const bodyA = '{"version":"2.0.0","spec":{"name":"app","nested":{"zeta":1,"alpha":[3,2,1],"mid":{"b":true,"a":null}},"text":"é ✓"}}';
      const bodyB = '{ "spec" : { "text":"é ✓", "nested" : { "mid":{"a":null,"b":true}, "alpha":[3,2,1], "zeta":1 }, "name":"app" }, "version" : "2.0.1" }';
      const a = await t.http.post(`${base}/versions`).set('Authorization', auth).set('Content-Type', 'application/json').send(bodyA);
      const b = await t.http.post(`${base}/versions`).set('Authorization', auth).set('Content-Type', 'application/json').send(bodyB);
      expect(a.status).to.equal(201);
      expect(b.status).to.equal(201);
      expect(a.body.spec_digest).to.equal(b.body.spec_digest);
      const expected = '{"name":"app","nested":{"alpha":[3,2,1],"mid":{"a":null,"b":true},"zeta":1},"text":"é ✓"}';
      expect(canonical(JSON.parse(bodyA).spec)).to.equal(expected);
      expect(a.body.spec_digest).to.equal(sha256(expected));
      // arrays keep their order, so reordering one is another spec
      const c = await t.http.post(`${base}/versions`).set('Authorization', auth).send({ version: '2.0.2', spec: { ...JSON.parse(bodyA).spec, nested: { zeta: 1, alpha: [1, 2, 3], mid: { a: null, b: true } } } });
      expect(c.body.spec_digest).not.to.equal(a.body.spec_digest);
    });

    it('lists versions in semantic-version order, newest first, with paging', async () => {
      const { base, auth } = await ownedProject();
      for (const version of ['1.10.0', '2.0.0-beta.1', '1.2.0', '2.0.0', '0.9.0']) {
        expect((await t.http.post(`${base}/versions`).set('Authorization', auth).send({ version, spec: spec() })).status, version).to.equal(201);
      }
      const list = await t.http.get(`${base}/versions`).set('Authorization', await as(unique('reader')));
      expect(list.status).to.equal(200);
      expect(list.body.versions.map((v: { version: string }) => v.version)).to.deep.equal(['2.0.0', '2.0.0-beta.1', '1.10.0', '1.2.0', '1.0.0', '0.9.0']);
      for (const v of list.body.versions as Array<Record<string, unknown>>) expect(v).to.have.all.keys(...VERSION_KEYS);
      const page = await t.http.get(`${base}/versions?limit=2&offset=1`).set('Authorization', auth);
      expect(page.body.versions.map((v: { version: string }) => v.version)).to.deep.equal(['2.0.0-beta.1', '1.10.0']);
      expectError(await t.http.get(`${base}/versions?limit=101`).set('Authorization', auth), 400, 'invalid_argument');
      expectError(await t.http.get(`${base}/versions?sort=asc`).set('Authorization', auth), 400, 'invalid_argument');
    });

    it('keeps versions immutable: the same version again is a 409, also under concurrent publishes', async () => {
      const { base, auth } = await ownedProject();
      for (const version of ['1.0.0', 'v1.0.0', '1.0.0+build.2']) {
        expectError(await t.http.post(`${base}/versions`).set('Authorization', auth).send({ version, spec: { other: true } }), 409, 'conflict', /immutable/);
      }
      const pulled = await t.http.get(`${base}/versions/1.0.0/spec`).set('Authorization', auth);
      expect(pulled.body.spec).to.deep.equal(spec());

      const racers = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => t.http.post(`${base}/versions`).set('Authorization', auth).send({ version: '3.0.0', spec: { racer: i } })),
      );
      expect(racers.map((r) => r.status).sort()).to.deep.equal([201, 409, 409, 409, 409, 409]);
      for (const r of racers.filter((r) => r.status === 409)) expectError(r, 409, 'conflict');
      const winner = racers.find((r) => r.status === 201) as Response;
      const stored = await t.http.get(`${base}/versions/3.0.0/spec`).set('Authorization', auth);
      expect(stored.body.spec.racer).to.be.oneOf([0, 1, 2, 3, 4, 5]);
      expect(stored.body.spec_digest).to.equal(winner.body.spec_digest).and.to.equal(sha256(canonical(stored.body.spec)));
    });

    it('concurrent first publishes by the owner make one project', async () => {
      const owner = unique('alice');
      const project = unique('app');
      const auth = await as(owner);
      const results = await Promise.all(['1.0.0', '1.0.1', '1.0.2', '1.0.3'].map((version) => publish(auth, owner, project, version)));
      expect(results.map((r) => r.status)).to.deep.equal([201, 201, 201, 201]);
      expect(new Set(results.map((r) => r.body.project_id)).size).to.equal(1);
      const list = await t.http.get(`/projects/${owner}/${project}/versions`).set('Authorization', auth);
      expect(list.body.versions).to.have.length(4);
    });

    it('refuses invalid input with 400 invalid_argument (and 415 for a body that is not JSON)', async () => {
      const { base, auth } = await ownedProject();
      const bad: Array<[unknown, RegExp]> = [
        [{ version: '1.2', spec: {} }, /semantic version/],
        [{ version: 'latest', spec: {} }, /semantic version/],
        [{ version: '4.0.0' }, /spec/],
        [{ spec: {} }, /version/],
        [{ version: '4.0.0', spec: [1, 2] }, /spec/],
        [{ version: '4.0.0', spec: 'text' }, /spec/],
        [{ version: 4, spec: {} }, /version/],
        [{ version: '4.0.0', spec: {}, release_notes: 7 }, /release_notes/],
        [{ version: '4.0.0', spec: {}, colour: 'blue' }, /colour/],
      ];
      for (const [body, message] of bad) {
        expectError(await t.http.post(`${base}/versions`).set('Authorization', auth).send(body as object), 400, 'invalid_argument', message);
      }
      expectError(await t.http.post(`${base}/versions`).set('Authorization', auth).set('Content-Type', 'application/json').send('{"version": '), 400, 'invalid_argument', /not valid JSON/);
      const notJson = await t.http.post(`${base}/versions`).set('Authorization', auth).set('Content-Type', 'text/plain').send('version=4.0.0');
      expectError(notJson, 415, 'invalid_argument');
      expectError(await t.http.get(`${base}/versions/not-a-version`).set('Authorization', auth), 400, 'invalid_argument', /semantic version/);
      expectError(await t.http.get(`/projects/${unique('alice')}/-bad-name/versions`).set('Authorization', auth), 400, 'invalid_argument', /project names/);
      // nothing of the refused requests was stored
      const list = await t.http.get(`${base}/versions`).set('Authorization', auth);
      expect(list.body.versions.map((v: { version: string }) => v.version)).to.deep.equal(['1.0.0']);
    });

    it('refuses the unknown fields of every registry body it documents', async () => {
      const { base, auth } = await ownedProject();
      const doc = (await t.http.get('/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: unknown; security?: unknown }>> };
      let checked = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        if (!path.startsWith('/projects/')) continue;
        for (const [method, op] of Object.entries(ops)) {
          if (!op.requestBody) continue;
          const concrete = path
            .replace('/projects/{owner}/{project}', base)
            .replace('{version}', '1.0.0')
            .replace('{name}', unique('bob'));
          // an otherwise valid body, so the unknown field is the one problem
          const valid = path.endsWith('/versions') ? { version: '5.0.0', spec: {} } : {};
          const res = await t.http[method as 'post'](concrete).set('Authorization', auth).send({ ...valid, not_a_documented_field: 1 });
          expectError(res, 400, 'invalid_argument', /not_a_documented_field/);
          checked += 1;
        }
      }
      expect(checked).to.equal(3);
    });
  });

  describe('deprecate', () => {
    it('is idempotent: the first deprecated_at stays, a new reason replaces the old, the version stays published and pullable', async () => {
      const { base, auth } = await ownedProject();
      const first = await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', auth).send({ reason: 'CVE-2025-0001' });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body).to.have.all.keys('version');
      expect(first.body.version).to.have.all.keys(...VERSION_KEYS);
      expect(first.body.version).to.include({ version: '1.0.0', status: 'published', deprecated: true, deprecation_reason: 'CVE-2025-0001' });
      expect(first.body.version.deprecated_at).to.match(/Z$/);

      await new Promise((r) => setTimeout(r, 20));
      const repeat = await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', auth);
      expect(repeat.status).to.equal(200);
      expect(repeat.body).to.deep.equal(first.body);

      const reworded = await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', auth).send({ reason: 'Use 1.1.0: CVE-2025-0001' });
      expect(reworded.body.version).to.include({ deprecated: true, deprecated_at: first.body.version.deprecated_at, deprecation_reason: 'Use 1.1.0: CVE-2025-0001' });

      const pulled = await t.http.get(`${base}/versions/1.0.0/spec`).set('Authorization', await as(unique('reader')));
      expect(pulled.status).to.equal(200);
      expect(pulled.body).to.deep.include({ version: '1.0.0', spec: spec(), deprecated: true, deprecation_reason: 'Use 1.1.0: CVE-2025-0001' });
      const got = await t.http.get(`${base}/versions/1.0.0`).set('Authorization', auth);
      expect(got.body).to.deep.equal(reworded.body.version);
      const listed = await t.http.get(`${base}/versions`).set('Authorization', auth);
      expect(listed.body.versions).to.deep.equal([reworded.body.version]);
    });

    it('deprecates without a reason, and takes deprecation_reason and message as names for reason', async () => {
      const { base, auth } = await ownedProject();
      for (const version of ['1.1.0', '1.2.0', '1.3.0']) {
        expect((await t.http.post(`${base}/versions`).set('Authorization', auth).send({ version, spec: spec() })).status).to.equal(201);
      }
      const bare = await t.http.post(`${base}/versions/1.0.0/deprecate`).set('Authorization', auth).send({});
      expect(bare.body.version).to.include({ deprecated: true, deprecation_reason: null });
      const byAlias = await t.http.post(`${base}/versions/1.1.0/deprecate`).set('Authorization', auth).send({ deprecation_reason: 'old' });
      expect(byAlias.body.version).to.include({ deprecated: true, deprecation_reason: 'old' });
      const byMessage = await t.http.post(`${base}/versions/1.2.0/deprecate`).set('Authorization', auth).send({ message: 'older' });
      expect(byMessage.body.version).to.include({ deprecated: true, deprecation_reason: 'older' });
      const same = await t.http.post(`${base}/versions/1.2.0/deprecate`).set('Authorization', auth).send({ reason: 'oldest', message: 'oldest' });
      expect(same.body.version).to.include({ deprecation_reason: 'oldest' });
      expectError(await t.http.post(`${base}/versions/1.3.0/deprecate`).set('Authorization', auth).send({ reason: 'a', message: 'b' }), 400, 'invalid_argument', /one of them/);
      expectError(await t.http.post(`${base}/versions/1.3.0/deprecate`).set('Authorization', auth).send({ why: 'x' }), 400, 'invalid_argument', /why/);
      expectError(await t.http.post(`${base}/versions/1.3.0/deprecate`).set('Authorization', auth).send({ reason: 42 }), 400, 'invalid_argument', /reason/);
      expectError(await t.http.post(`${base}/versions/nope/deprecate`).set('Authorization', auth).send({}), 400, 'invalid_argument');
      expect((await t.http.get(`${base}/versions/1.3.0`).set('Authorization', auth)).body.deprecated).to.equal(false);
    });
  });

  describe('key set', () => {
    let other: TestIssuer;
    let r: TestRuntime;

    before(async () => {
      other = await TestIssuer.start('cairn-keys-test');
      r = await startRuntime({ env: other.env() });
    });
    after(async () => {
      await r?.close();
      await other?.close();
    });

    it('answers 503 unavailable while the issuer cannot be reached, then discovers it once and keeps it', async () => {
      const owner = unique('alice');
      const auth = TestIssuer.bearer(await other.token(owner));
      other.failWith = 503;
      const down = await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', auth);
      expectError(down, 503, 'unavailable', /cannot be fetched/);
      expect(down.headers['retry-after']).to.match(/^\d+$/);
      other.failWith = null;
      const published = await r.http.post(`/projects/${owner}/app/versions`).set('Authorization', auth).send({ version: '1.0.0', spec: {} });
      expect(published.status, JSON.stringify(published.body)).to.equal(201);
      const discoveries = other.fetches.discovery;
      for (let i = 0; i < 3; i += 1) expect((await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', auth)).status).to.equal(200);
      expect(other.fetches.discovery).to.equal(discoveries);
      expect(other.fetches.jwks).to.equal(1);
    });

    it('refetches the JWKS for an unknown kid once the cooldown has passed, so rotated keys work', async () => {
      const owner = unique('alice');
      const before = TestIssuer.bearer(await other.token(owner));
      expect((await r.http.post(`/projects/${owner}/app/versions`).set('Authorization', before).send({ version: '1.0.0', spec: {} })).status).to.equal(201);
      const fetched = other.fetches.jwks;

      await other.rotate();
      const after = TestIssuer.bearer(await other.token(owner));
      // inside the cooldown an unknown kid does not make the server hit the issuer again
      expectError(await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', after), 401, 'unauthenticated', /does not publish/);
      expect(other.fetches.jwks).to.equal(fetched);

      // once the cooldown has passed (the clock moved past it), the unknown kid refetches the key set
      const realNow = Date.now;
      Date.now = () => realNow() + JWKS_COOLDOWN_MS + 1_000;
      let res: Response;
      try {
        res = await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', after);
      } finally {
        Date.now = realNow;
      }
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(other.fetches.jwks).to.equal(fetched + 1);
      expect((await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', after)).status).to.equal(200);
      expect(other.fetches.jwks).to.equal(fetched + 1);
      // the retired key is gone from the JWKS
      expectError(await r.http.get(`/projects/${owner}/app/versions`).set('Authorization', before), 401, 'unauthenticated');
    });
  });

  describe('configuration', () => {
    it('takes OIDC_JWKS_URL without discovery, and OIDC_USERNAME_CLAIM names the caller', async () => {
      const direct = await TestIssuer.start('cairn-jwks-test');
      const r = await startRuntime({ env: { OIDC_JWKS_URL: direct.jwksUrl, OIDC_AUDIENCE: direct.audience, OIDC_USERNAME_CLAIM: 'email' } });
      try {
        const email = `${unique('dana')}@example.com`;
        const auth = TestIssuer.bearer(await direct.token(unique('ignored'), { claims: { email } }));
        const res = await r.http.post(`/projects/${email}/app/versions`).set('Authorization', auth).send({ version: '1.0.0', spec: {} });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body).to.include({ owner: email, published_by: email });
        expect(direct.fetches).to.deep.equal({ discovery: 0, jwks: 1 });
        // without the claim, sub names the caller
        const bySub = TestIssuer.bearer(await direct.token(null, { claims: { sub: 'subject-1' } }));
        expectError(await r.http.post(`/projects/${email}/app/versions`).set('Authorization', bySub).send({ version: '1.0.1', spec: {} }), 403, 'forbidden', /subject-1/);
        expectError(await r.http.get(`/projects/${email}/app/versions`).set('Authorization', TestIssuer.bearer(await direct.token(null, { audience: 'x' }))), 401, 'unauthenticated');
      } finally {
        await r.close();
        await direct.close();
      }
    });

    it('answers 401 on registry paths, saying why, when no OIDC issuer is configured', async () => {
      const r = await startRuntime();
      try {
        const res = await r.http.get('/projects/alice/app/versions').set('Authorization', await as('alice'));
        expectError(res, 401, 'unauthenticated', /OIDC_ISSUER/);
        expectError(await r.http.get('/projects/alice/app/versions'), 401, 'unauthenticated', /OIDC_ISSUER/);
      } finally {
        await r.close();
      }
    });

    it('answers 503 when the configured JWKS URL does not answer', async () => {
      const gone = await TestIssuer.start('cairn-gone-test');
      const jwksUrl = gone.jwksUrl;
      const auth = TestIssuer.bearer(await gone.token('alice'));
      await gone.close();
      const r = await startRuntime({ env: { OIDC_JWKS_URL: jwksUrl, OIDC_AUDIENCE: 'cairn-gone-test' } });
      try {
        expectError(await r.http.get('/projects/alice/app/versions').set('Authorization', auth), 503, 'unavailable');
      } finally {
        await r.close();
      }
    });
  });
});
