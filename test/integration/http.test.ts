import { expect } from 'chai';
import { newProject, startRuntime, token, type TestRuntime } from '../helpers.js';

describe('HTTP conventions', () => {
  let t: TestRuntime;
  let key: string;

  before(async () => {
    t = await startRuntime({ env: { BODY_LIMIT_MB: '1' } });
    ({ key } = await newProject(t));
  });
  after(() => t.close());

  it('answers malformed JSON with 400 and the {detail, code} body', async () => {
    const res = await t.http
      .post('/v1/api-keys')
      .set('Authorization', token(key))
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('malformed_json');
    expect(res.body.detail).to.be.a('string').and.match(/not valid JSON/);
  });

  it('refuses a body over the limit with 413 and stores nothing', async () => {
    const before = await t.http.get('/v1/api-keys').set('Authorization', token(key));
    const res = await t.http
      .post('/v1/api-keys')
      .set('Authorization', token(key))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }));
    expect(res.status).to.equal(413);
    expect(res.body.code).to.equal('payload_too_large');
    const after = await t.http.get('/v1/api-keys').set('Authorization', token(key));
    expect(after.body.api_keys).to.have.length(before.body.api_keys.length);
  });

  it('refuses a non-JSON body on a JSON route with 415', async () => {
    const res = await t.http
      .post('/v1/api-keys')
      .set('Authorization', token(key))
      .set('Content-Type', 'text/plain')
      .send('name=x');
    expect(res.status).to.equal(415);
    expect(res.body.code).to.equal('unsupported_media_type');
  });

  it('rejects unknown fields, naming each one', async () => {
    const res = await t.http.post('/v1/api-keys').set('Authorization', token(key)).send({ name: 'a', colour: 'red', size: 2 });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).to.have.members(['/colour', '/size']);
  });

  it('rejects wrong types and non-object bodies with 400', async () => {
    for (const body of ['[]', 'null', '42', '"text"', '{"name": 5}', '{"name": ""}']) {
      const res = await t.http.post('/v1/api-keys').set('Authorization', token(key)).set('Content-Type', 'application/json').send(body);
      expect(res.status, body).to.equal(400);
      expect(res.body.detail, body).to.be.a('string');
    }
  });

  it('rejects unknown and out-of-range query parameters', async () => {
    const unknown = await t.http.get('/v1/api-keys?sort=name').set('Authorization', token(key));
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors[0].path).to.equal('/sort');
    const tooMany = await t.http.get('/v1/api-keys?limit=101').set('Authorization', token(key));
    expect(tooMany.status).to.equal(400);
    const notNumber = await t.http.get('/v1/api-keys?limit=ten').set('Authorization', token(key));
    expect(notNumber.status).to.equal(400);
  });

  it('accepts a trailing slash on every path', async () => {
    const plain = await t.http.get('/v1/api-keys').set('Authorization', token(key));
    const slashed = await t.http.get('/v1/api-keys/').set('Authorization', token(key));
    expect(slashed.status).to.equal(200);
    expect(slashed.body).to.deep.equal(plain.body);
    expect((await t.http.get('/healthz/')).status).to.equal(200);
  });

  it('answers unknown routes with 404 in the /v1 shape and registry paths in the registry shape', async () => {
    const v1 = await t.http.get('/v1/nothing-here');
    expect(v1.status).to.equal(404);
    expect(v1.body).to.include({ code: 'not_found' });
    expect(v1.body.detail).to.be.a('string');
    // an unrouted registry path (a routed one asks for an ID token first: 401)
    const registry = await t.http.get('/projects/acme/app/nothing-here');
    expect(registry.status).to.equal(404);
    expect(registry.body).to.have.keys('error');
    expect(registry.body.error.code).to.equal('not_found');
    expect(registry.body.error.message).to.be.a('string');
  });

  it('answers a wrong method with 405 and a body', async () => {
    const res = await t.http.put('/v1/api-keys').set('Authorization', token(key));
    expect(res.status).to.equal(405);
    expect(res.body.code).to.equal('method_not_allowed');
  });

  it('gives every response a request id, keeping a sane one the caller sent', async () => {
    const mine = await t.http.get('/healthz').set('X-Request-Id', 'trace-abc.123');
    expect(mine.headers['x-request-id']).to.equal('trace-abc.123');
    const generated = await t.http.get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(generated.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
  });

  it('never answers 500 to client input', async () => {
    const bodies = ['{', '{"a":', '\u0000', '{"name": "\\ud800"}', '{"name": {"$gt": ""}}', '{"__proto__": {"x": 1}}', 'x'.repeat(5000)];
    for (const body of bodies) {
      const res = await t.http.post('/v1/api-keys').set('Authorization', token(key)).set('Content-Type', 'application/json').send(body);
      expect(res.status, body.slice(0, 20)).to.be.within(200, 499);
    }
    const weird = await t.http.get('/v1/api-keys/%E0%A4%A').set('Authorization', token(key));
    expect(weird.status).to.be.within(400, 499);
  });
});
