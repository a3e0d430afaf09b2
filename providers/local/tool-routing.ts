import { findDates, findEmails, findNumbers, findUrls, type Found } from './text-values.js';
import type { JsonSchema } from '../../lib/validation.js';
import type { ToolSpec } from '../language-model.js';
import { contentStems, identifierWords, stem } from './text-stems.js';

// Rule-based tool routing of the local language model: which offered tool a user message asks
// for, and the tool's arguments as read from the message. Pure and deterministic.

/** A tool the message asks for, with the arguments read from it. */
export interface RoutedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Verbs and nouns every tool description uses; sharing them with a message shows no intent. */
const GENERIC = new Set(
  'get fetch find search look lookup check retrieve list show create update set make do run call query return give provide tool function api data information info detail details current specific given user customer'
    .split(' ')
    .map(stem),
);

/** Name words of a parameter that only say "identifier of": `order_id` is labelled by "order" too. */
const ID_WORDS = new Set(['id', 'ids', 'number', 'num', 'no', 'nr', 'code', 'ref', 'reference', 'key', 'identifier']);
const LOCATION_WORDS = new Set(['city', 'location', 'place', 'town', 'country', 'region', 'area', 'address', 'destination', 'origin', 'where', 'state', 'province', 'airport', 'venue']);
const ORIGIN_WORDS = new Set(['origin', 'from', 'source', 'departure', 'start']);
const DESTINATION_WORDS = new Set(['destination', 'to', 'target', 'arrival', 'dest']);
const QUERY_WORDS = new Set(['query', 'q', 'search', 'term', 'terms', 'keyword', 'keywords', 'topic', 'question']);
/** Capitalised words after "in" or "for" that are times, not places. */
const NOT_PLACES = new Set(
  'i the a an my our your this that today tomorrow tonight yesterday monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december'.split(' '),
);

const WORD_START = String.raw`(?<![\p{L}\p{N}_])`;
const WORD_END = String.raw`(?![\p{L}\p{N}])`;
/** A literal as a case-insensitive pattern (the `i` flag would also let `\p{Lu}` match lower case). */
function ci(text: string): string {
  return escape(text).replace(/\p{L}/gu, (ch) => (ch.toLowerCase() === ch.toUpperCase() ? ch : `[${ch.toLowerCase()}${ch.toUpperCase()}]`));
}

