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

/**
 * Refuses request JSON that nothing downstream could handle safely: nested deeper than
 * `MAX_JSON_DEPTH` (serialising or walking it recursively would overflow the stack), or holding
 * a string or key with a lone surrogate (stored, it would turn into replacement characters and
 * never match again). Walks the value with an explicit stack, never recursively.
 */
export function assertSafeJson(value: unknown, what = 'request body'): void {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown; depth: number; path: string };
    const current = item.value;
    if (typeof current === 'string') {
      if (hasLoneSurrogate(current)) throw loneSurrogate(what, item.path);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > MAX_JSON_DEPTH) {
      throw badRequest('too_deep', `The ${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, [
        { path: item.path === '' ? '/' : item.path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], depth, path: `${item.path}/${i}` });
    } else {
      for (const [key, child] of Object.entries(current as Record<string, unknown>)) {
        const path = `${item.path}/${pointerToken(key)}`;
        if (hasLoneSurrogate(key)) throw loneSurrogate(what, path);
        stack.push({ value: child, depth, path });
      }
    }
  }
}

const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

const loneSurrogate = (what: string, path: string) =>
  badRequest('invalid_unicode', `The ${what} holds a string with an unpaired UTF-16 surrogate (such as "\\ud800"), which is not valid Unicode text.`, [
    { path: path === '' ? '/' : path, message: 'holds an unpaired surrogate' },
  ]);
