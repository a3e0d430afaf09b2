import { badRequest } from '../../lib/errors.js';
import { ENTITY_IDS, type EntityIds } from '../../core/memory/rows.js';

/**
 * The entity ids of a `filters` query parameter, as mem0's delete_all sends it. Its Python client
 * passes the dict to httpx as a query value, which writes the dict's Python form
 * (`{'user_id': 'alice'}`); JSON (`{"user_id": "alice"}`) is read too. Only a flat object of entity
 * ids with string values is a filter a delete can name; anything else is a 400 saying so.
 */
export function queryFilters(text: string): EntityIds {
  const pairs = parsePairs(text);
  if (pairs === null) {
    throw badRequest('validation_failed', `filters must be an object of entity ids, e.g. {"user_id": "alice"}; got ${JSON.stringify(text.slice(0, 200))}.`);
  }
  const filters: EntityIds = {};
  for (const [key, value] of pairs) {
    if (!(ENTITY_IDS as readonly string[]).includes(key)) {
      throw badRequest('validation_failed', `filters.${key} cannot name memories to delete; use ${ENTITY_IDS.join(', ')}.`);
    }
    filters[key as keyof EntityIds] = value;
  }
  return filters;
}

const TOKEN = /\s*(?:([{}:,])|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/y;
const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '/': '/' };

/** The key/value pairs of a flat object of strings in Python or JSON form; null when it is not one. */
function parsePairs(text: string): Array<[string, string]> | null {
  const tokens: Array<{ punct?: string; text?: string }> = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length && text.slice(TOKEN.lastIndex).trim() !== '') {
    const m = TOKEN.exec(text);
    if (!m) return null;
    if (m[1] !== undefined) tokens.push({ punct: m[1] });
    else {
      const unescaped = unescape(m[2] ?? m[3] ?? '');
      if (unescaped === null) return null;
      tokens.push({ text: unescaped });
    }
  }
  if (tokens[0]?.punct !== '{' || tokens[tokens.length - 1]?.punct !== '}') return null;
  const inner = tokens.slice(1, -1);
  const pairs: Array<[string, string]> = [];
  for (let at = 0; at < inner.length; at += 4) {
    const [key, colon, value, comma] = inner.slice(at, at + 4);
    if (key?.text === undefined || colon?.punct !== ':' || value?.text === undefined) return null;
    if (comma !== undefined && comma.punct !== ',') return null;
    pairs.push([key.text, value.text]);
  }
  return pairs;
}

/** A quoted string's text with its Python/JSON escapes resolved; null for an escape neither has. */
function unescape(raw: string): string | null {
  let bad = false;
  const text = raw.replace(/\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/g, (_, x?: string, u?: string, big?: string, c?: string) => {
    const code = parseInt(x ?? u ?? big ?? '', 16);
    if (!Number.isNaN(code) && code <= 0x10ffff) return String.fromCodePoint(code);
    const simple = c === undefined ? undefined : SIMPLE_ESCAPES[c];
    if (simple === undefined) bad = true;
    return simple ?? '';
  });
  return bad ? null : text;
}
