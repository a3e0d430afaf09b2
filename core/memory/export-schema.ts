import { badRequest } from '../../lib/errors.js';
import { EXTRACTION_LIMITS, extractionSchemaProblem, type ExtractionProperty, type ExtractionSchema } from '../../providers/extractor.js';

/** A property of an export's schema the extraction models cannot fill, and why; it is exported as null. */
export interface UnsupportedField {
  field: string;
  reason: string;
}

/** An export's schema as extraction reads it, every top-level property it names, and the ones left null. */
export interface ExportSchema {
  extraction: ExtractionSchema;
  fields: string[];
  unsupported: UnsupportedField[];
}

type Json = Record<string, unknown>;

/** How many `$ref`s one property may go through: deeper is a cycle, or not worth following. */
const MAX_REF_DEPTH = 8;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads an export's JSON Schema (or an add's `structured_data_schema`) as mem0's users send it (a Pydantic model's `model_json_schema()`,
 * as an object or a string holding one) into the subset extraction fills: `$ref`s resolved to
 * `$defs` (or `definitions`), nullable `anyOf`/`oneOf` (`Optional[X]`) collapsed to X, one-member
 * `allOf` unwrapped, descriptions (or titles) and string enums kept, constraints the subset lacks
 * (lengths, formats, ranges, defaults) dropped. Nested objects, arrays of anything but strings,
 * and unions of several types are listed as unsupported. 400 when the schema is not a JSON object
 * schema, names no property extraction can fill, or is over a bound of `EXTRACTION_LIMITS`
 * (`schema_too_large`, checked on its text before it is read and on what was read).
 */
export function readExportSchema(input: unknown): ExportSchema {
  const schema = parseSchema(input);
  if (schema.type !== undefined && schema.type !== 'object') {
    throw badRequest('invalid_schema', `schema must describe an object (type "object"), not type ${JSON.stringify(schema.type)}.`);
  }
  if (!isObject(schema.properties) || Object.keys(schema.properties).length === 0) {
    throw badRequest('invalid_schema', 'The schema must list its fields under "properties", e.g. a Pydantic model\'s model_json_schema().');
  }
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  const properties: Record<string, ExtractionProperty> = {};
  const unsupported: UnsupportedField[] = [];
  for (const [field, property] of Object.entries(schema.properties)) {
    const read = readProperty(property, defs);
    if (typeof read === 'string') unsupported.push({ field, reason: read });
    else properties[field] = read;
  }
  if (Object.keys(properties).length === 0) {
    throw badRequest(
      'invalid_schema',
      `No field of the schema can be filled: ${unsupported.map((u) => `${u.field} (${u.reason})`).join('; ')}. Use string, enum, number, integer, boolean or list-of-strings fields.`,
    );
  }
  const extraction: ExtractionSchema = { type: 'object', properties };
  const about = text(schema.description) ?? text(schema.title);
  if (about !== undefined) extraction.description = about;
  const problem = extractionSchemaProblem(extraction);
  if (problem !== null) throw badRequest('schema_too_large', problem);
  return { extraction, fields: Object.keys(schema.properties), unsupported };
}

/** The schema object, from an object or a string holding one (the Python client's type hint is str). */
function parseSchema(input: unknown): Json {
  let schema = input;
  const length = typeof input === 'string' ? input.length : (JSON.stringify(input)?.length ?? 0);
  if (length > EXTRACTION_LIMITS.schemaLength) {
    throw badRequest('schema_too_large', `The schema's JSON is ${length} characters long; at most ${EXTRACTION_LIMITS.schemaLength} are allowed.`);
  }
  if (typeof input === 'string') {
    try {
      schema = JSON.parse(input);
    } catch (err) {
      throw badRequest('invalid_schema', `schema is a string but not JSON (${(err as Error).message}); send the JSON Schema object, or json.dumps of it.`);
    }
  }
  if (!isObject(schema)) throw badRequest('invalid_schema', 'schema must be a JSON Schema object (or a string holding one).');
  return schema;
}

/** One property in the extraction subset, or why it cannot be in it. */
function readProperty(input: unknown, defs: Json): ExtractionProperty | string {
  const property = resolve(input, defs);
  if (typeof property === 'string') return property;
  const description = text(property.description) ?? text(property.title);
  const about = description === undefined ? {} : { description };
  const type = property.type ?? (Array.isArray(property.enum) ? 'string' : undefined);
  switch (type) {
    case 'string': {
      const members = Array.isArray(property.enum) ? property.enum : property.const !== undefined ? [property.const] : undefined;
      if (members === undefined) return { type: 'string', ...about };
      if (!members.every((m) => typeof m === 'string')) return 'an enum of values other than strings';
      return { type: 'string', enum: members as string[], ...about };
    }
    case 'number':
    case 'integer':
    case 'boolean':
      return { type: type as 'number' | 'integer' | 'boolean', ...about };
    case 'array': {
      const items = resolve(property.items ?? {}, defs);
      if (typeof items === 'string' || items.type !== 'string') return 'a list of values other than strings';
      return { type: 'array', items: { type: 'string' }, ...about };
    }
    case 'object':
      return 'a nested object';
    default:
      return type === undefined ? 'no type' : `type ${JSON.stringify(type)}`;
  }
}

/**
 * A property with its `$ref` followed, `Optional[X]` (X or null, in `anyOf`, `oneOf` or a type
 * list) read as X, and a one-member `allOf` unwrapped; the outer description and title win over
 * the referenced ones. A string says why it cannot be read.
 */
function resolve(input: unknown, defs: Json, depth = 0): Json | string {
  if (!isObject(input)) return 'not a schema';
  if (depth > MAX_REF_DEPTH) return 'a reference too deep (or a cycle)';
  const { $ref, anyOf, oneOf, allOf, ...own } = input;
  const outer = { ...(own.description !== undefined ? { description: own.description } : {}), ...(own.title !== undefined ? { title: own.title } : {}) };
  if (typeof $ref === 'string') {
    const target = /^#\/(?:\$defs|definitions)\/(.+)$/.exec($ref)?.[1];
    if (target === undefined || !isObject(defs[target])) return `a reference that is not in $defs (${$ref})`;
    const inner = resolve(defs[target], defs, depth + 1);
    return typeof inner === 'string' ? inner : { ...inner, ...own, ...outer };
  }
  const union = anyOf ?? oneOf ?? (Array.isArray(allOf) && allOf.length === 1 ? allOf : undefined);
  if (union !== undefined) {
    if (!Array.isArray(union)) return 'a malformed anyOf/oneOf';
    const members = union.filter((m) => !(isObject(m) && m.type === 'null'));
    if (members.length !== 1) return 'a union of several types';
    const inner = resolve(members[0], defs, depth + 1);
    return typeof inner === 'string' ? inner : { ...inner, ...outer };
  }
  if (Array.isArray(own.type)) {
    const types = own.type.filter((t) => t !== 'null');
    if (types.length !== 1) return 'a union of several types';
    return { ...own, type: types[0] };
  }
  return own;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * Every top-level field a schema names, with the value extraction found for it: null when none
 * was found or the field is one extraction cannot fill (an export's result, an add's structured_data).
 */
export function everyField(extraction: ExtractionSchema, fields: readonly string[], found: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field, field in extraction.properties ? (found[field] ?? null) : null]));
}
