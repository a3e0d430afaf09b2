import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';
import type { KeyPrincipal } from '../core/api-keys.js';
import type { RegistryCaller } from '../core/registry/identity.js';
import { badRequest, type FieldError } from '../lib/errors.js';
import { ajv, assertValid, type JsonSchema } from '../lib/validation.js';
import { jsonBody } from './middleware/body.js';
import { multipartBody, type UploadedFile } from './middleware/multipart.js';

/** How a route authenticates its caller (`oidc`: a registry path's OIDC ID token). */
export type RouteAuth = 'token' | 'admin' | 'oidc' | 'none';

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** The response may also be a `text/event-stream` (server-sent events). */
  eventStream?: true;
}

/**
 * Who a request's credentials name, by how its route authenticates: the project an API key
 * belongs to, the registry user an ID token names, or no one.
 */
export type PrincipalOf<A extends RouteAuth> = A extends 'token' ? KeyPrincipal : A extends 'oidc' ? RegistryCaller : undefined;

/** The query of a route that declares none: nothing is accepted. */
type NoQuery = Record<string, never>;

/** What a handler reads for a schema: its static type, or `Absent` when the route declares none. */
type Input<S extends TSchema | undefined, Absent> = S extends TSchema ? Static<S> : Absent;

/**
 * One operation: the single place its validation, its OpenAPI entry and the types its handler
 * reads come from (`B`, `Q`, `F`: the schemas of its body, query and upload fields, `never`
 * for a route without an upload; `A`: how it authenticates, which says who its principal is).
 */
export interface RouteDefinition<B extends TSchema | undefined, Q extends TSchema | undefined, F extends TSchema, A extends RouteAuth> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa-router path, e.g. `/v1/api-keys/:id`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: A;
  body?: B;
  /**
   * The body is an RFC 7396 merge patch of a user-defined shape (a record's values): its schema
   * cannot list the fields, which are checked after merging instead.
   */
  mergePatch?: true;
  /**
   * The route also takes a `multipart/form-data` upload: one file in the field `file` (at most
   * `maxBytes`), its other fields validated against `fields` (those named in `jsonFields` hold
   * JSON). The handler finds the file in `ctx.state.upload`, the fields in `ctx.state.body`.
   */
  upload?: { fields: F; jsonFields: readonly string[]; maxBytes: number };
  query?: Q;
  /**
   * The request headers the route reads: an object schema keyed by header name as documented
   * (`Idempotency-Key`), matched case-insensitively. The handler finds those sent in `ctx.state.headers`.
   */
  headers?: TSchema;
  responses: Record<number, ResponseSpec>;
  handler(ctx: RouteContext<B, Q, F, A>): Promise<void> | void;
}

/**
 * The Koa context a handler sees, with its validated input and its principal (the one place a
 * handler learns who is calling, and for which project). With an upload, the handler finds
 * either the JSON body (no `upload`) or the upload's fields and file.
 */
export type RouteContext<B extends TSchema | undefined, Q extends TSchema | undefined, F extends TSchema, A extends RouteAuth> = Context & {
  state: { principal: PrincipalOf<A>; query: Input<Q, NoQuery>; headers: Record<string, string | undefined> } & (
    | { body: Input<B, undefined>; upload?: undefined }
    | { body: Static<F>; upload: UploadedFile }
  );
};

/** A route as `mount` and `/openapi.json` take it, whatever its schemas. */
export type RouteSpec = RouteDefinition<TSchema | undefined, TSchema | undefined, TSchema, RouteAuth>;

/** Declares a route: its handler's input is typed by its schemas. */
export function route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, F extends TSchema = never, A extends RouteAuth = RouteAuth>(
  definition: RouteDefinition<B, Q, F, A>,
): RouteSpec {
  return definition;
}

/** Collects route specs as they are mounted, for `/openapi.json`. */
export class RouteCatalog {
  readonly routes: RouteSpec[] = [];
}

/**
 * Mounts a route: authentication, body parsing, validation of body and query against the same
 * schemas that go into the OpenAPI document, then the handler.
 */
