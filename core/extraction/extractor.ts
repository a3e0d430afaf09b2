import type { Decision, FactCandidates } from './decisions.js';

/** One property of a record schema, in Cairn's restricted JSON-Schema subset. */
export type ExtractionProperty =
  | { type: 'string'; enum?: readonly string[]; description?: string }
  | { type: 'number' | 'integer' | 'boolean'; description?: string }
  | { type: 'array'; items: { type: 'string' }; description?: string };

/**
 * A record schema as extraction reads it: one level of typed properties (the same plain JSON
 * shape `core/schemas.ts` validates and stores).
 */
export interface ExtractionSchema {
  type: 'object';
  properties: Readonly<Record<string, ExtractionProperty>>;
  required?: readonly string[];
  additionalProperties?: false;
  description?: string;
  title?: string;
}

/** One turn of a conversation handed to extraction. */
export interface ExtractionMessage {
  role: string;
  content: string;
}

/** What values are extracted from: a text, or a conversation. */
export type ExtractionInput = { text: string } | { messages: readonly ExtractionMessage[] };

/**
 * A language model that pulls a record's values out of text. Model names are `provider/model`
 * (`local`, `cohere/command-a-03-2025`, `openai/<model>`).
 *
 * Contract: the result holds only values explicitly stated in the input, as a partial object
 * of the schema's properties: a property that is not stated is absent (never null, never a
 * guess), `required` is not enforced (the caller validates and decides whether to store), and
 * every present value has its property's JSON type (integer vs number, an enum member exactly
 * as the enum spells it, arrays of strings). Nothing found is `{}`.
 */
export interface Extractor {
  /** The full `provider/model` name. */
  readonly model: string;
  extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>>;
  /**
   * The facts worth remembering about the user in a conversation (mem0's `infer: true`): short,
   * self-contained statements taken from what the user said, never from what the assistant
   * suggested, each at most `MAX_FACT_LENGTH` characters, without duplicates. Nothing worth
   * remembering is `[]`.
   */
  facts(messages: readonly ExtractionMessage[]): Promise<string[]>;
  /**
   * What each new fact does to the entity's memories most like it (mem0's add step): one
   * decision per fact, in order (see `decisions.ts`). Rejects only when a remote model could not
   * be asked; an answer that cannot be read turns the facts it leaves undecided into ADD.
   */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]>;
}

/** Longest fact kept; a model's longer answer is cut at a word boundary. */
export const MAX_FACT_LENGTH = 500;
/** Most facts kept from one conversation. */
export const MAX_FACTS = 50;

/** What the remote models are told when picking facts out of a conversation. */
export const FACTS_SYSTEM_PROMPT = [
  'You pick out facts worth remembering about the user from a conversation: personal details, preferences, plans, relationships, work, health, and anything the user asks to be remembered.',
  'When the user says something is no longer true or asks you to forget it, state that as a fact too (e.g. "No longer lives in Lisbon").',
  'Take facts only from what the user says; what the assistant says counts only when the user confirms it. Never guess or infer beyond what is stated.',
  'Write each fact as one short, self-contained statement in the language the user wrote in. Skip greetings, questions, small talk and anything temporary or trivial.',
  'Answer with a JSON object {"facts": [...]} holding an array of strings; if there is nothing worth remembering, answer {"facts": []}.',
].join(' ');

/** The JSON schema of a facts answer. */
export const FACTS_SCHEMA = {
  type: 'object',
  properties: { facts: { type: 'array', items: { type: 'string' } } },
  required: ['facts'],
  additionalProperties: false,
} as const;

/** The user turn sent to a remote model for facts: the conversation as a transcript. */
export function factsPrompt(messages: readonly ExtractionMessage[]): string {
  return `Conversation:\n${messages.map((m) => `${m.role}: ${m.content}`).join('\n')}\n\nAnswer with {"facts": [...]}.`;
}

/**
 * The facts in a model's answer (`{"facts": [...]}`): trimmed non-placeholder strings, cut to
 * `MAX_FACT_LENGTH` at a word boundary, duplicates (ignoring case) dropped, at most `MAX_FACTS`.
 * Anything else in the answer is ignored; an answer without a facts array gives `[]`.
 */
export function sanitizeFacts(raw: unknown): string[] {
  const list = typeof raw === 'object' && raw !== null && Array.isArray((raw as { facts?: unknown }).facts) ? ((raw as { facts: unknown[] }).facts) : [];
  const facts: string[] = [];
  const seen = new Set<string>();
  for (const item of list) {
    if (typeof item !== 'string' || isPlaceholder(item)) continue;
    let fact = item.trim().replace(/\s+/g, ' ');
    if (fact.length > MAX_FACT_LENGTH) {
      const cut = fact.lastIndexOf(' ', MAX_FACT_LENGTH);
      fact = fact.slice(0, cut > MAX_FACT_LENGTH / 2 ? cut : MAX_FACT_LENGTH);
    }
    const key = fact.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    facts.push(fact);
    if (facts.length === MAX_FACTS) break;
  }
  return facts;
}

