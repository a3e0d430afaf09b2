import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A signing key of the test issuer. */
export interface IssuerKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** Options of one token; anything not given is what a real provider would issue. */
export interface TokenOptions {
  /** Which published key signs (default: the current RSA key). */
  key?: IssuerKey;
  /** Overrides the `kid` header (e.g. to name a published key while signing with another). */
  kid?: string;
  issuer?: string;
  audience?: string | string[];
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  /** Seconds from now for `nbf`. */
  notBefore?: number;
  /** Extra or replacing claims; `undefined` values remove the claim. */
  claims?: Record<string, unknown>;
}

/** Makes a signing key pair with a fresh `kid`. */
export async function newKey(alg: 'RS256' | 'ES256' = 'RS256'): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid: `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`, alg, privateKey, publicKey };
}

/**
 * A local OpenID provider for tests, on a loopback port: `/.well-known/openid-configuration` and
 * `/jwks.json`, an RSA and an EC key, tokens signed with `SignJWT`, key rotation, and counts of
 * the requests made to it (so a test can tell when the server refetched the key set).
 */
export class TestIssuer {
  /** Requests served, by path. */
  readonly fetches = { discovery: 0, jwks: 0 };
  /** While set, both documents answer with this HTTP status instead (an outage). */
  failWith: number | null = null;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    readonly audience: string,
    public rsa: IssuerKey,
    public ec: IssuerKey,
    private published: IssuerKey[],
  ) {}

  /** Starts an issuer on 127.0.0.1 with a random port. */
  static async start(audience = 'cairn-registry-test'): Promise<TestIssuer> {
    const rsa = await newKey('RS256');
    const ec = await newKey('ES256');
    let issuer: TestIssuer | null = null;
    const server = http.createServer((req, res) => {
      void issuer?.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    issuer = new TestIssuer(server, `http://127.0.0.1:${port}`, audience, rsa, ec, [rsa, ec]);
    return issuer;
  }

  get jwksUrl(): string {
    return `${this.url}/jwks.json`;
  }

  /** Environment for a Cairn runtime that trusts this issuer through discovery. */
  env(): Record<string, string> {
    return { OIDC_ISSUER: this.url, OIDC_AUDIENCE: this.audience };
  }

  /** Publishes a new RSA key (new kid) in place of the current one, and signs with it from now on. */
  async rotate(): Promise<IssuerKey> {
    const next = await newKey('RS256');
    this.published = this.published.map((k) => (k === this.rsa ? next : k));
    this.rsa = next;
    return next;
  }

  /** An ID token for `username` (as `preferred_username`, with a `sub` of its own). */
  async token(username: string | null, options: TokenOptions = {}): Promise<string> {
    const key = options.key ?? this.rsa;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      sub: `sub-${randomBytes(6).toString('hex')}`,
      ...(username === null ? {} : { preferred_username: username }),
      iss: options.issuer ?? this.url,
      aud: options.audience ?? this.audience,
      iat: now,
      exp: now + (options.expiresIn ?? 300),
      ...(options.notBefore === undefined ? {} : { nbf: now + options.notBefore }),
      ...options.claims,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' }).sign(key.privateKey);
  }

  /** `Authorization` header value for a token. */
  static bearer(token: string): string {
    return `Bearer ${token}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') {
      this.fetches.discovery += 1;
      if (this.failWith !== null) return send(this.failWith, { error: 'down' });
      return send(200, {
        issuer: this.url,
        jwks_uri: this.jwksUrl,
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
      });
    }
    if (req.url === '/jwks.json') {
      this.fetches.jwks += 1;
      if (this.failWith !== null) return send(this.failWith, { error: 'down' });
      const keys: JWK[] = [];
      for (const key of this.published) keys.push({ ...(await exportJWK(key.publicKey)), kid: key.kid, alg: key.alg, use: 'sig' });
      return send(200, { keys });
    }
    send(404, { error: 'not found' });
  }
}
