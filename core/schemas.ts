import { createHash } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { isUniqueViolation } from '../db/repositories/indexes.repository.js';
import type { NamedVersionRow, NewVersion, SchemasRepository } from '../db/repositories/schemas.repository.js';
import { badRequest, conflict, notFound, type FieldError } from '../lib/errors.js';
import { newId, nowMs } from '../lib/time.js';
import { ajv, assertValid, type JsonSchema } from '../lib/validation.js';
import { EXTRACTION_LIMITS } from '../providers/extractor.js';
import type { ConfigCache, ConfigSnapshot } from './config-cache.js';

/*
 * Typed memory: record schemas in a restricted JSON-Schema subset, versioned per project.
 *
 * What records build on (everything below is pure except the `Schemas` service):
 * - `Schemas.get(projectId, name)` → the latest `SchemaVersion` to validate a new record against;
 *   `Schemas.getVersion(projectId, schemaId, version)` → the pinned version of a stored record.
 * - `validateRecord(version, record)` throws 400 `validation_failed` with every problem as
 *   `{path: '/record/<field>', message}`; `recordValidator(json_schema, {relaxRequired})` is the
 *   cached compiled check beneath it (extraction relaxes `required`).
 * - `renderEmbedText(version, record)` → the text to embed for a record.
 * - `version.retention` → `{max_age_days?, max_count?}` or null.
 */

/** Limits of typed memory (spec "Limits"). */
export const SCHEMA_LIMITS = {
  schemasPerProject: 32,
  propertiesPerSchema: 32,
  embedTemplateLength: 4000,
  descriptionLength: 2000,
} as const;

/** Schema names: they appear in paths (`/v1/records/{schema}`) and in memory-search filters. */
export const SCHEMA_NAME = '^[a-z][a-z0-9_-]{0,63}$';

/**
 * Property names: lowercase identifiers, because they appear verbatim as `{{field}}` template
 * placeholders, as JSON-pointer segments in errors, and as keys in memory-search metadata filters.
 */
export const PROPERTY_NAME = '^[a-z_][a-z0-9_]{0,63}$';
const PROPERTY_NAME_RE = new RegExp(PROPERTY_NAME);
const SCHEMA_NAME_RE = new RegExp(SCHEMA_NAME);

/** The scalar property types of the subset. */
export const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type ScalarType = (typeof SCALAR_TYPES)[number];

/** One property: a scalar, a string enum, or an array of strings; nothing else. */
export type RecordProperty =
  | { type: ScalarType; description?: string }
  | { type: 'string'; enum: string[]; description?: string }
  | { type: 'array'; items: { type: 'string' }; description?: string };

/** A record schema in the restricted subset (checked by `checkRecordSchema`). */
export interface RecordJsonSchema {
  type: 'object';
  properties: Record<string, RecordProperty>;
  required?: string[];
  additionalProperties?: false;
  description?: string;
  title?: string;
}

/** Retention of a schema's records: delete older than `max_age_days`; keep the newest `max_count` per (schema, user_id). */
export interface Retention {
  max_age_days?: number;
  max_count?: number;
}

/** The values of a typed record, as its schema allows them. */
export type RecordValues = Record<string, string | number | boolean | string[]>;

/** A record schema version as the API shows it (`created_at` in epoch ms; routes format it). */
export interface RecordSchemaView {
  name: string;
  version: number;
  json_schema: RecordJsonSchema;
  /** Always a template: the stored one, or the default (one `field: {{field}}` line per property). */
  embed_template: string;
  retention: Retention | null;
  description: string | null;
  created_at: number;
}

/** One immutable version of a schema, with the ids records pin (`schema_id`, `version`). */
export interface SchemaVersion extends RecordSchemaView {
  schema_id: string;
  project_id: string;
}

/** Register: creates version 1. */
export interface RegisterSchemaInput {
  name: string;
  json_schema: unknown;
  /** Omitted or null: the default template. */
  embed_template?: string | null;
  /** Omitted or null: records are kept until deleted. */
  retention?: Retention | null;
  description?: string | null;
}