export function mount(router: Router, catalog: RouteCatalog, guards: Record<RouteAuth, Middleware>, spec: RouteSpec, options: { bodyLimitBytes: number }): void {
  catalog.routes.push(spec);
  const chain: Middleware[] = [guards[spec.auth]];
  if (spec.headers) {
    const names = Object.keys((spec.headers.properties ?? {}) as Record<string, unknown>);
    const validateHeaders = ajv.compile(spec.headers);
    chain.push(async (ctx, next) => {
      const sent: Record<string, string> = {};
      for (const name of names) {
        const value = ctx.headers[name.toLowerCase()];
        // a header sent twice arrives joined by ", " (or as a list), which the schema then refuses
        if (value !== undefined) sent[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      ctx.state.headers = assertValid(validateHeaders, sent, '', 'headers');
      await next();
    });
  }
  if (spec.upload) {
    const upload = spec.upload;
    const validateFields = ajv.compile(upload.fields);
    const parseUpload = multipartBody(upload.maxBytes, upload.jsonFields);
    chain.push(async (ctx, next) => {
      if (!ctx.is('multipart/form-data')) return next();
      return parseUpload(ctx, async () => {
        ctx.state.body = assertValid(validateFields, ctx.state.rawBody, '', 'form fields');
        await next();
      });
    });
  }
  if (spec.body) {
    const validateBody = ajv.compile(spec.body);
    const parseJson = jsonBody(options.bodyLimitBytes);
    chain.push(async (ctx, next) => {
      // an upload was parsed above
      if (ctx.state.upload !== undefined) return next();
      return parseJson(ctx, async () => {
        ctx.state.body = assertValid(validateBody, ctx.state.rawBody, '', 'request body');
        await next();
      });
    });
  }
  const querySchema = spec.query;
  const validateQuery = querySchema ? ajv.compile(querySchema) : null;
  chain.push(async (ctx) => {
    // a route that declares no headers reads none, but finds the object its type promises
    ctx.state.headers ??= {};
    if (validateQuery && querySchema) {
      ctx.state.query = assertValid(validateQuery, coerceQuery(querySchema, ctx.query), '', 'query string');
    } else if (ctx.querystring !== '') {
      ctx.state.query = assertValid(NO_QUERY, ctx.query, '', 'query string');
    }
    await spec.handler(ctx as RouteContext<TSchema | undefined, TSchema | undefined, TSchema, RouteAuth>);
  });
  router[spec.method](spec.operationId, spec.path, ...chain);
}

const NO_QUERY = ajv.compile({ type: 'object', additionalProperties: false, properties: {} }) as ValidateFunction<never>;

/**
 * Query strings arrive as strings: turn the ones the schema declares numeric or boolean into
 * numbers and booleans (leaving anything unparsable for the validator to reject), and give each
 * parameter left out the default its schema documents (a list's `limit` of 50). The one ajv runs
 * without `useDefaults`, so request bodies reach handlers as sent; a query is filled in here.
 * Only a parameter the schema declares an array may be given more than once (its values a list,
 * even of one): any other given twice is a 400 naming it, since picking one of its values would
 * act on a request the caller did not make (`DELETE /v1/memories?user_id=a&user_id=b` deleting b's).
 */
export function coerceQuery(schema: JsonSchema, query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, QueryProperty>;
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    if (property.default !== undefined) out[key] = structuredClone(property.default);
  }
  const repeated: FieldError[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (property?.type === 'array') {
      out[key] = (Array.isArray(raw) ? raw : [raw]).map((value) => coerceValue(property.items?.type, value));
    } else if (Array.isArray(raw)) {
      repeated.push({ path: `/${key}`, message: `is given ${raw.length} times; send it once` });
    } else {
      out[key] = coerceValue(property?.type, raw);
    }
  }
  const first = repeated[0];
  if (first) {
    const more = repeated.length > 1 ? ` (and ${repeated.length - 1} more)` : '';
    throw badRequest('validation_failed', `Invalid query string: ${first.path} ${first.message}${more}.`, repeated);
  }
  return out;
}

/** The part of a query parameter's schema `coerceQuery` reads. */
interface QueryProperty {
  type?: string;
  default?: unknown;
  items?: { type?: string };
}

/** One query value as the schema's `type` reads it; what does not parse stays a string for the validator to reject. */
function coerceValue(type: string | undefined, value: string): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** The `{detail, code, errors?}` error body of /v1 and /v3. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

/** The `{error: {code, message}}` body of registry paths. */
export const REGISTRY_ERROR: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: ['unauthenticated', 'forbidden', 'not_found', 'invalid_argument', 'conflict', 'unavailable', 'internal'] },
        message: { type: 'string' },
      },
    },
  },
};

/** The error responses of a route: 400, 404 (`notFound` says of what) and any others. */
export function errorResponses(notFound: string, extra: Record<number, string> = {}): Record<number, ResponseSpec> {
  return {
    400: { description: 'Invalid input', schema: ERROR_SCHEMA },
    404: { description: notFound, schema: ERROR_SCHEMA },
    ...Object.fromEntries(Object.entries(extra).map(([status, description]) => [status, { description, schema: ERROR_SCHEMA }])),
  };
}
