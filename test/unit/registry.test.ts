import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { CanonicalJsonError, canonicalJson, digestOf, MAX_JSON_DEPTH } from '../../core/registry/canonical-json.js';
import { ID_TOKEN_ALGORITHMS, OidcVerifier } from '../../core/registry/identity.js';
import { normalizeVersion } from '../../core/registry/registry.js';
import { AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';

describe('registry: canonical JSON', () => {
  it('sorts keys at every level, keeps array order and writes no whitespace', () => {
    const value = { b: 1, a: { d: [3, { z: true, y: null }, 1], c: 'x' } };
    expect(canonicalJson(value)).to.equal('{"a":{"c":"x","d":[3,{"y":null,"z":true},1]},"b":1}');
  });

  it('gives the same text whatever the key order or spacing of the source', () => {
    const one = JSON.parse('{ "name": "app", "deps": { "b": "2", "a": "1" }, "tags": ["x", "y"] }') as unknown;
    const two = JSON.parse('{"tags":["x","y"],"deps":{"a":"1","b":"2"},"name":"app"}') as unknown;
    expect(canonicalJson(one)).to.equal(canonicalJson(two));
    // arrays are ordered: a different order is a different document
    expect(canonicalJson({ tags: ['y', 'x'] })).not.to.equal(canonicalJson({ tags: ['x', 'y'] }));
  });

  it('orders keys by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ b: 0, B: 0, a: 0, '€': 0, '\u00e9': 0, '10': 0, '9': 0 })).to.equal('{"10":0,"9":0,"B":0,"a":0,"b":0,"é":0,"€":0}');
  });

  it('writes strings and numbers as JSON.stringify does', () => {
    expect(canonicalJson({ s: 'line\n"quoted"\u0001', n: [1.0, -0, 1e21, 0.1, -5e-7] })).to.equal('{"n":[1,0,1e+21,0.1,-5e-7],"s":"line\\n\\"quoted\\"\\u0001"}');
    expect(canonicalJson([])).to.equal('[]');
    expect(canonicalJson({})).to.equal('{}');
  });

  it('leaves out members without a value and refuses what is not JSON', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).to.equal('{"b":1}');
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, () => 1, 10n, Symbol('s')]) {
      expect(() => canonicalJson({ bad }), String(typeof bad)).to.throw(CanonicalJsonError);
    }
  });

  it(`refuses documents nested deeper than ${MAX_JSON_DEPTH} levels instead of exhausting the stack`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(() => canonicalJson(deep)).to.throw(CanonicalJsonError, /deeper/);
    let ok: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i += 1) ok = { k: ok };
    expect(canonicalJson(ok)).to.match(/^\{"k":/);
  });

  it('digests as sha256: and the hex SHA-256 of the canonical text', () => {
    const text = canonicalJson({ b: 2, a: 1 });
    expect(digestOf(text)).to.equal(`sha256:${createHash('sha256').update('{"a":1,"b":2}').digest('hex')}`);
    expect(digestOf(text)).to.match(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('registry: versions and tokens', () => {
  it('normalises semantic versions and refuses anything else with a 400', () => {
    expect(normalizeVersion('1.2.3', '/version')).to.equal('1.2.3');
    expect(normalizeVersion('v2.0.0-beta.1', '/version')).to.equal('2.0.0-beta.1');
    expect(normalizeVersion('1.0.0+build.7', '/version')).to.equal('1.0.0');
    for (const bad of ['1.2', 'latest', '01.2.3', '1.2.3.4', '', `1.0.0-${'a'.repeat(300)}`]) {
      expect(() => normalizeVersion(bad, '/version'), bad)
        .to.throw(AppError)
        .with.property('status', 400);
    }
  });

  it('accepts only asymmetric signature algorithms', () => {
    expect(ID_TOKEN_ALGORITHMS).to.include.members(['RS256', 'ES256', 'PS256', 'EdDSA']);
    for (const alg of ID_TOKEN_ALGORITHMS) expect(alg).not.to.match(/^(HS|none)/i);
  });

  it('counts registry sign-in as configured only with an issuer or a JWKS URL, and an audience', async () => {
    const verifier = (oidc: { issuer?: string; jwksUrl?: string; audience?: string }) =>
      new OidcVerifier({ issuer: oidc.issuer ?? null, jwksUrl: oidc.jwksUrl ?? null, audience: oidc.audience ?? null, usernameClaim: 'preferred_username' }, createLogger('silent'));
    expect(verifier({}).missingConfiguration()).to.match(/OIDC_ISSUER or OIDC_JWKS_URL/);
    expect(verifier({ issuer: 'https://id.example.com' }).missingConfiguration()).to.match(/OIDC_AUDIENCE/);
    expect(verifier({ issuer: 'https://id.example.com', audience: 'cairn' }).missingConfiguration()).to.equal(null);
    expect(verifier({ jwksUrl: 'https://id.example.com/jwks', audience: 'cairn' }).missingConfiguration()).to.equal(null);
    const refused = await verifier({ issuer: 'https://id.example.com' }).verify('a.b.c').catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(AppError).with.property('status', 401);
  });
});