/**
 * Publish: creates version N+1. `embed_template`, `retention` and `description` carry over from
 * version N when omitted; null clears them (the template back to the default).
 */
export interface PublishSchemaInput {
  json_schema: unknown;
  embed_template?: string | null;
  retention?: Retention | null;
  description?: string | null;
}

// ---------------------------------------------------------------------------------------------
// The restricted subset

const ROOT_KEYWORDS = ['type', 'properties', 'required', 'additionalProperties', 'description', 'title'];
const PROPERTY_KEYWORDS: Record<string, string[]> = {
  string: ['type', 'description', 'enum'],
  number: ['type', 'description'],
  integer: ['type', 'description'],
  boolean: ['type', 'description'],
  array: ['type', 'description', 'items'],
};
const PROPERTY_TYPES = Object.keys(PROPERTY_KEYWORDS);

/** One JSON-pointer segment (RFC 6901 escaping). */
const segment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * Checks a JSON schema against the restricted subset and returns every violation, located by
 * JSON pointers under `at`. An empty list means the schema is a valid `RecordJsonSchema`.
 */
export function checkRecordSchema(schema: unknown, at = '/json_schema'): FieldError[] {
  const errors: FieldError[] = [];
  const fail = (path: string, message: string) => errors.push({ path, message });
  if (!isPlainObject(schema)) {
    fail(at, `must be a JSON object with type "object" and properties (got ${kind(schema)})`);
    return errors;
  }
  for (const key of Object.keys(schema)) {
    if (!ROOT_KEYWORDS.includes(key)) {
      fail(`${at}/${segment(key)}`, `is not supported in a record schema; the root may only have ${ROOT_KEYWORDS.join(', ')}`);
    }
  }
  if (schema.type !== 'object') fail(`${at}/type`, 'must be "object": a record is one flat object');
  for (const key of ['description', 'title']) {
    if (key in schema && typeof schema[key] !== 'string') fail(`${at}/${key}`, 'must be a string');
  }
  if ('additionalProperties' in schema && schema.additionalProperties !== false) {
    fail(`${at}/additionalProperties`, 'may only be false (unknown fields are always rejected)');
  }

  const properties = schema.properties;
  if (!('properties' in schema)) {
    fail(`${at}/properties`, 'is required: an object mapping each field name to its type');
  } else if (!isPlainObject(properties)) {
    fail(`${at}/properties`, `must be an object mapping each field name to its type (got ${kind(properties)})`);
  } else {
    const names = Object.keys(properties);
    if (names.length === 0) fail(`${at}/properties`, 'must declare at least one property');
    if (names.length > SCHEMA_LIMITS.propertiesPerSchema) {
      fail(`${at}/properties`, `declares ${names.length} properties; at most ${SCHEMA_LIMITS.propertiesPerSchema} are allowed`);
    }
    for (const name of names) checkProperty(name, properties[name], `${at}/properties/${segment(name)}`, fail);
    const members = names.reduce((sum, name) => {
      const values = (properties[name] as { enum?: unknown } | undefined)?.enum;
      return sum + (Array.isArray(values) ? values.length : 0);
    }, 0);
    if (members > EXTRACTION_LIMITS.enumMembers) {
      fail(`${at}/properties`, `has ${members} enum members in all; at most ${EXTRACTION_LIMITS.enumMembers} are allowed, so that extraction stays bounded`);
    }
  }

  if ('required' in schema) {
    const required = schema.required;
    if (!Array.isArray(required)) {
      fail(`${at}/required`, 'must be an array of property names');
    } else {
      const seen = new Set<string>();
      required.forEach((entry: unknown, i) => {
        const path = `${at}/required/${i}`;
        if (typeof entry !== 'string') fail(path, 'must be a property name (string)');
        else if (seen.has(entry)) fail(path, `repeats "${entry}"`);
        else if (isPlainObject(properties) && !(entry in properties)) fail(path, `names "${entry}", which is not in properties`);
        if (typeof entry === 'string') seen.add(entry);
      });
    }
  }
  return errors;
}

