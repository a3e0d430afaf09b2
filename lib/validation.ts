import { Ajv, type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { badRequest, type FieldError } from './errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext its callable sits on `.default`.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

/**
 * The one ajv instance. Request schemas, job payload schemas and (later) record schemas are all
 * compiled here once, and the same schema objects feed `/openapi.json`.
 */
export const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false, coerceTypes: false });
addFormats(ajv);

export type { JSONSchemaType };

/** A JSON schema object as written in Cairn's route and job definitions. */
export type JsonSchema = Record<string, unknown>;

/**
 * The `pattern` of a name a person gives (a webhook's, an API key's): no C0 or C1 control
 * character (a NUL, a newline or an escape sequence, which cut or forge log lines and terminal
 * output) and no bidirectional control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069),
 * which make a name display other than it reads. Written with `\u` escapes, which both ajv and the
 * Python regular expressions of the fuzzer reading /openapi.json understand.
 */
export const PLAIN_NAME_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]*$';

/** What a value failing `PLAIN_NAME_PATTERN` is told, instead of the pattern itself. */
const PLAIN_NAME_MESSAGE = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F) or bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)';

/** Turns ajv errors into `{path, message}` pairs a person can act on. */
export function describeErrors(errors: ErrorObject[] | null | undefined, root = ''): FieldError[] {
  return (errors ?? []).map((e) => {
    let path = `${root}${e.instancePath}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      path = `${path}/${extra}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      path = `${path}/${missing}`;
      message = 'is required';
    } else if (e.keyword === 'pattern' && (e.params as { pattern: string }).pattern === PLAIN_NAME_PATTERN) {
      message = PLAIN_NAME_MESSAGE;
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      message = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    return { path: path === '' ? '/' : path, message };
  });
}

/**
 * Validates `data` and returns it typed, or throws a 400 whose `detail` names the first problem
 * and whose `errors` list all of them.
 */
export function assertValid<T>(validate: ValidateFunction<T>, data: unknown, root: string, what: string): T {
  if (validate(data)) return data;
  const errors = describeErrors(validate.errors, root);
  const first = errors[0];
  const detail = first
    ? `Invalid ${what}: ${first.path} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}.`
    : `Invalid ${what}.`;
  throw badRequest('validation_failed', detail, errors);
}

/** How deeply a request's JSON may nest objects and arrays. */
export const MAX_JSON_DEPTH = 64;

const LONE_SURROGATE = /\p{Surrogate}/u;

/** True when `text` holds a UTF-16 surrogate without its pair (not a Unicode string: no storage keeps it). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** An object or array met while checking request JSON; its path is worked out only for an error. */
interface JsonFrame {
  value: object;
  depth: number;
  parent: JsonFrame | undefined;
  key: string;
}

const pathOf = (frame: JsonFrame | undefined, last?: string): string => {
  const tokens = last === undefined ? [] : [last];
  for (let f = frame; f?.parent; f = f.parent) tokens.push(f.key);
  return tokens.length === 0 ? '' : `/${tokens.reverse().map(pointerToken).join('/')}`;
};

/**
 * Refuses request JSON that nothing downstream could handle safely: nested deeper than
 * `MAX_JSON_DEPTH` (serialising or walking it recursively would overflow the stack), or holding
 * a string or key with a lone surrogate (stored, it would turn into replacement characters and
 * never match again). Walks the value with an explicit stack, never recursively; only objects and
 * arrays are stacked and no path is built unless something is refused, so a body of millions of
 * numbers (a vector upsert) costs one pass over them.
 */
export function assertSafeJson(value: unknown, what = 'request body'): void {
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) throw loneSurrogate(what, '');
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const stack: JsonFrame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop() as JsonFrame;
    if (frame.depth > MAX_JSON_DEPTH) {
      const path = pathOf(frame);
      throw badRequest('too_deep', `The ${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, [
        { path: path === '' ? '/' : path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    const visit = (child: unknown, key: string): void => {
      if (typeof child === 'string') {
        if (hasLoneSurrogate(child)) throw loneSurrogate(what, pathOf(frame, key));
      } else if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      }
    };
    const current = frame.value;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        const child: unknown = current[i];
        // numbers, booleans and null need nothing: the common case of a long array costs no call
        if (typeof child === 'string' || (child !== null && typeof child === 'object')) visit(child, String(i));
      }
    } else {
      for (const key of Object.keys(current)) {
        if (hasLoneSurrogate(key)) throw loneSurrogate(what, pathOf(frame, key));
        visit((current as Record<string, unknown>)[key], key);
      }
    }
  }
}

const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

const loneSurrogate = (what: string, path: string) =>
  badRequest('invalid_unicode', `The ${what} holds a string with an unpaired UTF-16 surrogate (such as "\\ud800"), which is not valid Unicode text.`, [
    { path: path === '' ? '/' : path, message: 'holds an unpaired surrogate' },
  ]);
