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
