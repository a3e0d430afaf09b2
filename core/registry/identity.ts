import { createRemoteJWKSet, errors as jose, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Config } from '../../lib/config.js';
import { AppError, unavailable } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';

/** Who is calling a registry path: the username claim of a verified ID token. */
export interface RegistryCaller {
  /** The configured username claim (`OIDC_USERNAME_CLAIM`), or `sub` when the token has none. */
  username: string;
  subject: string | null;
}

/**
 * The signature algorithms an ID token may use: asymmetric ones only, so neither `alg: none` nor
 * an HMAC keyed with something public (the classic RS256 → HS256 confusion) can pass.
 */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** Seconds of clock difference tolerated on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 60;

/** jose's defaults, spelled out: an unknown `kid` refetches the key set at most this often. */
export const JWKS_COOLDOWN_MS = 30_000;
const JWKS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

const REALM = 'Bearer realm="cairn-registry"';

/** A 401 on a registry path; `invalid` says a token was presented and refused (RFC 6750). */
function refuse(message: string, invalid = true): AppError {
  return new AppError(401, invalid ? 'invalid_token' : 'unauthenticated', message, undefined, {
    'WWW-Authenticate': invalid ? `${REALM}, error="invalid_token"` : REALM,
  });
}

/** The issuer's keys could not be had: answered 503, never 401, since the token may be fine. */
class KeySourceDown extends Error {
  constructor(
    readonly source: string,
    options: { cause: unknown },
  ) {
    super(`cannot fetch ${source}`, options);
  }
}

/**
 * Verifies OIDC ID tokens for the registry: the signature against the issuer's JWKS (found by
 * discovery from `OIDC_ISSUER`, or `OIDC_JWKS_URL`), an asymmetric algorithm, `iss` (when
 * `OIDC_ISSUER` is set), `aud` (`OIDC_AUDIENCE`), `exp` and `nbf` with `CLOCK_SKEW_SECONDS`.
 */
export class OidcVerifier {
  private keys: Promise<JWTVerifyGetKey> | null = null;

  constructor(
    private readonly oidc: Config['oidc'],
    private readonly log: Logger,
  ) {}

  /** What is missing for registry sign-in to work, or null when it is configured. */
  missingConfiguration(): string | null {
    if (this.oidc.issuer === null && this.oidc.jwksUrl === null) {
      return 'This server has no OIDC_ISSUER or OIDC_JWKS_URL configured, so it cannot verify ID tokens and registry operations are unavailable; an operator must set them (and OIDC_AUDIENCE).';
    }
    if (this.oidc.audience === null) {
      return 'This server has no OIDC_AUDIENCE configured, so it cannot check that an ID token was issued for it and registry operations are unavailable; an operator must set it to the client id tokens are issued to.';
    }
    return null;
  }

  /** The caller an ID token names; 401 when it does not verify, 503 when the issuer's keys cannot be fetched. */
  async verify(token: string): Promise<RegistryCaller> {
    const missing = this.missingConfiguration();
    if (missing !== null) throw refuse(missing, false);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        algorithms: [...ID_TOKEN_ALGORITHMS],
        issuer: this.oidc.issuer ?? undefined,
        audience: this.oidc.audience ?? undefined,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw this.explain(err);
    }
    const claim = this.oidc.usernameClaim;
    const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
    const named = payload[claim];
    const username = typeof named === 'string' && named !== '' ? named : subject;
    if (username === null) throw refuse(`The ID token has neither a "${claim}" nor a "sub" claim to name the caller by.`);
    return { username, subject };
  }

  /** The key set: `OIDC_JWKS_URL`, else the `jwks_uri` of the issuer's discovery document, looked up once. */
  private keySet(): Promise<JWTVerifyGetKey> {
    this.keys ??= this.resolveKeySet().catch((err: unknown) => {
      // not cached: the next request tries discovery again
      this.keys = null;
      throw err;
    });
    return this.keys;
  }

  private async resolveKeySet(): Promise<JWTVerifyGetKey> {
    const url = this.oidc.jwksUrl ?? (await this.discoverJwksUri());
    const remote = createRemoteJWKSet(new URL(url), {
      cooldownDuration: JWKS_COOLDOWN_MS,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    return async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        // a key set that was fetched but has no key for this token is the token's problem
        if (err instanceof jose.JWKSNoMatchingKey || err instanceof jose.JWKSMultipleMatchingKeys || err instanceof jose.JOSENotSupported) throw err;
        throw new KeySourceDown(`the JWKS at ${url}`, { cause: err });
      }
    };
  }

  private async discoverJwksUri(): Promise<string> {
    const issuer = this.oidc.issuer as string;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let document: unknown;
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      document = await response.json();
    } catch (err) {
      throw new KeySourceDown(`the discovery document ${url}`, { cause: err });
    }
    const jwksUri = (document as { jwks_uri?: unknown } | null)?.jwks_uri;
    if (typeof jwksUri !== 'string' || !/^https?:\/\//.test(jwksUri)) {
      throw new KeySourceDown(`the discovery document ${url}`, { cause: new Error('it has no http(s) jwks_uri') });
    }
    return jwksUri;
  }

  /** Turns a verification failure into a 401 that says what was wrong (or a 503 for a key-set outage). */
  private explain(err: unknown): AppError {
    if (err instanceof AppError) return err;
    if (err instanceof KeySourceDown) {
      this.log.warn({ err: err.cause, source: err.source }, 'OIDC keys unavailable');
      return unavailable(`The identity provider's keys cannot be fetched right now (${err.source}), so ID tokens cannot be verified; retry shortly.`);
    }
    if (err instanceof jose.JWTExpired) return refuse('The ID token has expired; sign in again for a fresh one.');
    if (err instanceof jose.JWTClaimValidationFailed) {
      switch (err.claim) {
        case 'iss':
          return refuse(`The ID token was not issued by this server's identity provider (OIDC_ISSUER ${this.oidc.issuer ?? ''}).`);
        case 'aud':
          return refuse("The ID token was not issued for this server (its audience is not this server's OIDC_AUDIENCE).");
        case 'nbf':
          return refuse('The ID token is not valid yet (its nbf is in the future).');
        default:
          return refuse(`The ID token's "${err.claim}" claim is missing or invalid.`);
      }
    }
    if (err instanceof jose.JOSEAlgNotAllowed) {
      return refuse(`The ID token's signature algorithm is not accepted; ID tokens must be signed with one of ${ID_TOKEN_ALGORITHMS.join(', ')}.`);
    }
    if (err instanceof jose.JWKSNoMatchingKey) return refuse("The ID token was signed with a key the identity provider does not publish (no matching key in its JWKS).");
    if (err instanceof jose.JWSSignatureVerificationFailed) return refuse("The ID token's signature does not verify.");
    if (err instanceof jose.JOSEError) return refuse('The bearer token is not a valid signed ID token (a JWT).');
    // jose raises TypeError for keys it will not use (an RSA modulus under 2048 bits, say)
    if (err instanceof TypeError) {
      this.log.warn({ err }, 'ID token refused: unusable key');
      return refuse('The ID token cannot be verified with the key it names.');
    }
    throw err;
  }
}
