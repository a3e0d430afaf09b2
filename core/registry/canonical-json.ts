import { createHash } from 'node:crypto';

/** How deep a value may nest before `canonicalJson` refuses it (a guard against stack exhaustion). */
export const MAX_JSON_DEPTH = 256;

/** A value `canonicalJson` cannot write: not JSON, or nested deeper than `MAX_JSON_DEPTH`. */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
}

/**
 * Canonical JSON: object keys sorted by UTF-16 code units at every level, arrays in their order,
 * no whitespace, strings and numbers as `JSON.stringify` writes them (the serialisation RFC 8785
 * prescribes). Two documents that differ only in key order or spacing give the same text.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  if (depth > MAX_JSON_DEPTH) throw new CanonicalJsonError(`nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalJsonError(`${value} is not a JSON number`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item: unknown) => write(item, depth + 1)).join(',')}]`;
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(object).sort()) {
      // as JSON.stringify does: a member without a value is left out
      if (object[key] === undefined) continue;
      members.push(`${JSON.stringify(key)}:${write(object[key], depth + 1)}`);
    }
    return `{${members.join(',')}}`;
  }
  throw new CanonicalJsonError(`a ${typeof value} is not a JSON value`);
}

/** `sha256:` and the hex SHA-256 of the canonical JSON text. */
export const digestOf = (canonical: string): string => `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