/** What the remote models are told; the local model follows the same rules by construction. */
export const EXTRACTION_SYSTEM_PROMPT = [
  'You extract structured data. Answer with one JSON object whose keys are properties of the JSON schema you are given.',
  'Include a property only when its value is explicitly stated in the input. Otherwise leave the property out:',
  'never guess, infer, complete or invent a value, and never use null, an empty string or a placeholder such as "unknown".',
  'Use each property\'s type exactly: an integer for "integer", a plain number without units, currency symbols or thousands separators for "number",',
  'true or false for "boolean", exactly one of the listed values for an enum, and a JSON array of strings for "array".',
  'Write a date as YYYY-MM-DD when the input states a full date; leave out relative dates such as "tomorrow".',
  'In a conversation, take values the user states; a value the assistant states counts only when the user confirms it.',
  'If nothing is stated, answer {}.',
].join(' ');

/**
 * The schema sent to a remote model: the same properties with `required` dropped (extraction
 * relaxes it) and no further properties allowed.
 */
export function relaxedSchema(schema: ExtractionSchema): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) properties[name] = { ...property };
  return {
    type: 'object',
    ...(schema.description !== undefined ? { description: schema.description } : {}),
    properties,
    additionalProperties: false,
  };
}

/** The user turn sent to a remote model: the schema, then the text or the conversation as a transcript. */
export function extractionPrompt(schema: ExtractionSchema, input: ExtractionInput): string {
  const source =
    'text' in input
      ? `Text:\n${input.text}`
      : `Conversation:\n${input.messages.map((m) => `${m.role}: ${m.content}`).join('\n')}`;
  return `JSON schema of the record:\n${JSON.stringify(relaxedSchema(schema))}\n\n${source}\n\nAnswer with the JSON object of the values stated above.`;
}

/**
 * The JSON object in a model's answer. Tolerates a Markdown code fence or text around the
 * object (servers that ignore the response format); null when there is no JSON object.
 */
export function parseModelJson(text: string): Record<string, unknown> | null {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1] !== undefined) candidates.push(fenced[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first !== -1 && last > first) candidates.push(text.slice(first, last + 1));
  for (const candidate of candidates) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // try the next reading
    }
  }
  return null;
}

/** Strings that say a value was not given rather than giving one. */
const PLACEHOLDER = /^(?:n\/?a|none|null|nil|undefined|unknown|not (?:yet )?(?:known|stated|specified|provided|given|mentioned|available|set|decided|sure)|tbd|tba|tbc|no idea|\?+|-+|—|…|\.\.\.)$/i;

/** True when `value` is an empty or placeholder string. */
export function isPlaceholder(value: string): boolean {
  return value.trim() === '' || PLACEHOLDER.test(value.trim());
}

const normalizeEnum = (value: string): string => value.trim().toLowerCase().replace(/[\s_-]+/g, ' ');

/**
 * Keeps only what a schema allows from a model's answer: properties of the schema, each with a
 * value of its type. Strings are trimmed and placeholders ("unknown", "n/a", "") dropped; an
 * enum value is mapped to the member it spells, ignoring case and `_`/`-`/space differences,
 * else dropped; numbers must be finite (integers whole), plain numeric strings are read as
 * numbers; booleans are `true`/`false` (or those words); arrays keep their non-empty strings,
 * without duplicates, and are dropped when empty. Never adds anything.
 */
export function sanitizeExtraction(schema: ExtractionSchema, raw: unknown): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return result;
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!Object.prototype.hasOwnProperty.call(raw, name)) continue;
    const value = sanitizeValue(property, (raw as Record<string, unknown>)[name]);
    if (value !== undefined) result[name] = value;
  }
  return result;
}

function sanitizeValue(property: ExtractionProperty, value: unknown): unknown {
  switch (property.type) {
    case 'string': {
      if (typeof value !== 'string' || isPlaceholder(value)) return undefined;
      if (property.enum === undefined) return value.trim();
      const wanted = normalizeEnum(value);
      return property.enum.find((member) => member === value) ?? property.enum.find((member) => normalizeEnum(member) === wanted);
    }
    case 'number':
    case 'integer': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
      if (!Number.isFinite(number)) return undefined;
      if (property.type === 'integer' && !Number.isSafeInteger(number)) return undefined;
      return number;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      return undefined;
    case 'array': {
      if (!Array.isArray(value)) return undefined;
      const items: string[] = [];
      for (const item of value) {
        if (typeof item !== 'string' || isPlaceholder(item)) continue;
        const trimmed = item.trim();
        if (!items.some((kept) => kept.toLowerCase() === trimmed.toLowerCase())) items.push(trimmed);
      }
      return items.length > 0 ? items : undefined;
    }
    default:
      return undefined;
  }
}