function checkProperty(name: string, property: unknown, path: string, fail: (path: string, message: string) => void): void {
  if (!PROPERTY_NAME_RE.test(name)) {
    fail(path, `the name "${name}" must match ${PROPERTY_NAME} (lowercase letters, digits and underscores), because it is used in {{placeholders}} and filters`);
  }
  // Matches the pattern but would become the prototype of a plain object holding the values.
  if (name === '__proto__') fail(path, 'the name "__proto__" is reserved');
  if (!isPlainObject(property)) {
    fail(path, `must be an object such as {"type": "string"} (got ${kind(property)})`);
    return;
  }
  const type = property.type;
  if (type === 'object') {
    fail(`${path}/type`, 'nested objects are not allowed: properties are one level only');
  } else if (typeof type !== 'string' || !PROPERTY_TYPES.includes(type)) {
    fail(`${path}/type`, `must be one of ${PROPERTY_TYPES.join(', ')} (string-enum is {"type": "string", "enum": [...]}, string-array is {"type": "array", "items": {"type": "string"}})`);
  }
  const allowed = typeof type === 'string' ? PROPERTY_KEYWORDS[type] : undefined;
  for (const key of Object.keys(property)) {
    if (key === 'type') continue;
    if (allowed ? !allowed.includes(key) : !['description', 'enum', 'items'].includes(key)) {
      fail(`${path}/${segment(key)}`, `is not supported${allowed ? ` on a ${String(type)} property (allowed: ${allowed.join(', ')})` : ''}`);
    }
  }
  if ('description' in property && typeof property.description !== 'string') fail(`${path}/description`, 'must be a string');
  else if (typeof property.description === 'string' && property.description.length > SCHEMA_LIMITS.descriptionLength) {
    fail(`${path}/description`, `is ${property.description.length} characters long; at most ${SCHEMA_LIMITS.descriptionLength} are allowed`);
  }
  if ('enum' in property && type === 'string') {
    const values = property.enum;
    if (!Array.isArray(values) || values.length === 0) {
      fail(`${path}/enum`, 'must be a non-empty array of strings');
    } else {
      const seen = new Set<string>();
      values.forEach((value: unknown, i) => {
        if (typeof value !== 'string' || value === '') fail(`${path}/enum/${i}`, 'must be a non-empty string');
        else if (value.length > EXTRACTION_LIMITS.enumMemberLength) fail(`${path}/enum/${i}`, `is ${value.length} characters long; at most ${EXTRACTION_LIMITS.enumMemberLength} are allowed`);
        else if (seen.has(value)) fail(`${path}/enum/${i}`, `repeats "${value}"`);
        if (typeof value === 'string') seen.add(value);
      });
    }
  }
  if (type === 'array') {
    const items = property.items;
    if (!('items' in property)) fail(`${path}/items`, 'is required on an array property and must be {"type": "string"}');
    else if (!isPlainObject(items) || items.type !== 'string' || Object.keys(items).length !== 1) {
      fail(`${path}/items`, 'must be exactly {"type": "string"}: arrays hold strings only');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Embed templates and retention

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The field names a template's `{{field}}` placeholders refer to, in order of appearance. */
export function templatePlaceholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

/** The template used when none is given: one `field: {{field}}` line per property. */
export function defaultEmbedTemplate(schema: RecordJsonSchema): string {
  return Object.keys(schema.properties)
    .map((name) => `${name}: {{${name}}}`)
    .join('\n');
}

/** Checks a template's length and that every placeholder names one of `properties`. */
export function checkEmbedTemplate(template: string, properties: string[], at = '/embed_template'): FieldError[] {
  const errors: FieldError[] = [];
  if (template.length > SCHEMA_LIMITS.embedTemplateLength) {
    errors.push({ path: at, message: `is ${template.length} characters long; at most ${SCHEMA_LIMITS.embedTemplateLength} are allowed` });
  }
  if (template.trim() === '') errors.push({ path: at, message: 'must not be empty (send null or omit it for the default template)' });
  const unknown = new Set(templatePlaceholders(template).filter((name) => !properties.includes(name)));
  for (const name of unknown) {
    errors.push({
      path: at,
      message: `placeholder {{${name}}} names no property of json_schema (properties: ${properties.join(', ') || 'none'})`,
    });
  }
  return errors;
}

/** The request-body schema of `retention`, also used by the service for non-HTTP callers. */
export const RETENTION_SCHEMA: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  minProperties: 1,
  properties: {
    max_age_days: { type: 'integer', minimum: 1, description: 'Delete records older than this many days.' },
    max_count: { type: 'integer', minimum: 1, description: 'Keep only the newest N records per (schema, user_id).' },
  },
  description: 'At least one of max_age_days and max_count; null for no retention. Applied by a scheduled sweep.',
};
const validateRetention = ajv.compile(RETENTION_SCHEMA);

function retentionErrors(retention: unknown, at = '/retention'): FieldError[] {
  if (validateRetention(retention)) return [];
  return (validateRetention.errors ?? []).map((e) => {
    if (e.keyword === 'additionalProperties') {
      return { path: `${at}${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`, message: 'is not a known field (max_age_days, max_count)' };
    }
    if (e.keyword === 'minProperties') return { path: at, message: 'must set max_age_days, max_count or both (or be null)' };
    return { path: `${at}${e.instancePath}`, message: e.message ?? 'is invalid' };
  });
}

function throwIfInvalid(errors: FieldError[]): void {
  if (errors.length === 0) return;
  const first = errors[0] as FieldError;
  throw badRequest(
    'invalid_schema',
    `The record schema is not valid: ${first.path} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}.`,
    errors,
  );
}

/**
 * Checks a whole definition: the subset, the template when one is given (`undefined`/null are
 * the default, which is always valid) and the retention. Throws 400 `invalid_schema` listing all.
 */
export function assertDefinition(input: { json_schema: unknown; embed_template?: string | null; retention?: unknown }): RecordJsonSchema {
  const errors = checkRecordSchema(input.json_schema);
  const schema = input.json_schema as RecordJsonSchema;
  if (typeof input.embed_template === 'string') {
    const names = isPlainObject(schema) && isPlainObject(schema.properties) ? Object.keys(schema.properties) : [];
    errors.push(...checkEmbedTemplate(input.embed_template, names));
  }
  if (input.retention !== undefined) errors.push(...retentionErrors(input.retention));
  throwIfInvalid(errors);
  return schema;
}

// ---------------------------------------------------------------------------------------------
// Record validation

const VALIDATOR_CACHE_SIZE = 500;
const validators = new Map<string, { schema: JsonSchema; validate: ValidateFunction<RecordValues> }>();

/**
 * A compiled ajv validator for records of `schema` (which must be in the subset): unknown fields
 * rejected, types enforced (integer is a whole number, number any), enums, string-array items,
 * and `required` unless `relaxRequired` (extraction accepts partial records). Validators are
 * cached by a hash of the schema's validating parts, so each is compiled once (LRU, 500).
 */
export function recordValidator(schema: RecordJsonSchema, options: { relaxRequired?: boolean } = {}): ValidateFunction<RecordValues> {
  const compiled = compiledSchema(schema, options.relaxRequired === true);
  const key = createHash('sha256').update(JSON.stringify(compiled)).digest('base64url');
  const hit = validators.get(key);
  if (hit) {
    // Re-insert so the Map's order is least recently used first.
    validators.delete(key);
    validators.set(key, hit);
    return hit.validate;
  }
  throwIfInvalid(checkRecordSchema(schema));
  const entry = { schema: compiled, validate: ajv.compile(compiled) as ValidateFunction<RecordValues> };
  validators.set(key, entry);
  if (validators.size > VALIDATOR_CACHE_SIZE) {
    const [oldestKey, oldest] = validators.entries().next().value as [string, { schema: JsonSchema }];
    validators.delete(oldestKey);
    ajv.removeSchema(oldest.schema);
  }
  return entry.validate;
}

/** The ajv schema records are checked with: the declared types, strictly closed, no descriptions. */
function compiledSchema(schema: RecordJsonSchema, relaxRequired: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const rule: JsonSchema = { ...property };
    delete rule.description;
    properties[name] = rule;
  }
  const required = relaxRequired ? [] : (schema.required ?? []);
  return { type: 'object', additionalProperties: false, properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * Validates a record against a schema version and returns it typed, or throws 400
 * `validation_failed` listing every problem as `{path, message}` under `at` (`/record/email`).
 */
export function validateRecord(version: SchemaVersion, record: unknown, at = '/record', options: { relaxRequired?: boolean } = {}): RecordValues {
  return assertValid(recordValidator(version.json_schema, options), record, at, `record for schema "${version.name}" version ${version.version}`);
}

/** A value as embed text: arrays joined with ", ", nothing for missing values. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(asText).filter((v) => v !== '').join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value as string | number | boolean).trim();
}

/**
 * The text embedded for a record: the version's template with each `{{field}}` replaced, lines
 * whose placeholders are all empty dropped (lines without placeholders kept), trimmed.
 */
export function renderEmbedText(version: Pick<SchemaVersion, 'embed_template'>, record: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const line of version.embed_template.split(/\r?\n/)) {
    let placeholders = 0;
    let filled = 0;
    const rendered = line.replace(PLACEHOLDER, (_match, name: string) => {
      placeholders += 1;
      const text = Object.hasOwn(record, name) ? asText(record[name]) : '';
      if (text !== '') filled += 1;
      return text;
    });
    if (placeholders > 0 && filled === 0) continue;
    lines.push(rendered);
  }
  return lines.join('\n').trim();
}

// ---------------------------------------------------------------------------------------------
// The service

function toVersion(row: NamedVersionRow): SchemaVersion {
  const jsonSchema = JSON.parse(row.json_schema) as RecordJsonSchema;
  return {
    schema_id: row.schema_id,
    project_id: row.project_id,
    name: row.name,
    version: Number(row.version),
    json_schema: jsonSchema,
    embed_template: row.embed_template ?? defaultEmbedTemplate(jsonSchema),
    retention: row.retention === null ? null : (JSON.parse(row.retention) as Retention),
    description: row.description,
    created_at: Number(row.created_at),
  };
}

/** The API view of a version (drops the ids). */
export function toView(version: SchemaVersion): RecordSchemaView {
  const { name, version: number, json_schema, embed_template, retention, description, created_at } = version;
  return { name, version: number, json_schema, embed_template, retention, description, created_at };
}

/**
 * Record schemas of a project. Registration creates version 1; publishing adds N+1 (atomically,
 * under a lock on the schema row); versions never change, so records pin `(schema_id, version)`.
 * Single versions are read from the project's configuration cache (every record write reads the
 * latest); registering and publishing go through `ConfigCache.write`.
 */
export class Schemas {
  constructor(
    private readonly repository: SchemasRepository,
    private readonly cache: ConfigCache,
  ) {}

  /** Creates version 1. 409 `schema_exists` for a taken name; 400 `too_many_schemas` past the limit. */
  async register(projectId: string, input: RegisterSchemaInput): Promise<SchemaVersion> {
    return this.cache.write(projectId, () => this.insert(projectId, input));
  }

  private async insert(projectId: string, input: RegisterSchemaInput): Promise<SchemaVersion> {
    const nameErrors = SCHEMA_NAME_RE.test(input.name) ? [] : [{ path: '/name', message: `must match ${SCHEMA_NAME}` }];
    throwIfInvalid(nameErrors);
    const jsonSchema = assertDefinition(input);
    const now = nowMs();
    const id = newId();
    const first: NewVersion = {
      json_schema: JSON.stringify(jsonSchema),
      embed_template: input.embed_template ?? null,
      retention: input.retention ? JSON.stringify(input.retention) : null,
      description: input.description ?? null,
      created_at: now,
    };
    let outcome: 'inserted' | 'full';
    try {
      outcome = await this.repository.insertIfRoom(
        { id, project_id: projectId, name: input.name, description: first.description, latest_version: 1, created_at: now, updated_at: now },
        first,
        SCHEMA_LIMITS.schemasPerProject,
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw this.taken(input.name);
      throw err;
    }
    if (outcome === 'full') {
      throw badRequest(
        'too_many_schemas',
        `This project already has ${SCHEMA_LIMITS.schemasPerProject} record schemas, the most allowed. Publish a new version of an existing schema instead.`,
      );
    }
    return toVersion({ ...first, schema_id: id, project_id: projectId, version: 1, name: input.name });
  }

  /**
   * Publishes version N+1. Omitted `embed_template`, `retention` and `description` carry over
   * from version N (a carried-over template must still name existing properties); null clears.
   */
  async publish(projectId: string, name: string, input: PublishSchemaInput): Promise<SchemaVersion> {
    return this.cache.write(projectId, () => this.insertVersion(projectId, name, input));
  }

  private async insertVersion(projectId: string, name: string, input: PublishSchemaInput): Promise<SchemaVersion> {
    const jsonSchema = assertDefinition(input);
    const properties = Object.keys(jsonSchema.properties);
    const row = await this.repository.publish(projectId, name, (previous) => {
      const template = input.embed_template === undefined ? previous.embed_template : input.embed_template;
      if (input.embed_template === undefined && template !== null) {
        throwIfInvalid(
          checkEmbedTemplate(template, properties).map((e) => ({
            ...e,
            message: `${e.message}; the template was carried over from version ${previous.version}, so send embed_template (or null for the default)`,
          })),
        );
      }
      return {
        json_schema: JSON.stringify(jsonSchema),
        embed_template: template,
        retention: input.retention === undefined ? previous.retention : input.retention === null ? null : JSON.stringify(input.retention),
        description: input.description === undefined ? previous.description : input.description,
        created_at: nowMs(),
      };
    });
    if (!row) throw this.missing(name);
    return toVersion(row);
  }

  /** Whether the project has a record schema of that name. */
  async exists(projectId: string, name: string): Promise<boolean> {
    return (await this.version(await this.cache.at(projectId), projectId, name)) !== null;
  }

  /** The latest version, or `version` when given (shared: do not change). 404 for an unknown schema or version. */
  async get(projectId: string, name: string, version?: number): Promise<SchemaVersion> {
    const config = await this.cache.at(projectId);
    const found = await this.version(config, projectId, name, version);
    if (found) return found;
    if (version !== undefined && (await this.version(config, projectId, name)) !== null) {
      throw notFound(`Record schema "${name}" has no version ${version}.`, 'schema_version_not_found');
    }
    throw this.missing(name);
  }

  /** A pinned version by schema id, for records written against it (shared: do not change). 404 when it does not exist. */
  async getVersion(projectId: string, schemaId: string, version: number): Promise<SchemaVersion> {
    const config = await this.cache.at(projectId);
    const found = await config.read(`schema-id:${schemaId}@${version}`, async () => {
      const row = await this.repository.findById(projectId, schemaId, version);
      return row ? toVersion(row) : null;
    });
    if (!found) throw notFound(`Record schema version ${version} of schema ${schemaId} does not exist.`, 'schema_version_not_found');
    return found;
  }

  /** The latest version of each schema, schemas newest first. */
  async list(projectId: string, limit: number, offset: number): Promise<SchemaVersion[]> {
    return (await this.repository.listLatest(projectId, limit, offset)).map(toVersion);
  }

  /** Every version of a schema, newest first. 404 for an unknown schema. */
  async versions(projectId: string, name: string, limit: number, offset: number): Promise<SchemaVersion[]> {
    const rows = await this.repository.listVersions(projectId, name, limit, offset);
    if (rows.length === 0 && !(await this.repository.exists(projectId, name))) throw this.missing(name);
    return rows.map(toVersion);
  }

  /** A version by schema name, the latest when `version` is omitted; null when there is none. */
  private version(config: ConfigSnapshot, projectId: string, name: string, version?: number): Promise<SchemaVersion | null> {
    return config.read(`schema:${name}@${version ?? 'latest'}`, async () => {
      const row = await this.repository.findByName(projectId, name, version);
      return row ? toVersion(row) : null;
    });
  }

  private missing(name: string) {
    return notFound(`No record schema named "${name}" in this project.`, 'schema_not_found');
  }

  private taken(name: string) {
    return conflict(`A record schema named "${name}" already exists in this project; publish a new version with POST /v1/schemas/${name}.`, 'schema_exists');
  }
}