/** Between a label and its value: `order 12345`, `order #12345`, `order_id: 12345`, `order number is 12345`. */
const SEPARATOR = String.raw`(?:\s*(?:[:=#]|\b${ci('is')}\b|\b${ci('number')}\b|\b${ci('no')}\.|\b${ci('nr')}\.?)\s*)*\s*`;
const CAPITALISED_RUN = String.raw`\p{Lu}[\p{L}'’.-]*(?:\s+(?:(?:de|da|del|la|le|van|von)\s+)?\p{Lu}[\p{L}'’.-]*){0,3}`;
const QUOTED = /["“«]([^"”»\n]{1,200})["”»]|(?<![\p{L}])['‘]([^'’\n]{1,200})['’](?![\p{L}])/gu;
const ID_TOKEN = /(?<![\w-])[A-Za-z0-9][\w-]*(?![\w-])/g;

type Kind = 'enum' | 'integer' | 'number' | 'boolean' | 'string' | 'other';

interface Param {
  name: string;
  schema: Record<string, unknown>;
  kind: Kind;
  words: string[];
  required: boolean;
  /** Regex source of the phrases that label this parameter's value in prose. */
  label: string;
}

/** A value read from the message, with where it was found (to keep two parameters from taking the same one). */
type Read = Found<unknown>;

/**
 * The one tool call a user message clearly asks for, or null. A tool is a candidate when the
 * message shares at least two content stems with its name, description and parameter names, or
 * one stem of its name (generic words such as "get" or "check" do not count); the candidates
 * with the highest overlap are tried in the order offered, and the first whose required
 * arguments can all be read from the message is called.
 */
export function routeTool(message: string, tools: readonly ToolSpec[]): RoutedCall | null {
  const asked = routingStems(message);
  if (asked.size === 0) return null;
  const scored: Array<{ tool: ToolSpec; score: number }> = [];
  for (const tool of tools) {
    const nameStems = routingStems(identifierWords(tool.name));
    const toolStems = new Set([...nameStems, ...routingStems(tool.description), ...paramNames(tool.parameters).flatMap((p) => [...routingStems(identifierWords(p))])]);
    const shared = [...asked].filter((s) => toolStems.has(s));
    const sharedName = shared.filter((s) => nameStems.has(s)).length;
    if (shared.length >= 2 || sharedName >= 1) scored.push({ tool, score: shared.length + sharedName / 2 });
  }
  if (scored.length === 0) return null;
  const best = Math.max(...scored.map((s) => s.score));
  for (const { tool } of scored.filter((s) => s.score === best)) {
    const args = readArguments(message, tool.parameters);
    if (args !== null) return { name: tool.name, arguments: args };
  }
  return null;
}

/**
 * A tool's arguments read from a message by their JSON Schema, or null when a required one
 * cannot be read. Labelled values (`order 12345`, `city: Paris`) are read first; then required
 * parameters take unlabelled cues (a number, an id-like token, a place after "in"/"for", a quoted
 * string), and optional ones only an enum value, an email or a URL.
 */
function readArguments(message: string, parameters: JsonSchema): Record<string, unknown> | null {
  const params = paramsOf(parameters);
  const used: Array<{ start: number; end: number }> = [];
  const found = new Map<string, unknown>();
  const free = (r: Read): boolean => !used.some((u) => u.start < r.end && r.start < u.end);
  const take = (param: Param, reads: Read[]): boolean => {
    const read = reads.find(free);
    if (read === undefined) return false;
    used.push(read);
    found.set(param.name, read.value);
    return true;
  };
  for (const param of params) take(param, labelled(message, param));
  for (const param of params) {
    if (found.has(param.name)) continue;
    if (!take(param, unlabelled(message, param)) && param.required) return null;
  }
  const args: Record<string, unknown> = {};
  for (const param of params) if (found.has(param.name)) args[param.name] = found.get(param.name);
  return args;
}

function routingStems(text: string): Set<string> {
  return new Set([...contentStems(text)].filter((s) => !GENERIC.has(s)));
}

function paramNames(parameters: JsonSchema): string[] {
  const properties = parameters.properties;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

const compiled = new Map<string, RegExp>();

/** A global Unicode regex, compiled once per source (tool specs repeat from turn to turn). */
function regex(source: string): RegExp {
  let re = compiled.get(source);
  if (re === undefined) {
    if (compiled.size >= 2_000) compiled.clear();
    re = new RegExp(source, 'gu');
    compiled.set(source, re);
  }
  return re;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function paramsOf(parameters: JsonSchema): Param[] {
  const properties = (typeof parameters.properties === 'object' && parameters.properties !== null ? parameters.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(parameters.required) ? parameters.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(properties).map(([name, raw]) => {
    const schema = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const words = identifierWords(name).split(/\s+/).filter(Boolean);
    // "order_id" is labelled by "order id", "order_id", "orderId" and by "order" alone
    const phrases = [words.map(ci).join('[\\s_-]?')];
    const core = words.filter((w) => !ID_WORDS.has(w));
    if (core.length > 0 && core.length < words.length) phrases.push(core.map(ci).join('[\\s_-]?'));
    return { name, schema, kind: kindOf(schema), words, required: required.has(name), label: `${WORD_START}(?:${phrases.join('|')})${WORD_END}` };
  });
}

function kindOf(schema: Record<string, unknown>): Kind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'enum';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null');
  if (type === 'integer' || type === 'number' || type === 'boolean' || type === 'string') return type;
  return type === undefined ? 'string' : 'other';
}

function has(param: Param, set: ReadonlySet<string>): boolean {
  return param.words.some((w) => set.has(w));
}

function isIdLike(param: Param): boolean {
  const last = param.words.at(-1);
  return last !== undefined && ID_WORDS.has(last);
}

function isEmail(param: Param): boolean {
  return param.schema.format === 'email' || param.words.some((w) => w === 'email' || w === 'mail' || w === 'e');
}

function isUrl(param: Param): boolean {
  return param.schema.format === 'uri' || param.schema.format === 'url' || param.words.some((w) => w === 'url' || w === 'link' || w === 'website');
}

/** Values written right after the parameter's name. */
function labelled(message: string, param: Param): Read[] {
  const value = valuePattern(param);
  if (value === null) return [];
  const reads: Read[] = [];
  // a count comes before its noun too: "2 passengers", "3 tickets"
  const before = param.kind === 'integer' || param.kind === 'number' ? `|${value.replace('(?<v>', '(?<w>')}\\s+${param.label}` : '';
  for (const m of message.matchAll(regex(`${param.label}${SEPARATOR}(?:${value})${before}`))) {
    const text = m.groups?.v ?? m.groups?.w ?? m.groups?.q;
    if (text === undefined) continue;
    const start = m.index + m[0].lastIndexOf(text);
    const parsed = parse(param, text);
    if (parsed !== undefined) reads.push({ start, end: start + text.length, value: parsed });
  }
  return reads;
}

/** The shape of a labelled value, with the value in group `v` (or `q` inside quotes). */
function valuePattern(param: Param): string | null {
  const quoted = String.raw`["“'‘](?<q>[^"”'’\n]{1,200})["”'’]`;
  switch (param.kind) {
    case 'enum':
      return `(?<v>${enumValues(param).map((v) => enumPattern(String(v))).join('|')})${WORD_END}`;
    case 'integer':
    case 'number':
      return String.raw`(?<![\w.,])(?<v>-?\d[\d,]*(?:\.\d+)?)(?![\d\p{L}])`;
    case 'boolean':
      return `(?<v>${['yes', 'no', 'true', 'false', 'on', 'off', 'enabled', 'disabled'].map(ci).join('|')})${WORD_END}`;
    case 'string':
      if (isEmail(param)) return String.raw`(?<v>[^\s@,;]+@[^\s@,;]+\.[A-Za-z]{2,})`;
      if (isIdLike(param)) return String.raw`(?<v>[A-Za-z0-9][\w-]*\d[\w-]*|\d[\w-]*)(?![\w-])`;
      // "city: New York, please" takes the phrase to the punctuation; "city Paris" a capitalised run
      return String.raw`${quoted}|(?<=[:=]\s*)(?<v>[^\s,;.!?\n][^,;!?\n]{0,80}?)(?=\s*(?:[,;!?\n]|\.(?:\s|$)|$))|(?<w>${CAPITALISED_RUN})`;
    default:
      return null;
  }
}

function enumValues(param: Param): Array<string | number | boolean> {
  return (param.schema.enum as unknown[]).filter((v): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v));
}

/** An enum value as prose writes it: `in_progress` also as "in progress" or "in-progress". */
function enumPattern(value: string): string {
  return value
    .split(/[\s_-]+/)
    .map(ci)
    .join('[\\s_-]+');
}

/** The typed value of a piece of text, or undefined when it is not one. */
function parse(param: Param, text: string): unknown {
  switch (param.kind) {
    case 'enum': {
      const norm = (v: string): string => v.toLowerCase().replace(/[\s_-]+/g, ' ');
      return enumValues(param).find((v) => norm(String(v)) === norm(text));
    }
    case 'integer':
    case 'number': {
      const n = Number(text.replace(/,/g, ''));
      if (!Number.isFinite(n) || (param.kind === 'integer' && !Number.isInteger(n))) return undefined;
      return n;
    }
    case 'boolean':
      return /^(?:yes|true|on|enabled)$/i.test(text);
    case 'string': {
      const value = text.trim().replace(/[.'’-]+$/, '');
      if (value === '' || (NOT_PLACES.has(value.toLowerCase()) && has(param, LOCATION_WORDS))) return undefined;
      return value;
    }
    default:
      return undefined;
  }
}

/** Values found without the parameter's name before them. */
function unlabelled(message: string, param: Param): Read[] {
  if (param.kind === 'enum') {
    const reads: Read[] = [];
    for (const value of enumValues(param)) {
      for (const m of message.matchAll(regex(`${WORD_START}${enumPattern(String(value))}${WORD_END}`))) {
        reads.push({ start: m.index, end: m.index + m[0].length, value });
      }
    }
    // earliest first; at the same place the longer value ("in_progress" over "in")
    return reads.sort((a, b) => a.start - b.start || b.end - a.end);
  }
  if (param.kind === 'string' && isEmail(param)) return findEmails(message);
  if (param.kind === 'string' && isUrl(param)) return findUrls(message);
  if (!param.required) return [];
  switch (param.kind) {
    case 'integer':
    case 'number': {
      const dates = findDates(message);
      return findNumbers(message, dates).filter((n) => param.kind === 'number' || Number.isInteger(n.value));
    }
    case 'boolean':
      return [...message.matchAll(/\b(yes|no|true|false)\b/gi)].map((m) => ({ start: m.index, end: m.index + m[0].length, value: /^(?:yes|true)$/i.test(m[0]) }));
    case 'string':
      return unlabelledString(message, param);
    default:
      return [];
  }
}

function unlabelledString(message: string, param: Param): Read[] {
  if (isIdLike(param)) {
    // an id without its label: a token of four or more digits, or letters and digits mixed ("ORD-5521")
    return [...message.matchAll(ID_TOKEN)]
      .filter((m) => /\d/.test(m[0]) && (/\d{4}/.test(m[0]) || /[A-Za-z]/.test(m[0])) && !/^\d+(?:st|nd|rd|th|s)$/i.test(m[0]))
      .map((m) => ({ start: m.index, end: m.index + m[0].length, value: m[0].replace(/[-_]+$/, '') }));
  }
  if (has(param, LOCATION_WORDS)) {
    const prepositions = (has(param, ORIGIN_WORDS) ? ['from'] : has(param, DESTINATION_WORDS) ? ['to'] : ['in', 'for', 'at', 'near', 'around']).map(ci).join('|');
    const reads: Read[] = [];
    for (const m of message.matchAll(regex(`${WORD_START}(?:${prepositions})\\s+(?:the\\s+(?:city|town)\\s+of\\s+)?(?<v>${CAPITALISED_RUN})`))) {
      const text = m.groups?.v as string;
      const value = parse(param, text);
      if (value === undefined) continue;
      const start = m.index + m[0].lastIndexOf(text);
      reads.push({ start, end: start + String(value).length, value });
    }
    return reads;
  }
  if (param.words.includes('name')) {
    return [...message.matchAll(regex(`${WORD_START}(?:${ci('named')}|${ci('called')})\\s+(?<v>${CAPITALISED_RUN})`))].map((m) => {
      const text = m.groups?.v as string;
      const start = m.index + m[0].lastIndexOf(text);
      return { start, end: start + text.length, value: text.replace(/[.'’-]+$/, '') };
    });
  }
  const quoted = [...message.matchAll(QUOTED)].map((m) => {
    const text = (m[1] ?? m[2] ?? '').trim();
    return { start: m.index + 1, end: m.index + 1 + text.length, value: text };
  });
  if (quoted.length > 0 || !has(param, QUERY_WORDS)) return quoted.filter((q) => q.value !== '');
  // a search query: what follows "for"/"about", else the whole message
  const after = /\b(?:for|about|regarding|on)\s+(?<v>[^?!.\n]{2,200})/i.exec(message);
  if (after?.groups?.v !== undefined) {
    const text = after.groups.v.trim();
    const start = after.index + after[0].lastIndexOf(text);
    return [{ start, end: start + text.length, value: text }];
  }
  const whole = message.trim().replace(/[?!.]+$/, '').slice(0, 200);
  return whole === '' ? [] : [{ start: 0, end: message.length, value: whole }];
}
