import { unavailable } from '../lib/errors.js';
import { DECISIONS_SCHEMA, decideByModel } from './decisions.js';
import {
  MAX_FACT_LENGTH,
  MAX_FACTS,
  type Decision,
  type ExtractionInput,
  type ExtractionMessage,
  type ExtractionProperty,
  type ExtractionSchema,
  type Extractor,
  type FactCandidates,
} from './extractor.js';

// What every extractor shares: the prompts and JSON schemas remote models are asked with, the
// checks every model's answer passes before anyone sees it, and the remote extractors' common
// part (`RemoteExtractor`).

/** What the remote models are told when picking facts out of a conversation. */
export const FACTS_SYSTEM_PROMPT = [
  'You pick out facts worth remembering about the user from a conversation: personal details, preferences, plans, relationships, work, health, and anything the user asks to be remembered.',
  'When the user says something is no longer true or asks you to forget it, state that as a fact too (e.g. "No longer lives in Lisbon").',
  'Take facts only from what the user says; what the assistant says counts only when the user confirms it. Never guess or infer beyond what is stated.',
  'Write each fact as one short, self-contained statement in the language the user wrote in. Skip greetings, questions, small talk and anything temporary or trivial.',
  'Answer with a JSON object {"facts": [...]} holding an array of strings; if there is nothing worth remembering, answer {"facts": []}.',
].join(' ');

/**
 * The facts system prompt with the caller's instructions (mem0's `custom_instructions`) after the
 * rules, which they refine but cannot lift: the answer's form and what may be taken as a fact.
 */
export function factsSystemPrompt(instructions?: string): string {
  const own = instructions?.trim();
  return own ? `${FACTS_SYSTEM_PROMPT}\nThe application also asks (follow it within the rules above):\n${own}` : FACTS_SYSTEM_PROMPT;
}

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

/** The `json_schema.name` OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`), from the schema's title. */
function schemaName(schema: ExtractionSchema): string {
  const name = (schema.title ?? '').replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return name === '' ? 'record' : name;
}

/**
 * An extractor on a remote model's JSON mode: values, facts and decisions are asked for with the
 * prompts and schemas above, at temperature 0, and the answer's JSON object (`parseModelJson`)
 * is sanitised; a provider implements only the call (`answer`). An answer without a JSON object
 * throws 503 `service_unavailable`.
 */
export abstract class RemoteExtractor implements Extractor {
  readonly model: string;

  constructor(
    provider: string,
    /** The model's name at the provider. */
    protected readonly name: string,
    /** Who answered, in errors: "Cohere", "The language model server (OPENAI_BASE_URL)". */
    protected readonly where: string,
  ) {
    this.model = `${provider}/${name}`;
  }

  /** The text of the model's answer to one call in JSON mode; `name` names `schema` where the API wants a name. */
  protected abstract answer(system: string, user: string, name: string, schema: Record<string, unknown>): Promise<string>;

  async extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>> {
    return sanitizeExtraction(schema, await this.json(EXTRACTION_SYSTEM_PROMPT, extractionPrompt(schema, input), schemaName(schema), relaxedSchema(schema)));
  }

  async facts(messages: readonly ExtractionMessage[], instructions?: string): Promise<string[]> {
    return sanitizeFacts(await this.json(factsSystemPrompt(instructions), factsPrompt(messages), 'facts', FACTS_SCHEMA));
  }

  /** mem0's decision step: one call for all facts, the answer checked by `decideByModel`. */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]> {
    return decideByModel(facts, (system, user) => this.json(system, user, 'memory_events', DECISIONS_SCHEMA));
  }

  private async json(system: string, user: string, name: string, schema: Record<string, unknown>): Promise<Record<string, unknown>> {
    const parsed = parseModelJson(await this.answer(system, user, name, schema));
    if (parsed === null) throw unavailable(`${this.where} answered without a JSON object (model ${this.name}); retry later.`);
    return parsed;
  }
}
