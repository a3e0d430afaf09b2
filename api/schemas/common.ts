import { Kind, Type, type ObjectOptions, type SchemaOptions, type Static, type StringOptions, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox';
import { PLAIN_NAME_PATTERN } from '../../lib/validation.js';

/*
 * Request schemas are TypeBox: one declaration gives the JSON Schema ajv enforces (and
 * /openapi.json shows) and the type a handler reads. The helpers below write the few shapes TypeBox
 * would spell another way (a union of literals or a nullable as `anyOf`, a bare object with
 * `properties: {}`) as Cairn's API states them, so validation messages stay what they are.
 */

/** `{type: 'string', enum}`: one of `values`. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** `{const: value}`, without the `type` TypeBox's Literal adds. */
export const Const = <const T extends string | number>(value: T, options: SchemaOptions = {}): TUnsafe<T> => Type.Unsafe<T>({ const: value, ...options });

/** The schema's values or null: its `type` becomes `[type, 'null']`. */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({ ...schema, [Kind]: 'Unsafe', type: [schema.type as string, 'null'] });

/** `{type: 'object'}` with no properties named: any object (the service checks what it holds). */
export const AnyObject = (options: ObjectOptions = {}): TUnsafe<Record<string, unknown>> => Type.Unsafe<Record<string, unknown>>({ type: 'object', ...options });

/** An object whose every value matches `value` (`additionalProperties: value`). */
export const Dictionary = <T extends TSchema>(value: T, options: ObjectOptions = {}): TUnsafe<Record<string, Static<T>>> =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', ...options, additionalProperties: value });

/**
 * A name or label a person gives in free text (a webhook's, an API key's): 1 to `maxLength`
 * characters, none a control or bidirectional formatting character (see `PLAIN_NAME_PATTERN`).
 * Names Cairn addresses things by (agents, knowledge bases, indexes) have stricter patterns of their own.
 */
export const PlainName = (maxLength: number, options: StringOptions = {}): TString =>
  Type.String({ minLength: 1, maxLength, pattern: PLAIN_NAME_PATTERN, ...options });

/**
 * The largest offset a list takes: 2^31 - 1, which every database binds as a plain integer
 * (SQLite overflows past 2^63 - 1, and MariaDB reads a longer literal as a syntax error).
 */
export const MAX_OFFSET = 2_147_483_647;

/**
 * A query parameter a request may leave out, which then takes the schema's `default`: optional in
 * the JSON Schema (and /openapi.json), always present for the handler, since `mount` gives a left-out
 * query parameter its default before validating. Only for query schemas: bodies get no defaults.
 */
export const QueryDefault = <T extends TSchema>(schema: T): T => {
  if (schema.default === undefined) throw new Error('QueryDefault needs a schema that declares its default.');
  return Type.Optional(schema) as unknown as T;
};

/** Paging parameters every list accepts. */
export const PAGING = {
  limit: QueryDefault(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'At most 100; default 50.' })),
  offset: QueryDefault(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: `Default 0; at most ${MAX_OFFSET}.` })),
};

/** The query of a list that takes nothing but paging. */
export const PAGING_QUERY = Type.Object(PAGING, { additionalProperties: false });

/**
 * The `Idempotency-Key` header of a write a client may retry (the IETF draft's, as Stripe takes
 * it): 1 to 255 printable ASCII characters, neither starting nor ending with a space (HTTP drops
 * those, so a key that had them would not be the key sent).
 */
export const IDEMPOTENCY_HEADERS = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$',
      description:
        'A key of your choosing (a UUID) that makes retrying this write safe: the same key with the same body within 24 hours answers what the first request answered (status and body, with Idempotent-Replayed: true) without storing again, even when that request was answered 503; with another body it is a 422. Keys are per project.',
    }),
  ),
});
