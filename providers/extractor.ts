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
   * remembering is `[]`. `instructions` are the caller's own (mem0's `custom_instructions`): what to
   * remember or leave out, followed where a model reads them (rules-based extractors do not).
   */
  facts(messages: readonly ExtractionMessage[], instructions?: string): Promise<string[]>;
  /**
   * What each new fact does to the entity's memories most like it (mem0's add step): one
   * decision per fact, in order (`Decision`). Rejects only when a remote model could not
   * be asked; an answer that cannot be read turns the facts it leaves undecided into ADD.
   */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]>;
}

/**
 * Bounds of a schema handed to extraction, whatever model fills it: the local model's work grows
 * with properties × enum members × the text's clauses, and a remote model's prompt with the
 * schema's size. Enum members are counted over the whole schema, after `$ref`s are followed (as
 * OpenAI's structured outputs count them). A schema over a bound is refused with a 400 naming it.
 */
export const EXTRACTION_LIMITS = {
  /** Properties of one schema (typed record schemas allow fewer, see `SCHEMA_LIMITS`). */
  properties: 100,
  /** Enum members over every property of one schema. */
  enumMembers: 1_000,
  /** Characters of one enum member. */
  enumMemberLength: 200,
  /** Characters of one property's description. */
  descriptionLength: 2_000,
  /** Characters of the schema's JSON text (an export's or `structured_data_schema`, `$defs` included). */
  schemaLength: 256 * 1024,
} as const;

/** The first bound of `EXTRACTION_LIMITS` that `schema` exceeds, as a sentence; null within them all. */
export function extractionSchemaProblem(schema: ExtractionSchema): string | null {
  const properties = Object.entries(schema.properties);
  if (properties.length > EXTRACTION_LIMITS.properties) {
    return `The schema has ${properties.length} properties; at most ${EXTRACTION_LIMITS.properties} can be extracted.`;
  }
  let members = 0;
  for (const [name, property] of properties) {
    if ((property.description?.length ?? 0) > EXTRACTION_LIMITS.descriptionLength) {
      return `The description of "${name}" is ${property.description?.length} characters long; at most ${EXTRACTION_LIMITS.descriptionLength} are allowed.`;
    }
    if (property.type !== 'string' || property.enum === undefined) continue;
    members += property.enum.length;
    if (members > EXTRACTION_LIMITS.enumMembers) {
      return `The schema's enums have more than ${EXTRACTION_LIMITS.enumMembers} members in all (counted up to "${name}"); at most ${EXTRACTION_LIMITS.enumMembers} can be extracted.`;
    }
    const long = property.enum.find((m) => m.length > EXTRACTION_LIMITS.enumMemberLength);
    if (long !== undefined) {
      return `A member of the enum of "${name}" is ${long.length} characters long; at most ${EXTRACTION_LIMITS.enumMemberLength} are allowed.`;
    }
  }
  return null;
}

/** Longest fact kept; a model's longer answer is cut at a word boundary. */
export const MAX_FACT_LENGTH = 500;
/** Most facts kept from one conversation. */
export const MAX_FACTS = 50;

/** What a new fact does to the memories: mem0's events (mem0's `NONE` is `NOOP` here, as in its clients). */
export type MemoryEvent = 'ADD' | 'UPDATE' | 'DELETE' | 'NOOP';

/** An existing memory a fact is compared with. */
export interface Candidate {
  id: string;
  text: string;
  /** Cosine similarity of the fact and this memory (all-MiniLM-L6-v2 vectors). */
  similarity: number;
}

/** A new fact and the entity's memories most like it. */
export interface FactCandidates {
  fact: string;
  candidates: readonly Candidate[];
}

/**
 * The decision for one fact. `ADD` stores `text`; `UPDATE` rewrites memory `targetId` to
 * `text`; `DELETE` removes memory `targetId`; `NOOP` changes nothing (`targetId`: the memory
 * that already holds the fact, absent when there is nothing to point at, e.g. "forget that …"
 * about something never stored).
 */
export type Decision =
  | { event: 'ADD'; text: string }
  | { event: 'UPDATE'; targetId: string; text: string }
  | { event: 'DELETE'; targetId: string }
  | { event: 'NOOP'; targetId?: string };
