import type { Candidate, Decision, FactCandidates } from '../extractor.js';

// mem0's add step with `infer: true` for the local model: what each new fact does to what the
// entity already remembers, decided by deterministic rules (`decideByRules`). Never drops a
// fact: one that matches no rule is `ADD`ed.

/**
 * A fact at least this similar to a memory is already known (NOOP). Measured on
 * all-MiniLM-L6-v2: paraphrases score 0.84–0.94 ("I prefer salty food" / "I like salty food"
 * 0.94), while facts that differ in one value can score 0.86–0.94 too ("My favourite colour is
 * blue" / "… green" 0.86, "I am 30 years old" / "… 31 …" 0.94) — which is why attribute rules,
 * numbers and negation are checked first and the bar is high.
 */
export const NEAR_DUPLICATE = 0.9;

/**
 * Least similarity for the catch-all attribute "My <thing> is <value>" to count as a new value
 * of the same thing: "My sister is a doctor" / "My sister is in Paris" (0.39) are two facts,
 * "My birthday is May 3" / "My birthday is May 4" one fact changed. The named attributes
 * (where one lives, works, …) need no bar: "I work at Acme" / "I work at Globex" scores only 0.51.
 */
export const SAME_THING = 0.6;

/**
 * One attribute a person has one value of at a time: a new value supersedes the old one. The
 * pattern is tried on the normalised fact (see `normalize`); its `value` group holds the value
 * and, for attributes named in the text ("my favourite <thing> is …"), its `thing` group the
 * attribute's name.
 */
interface Attribute {
  name: string;
  pattern: RegExp;
  minSimilarity?: number;
}

// the user, optional: the local model's facts are the user's own sentences ("I live in
// Lisbon"), a remote model's often drop the subject ("Lives in Lyon")
const SELF = String.raw`^(?:i |we )?`;
const WHEN = String.raw`(?:(?:now|currently|still|recently|just|finally|also) )?`;
const BE = String.raw`(?:(?:am|is|are|have|has|will be) )?`;

const ATTRIBUTES: readonly Attribute[] = [
  {
    name: 'residence',
    pattern: new RegExp(
      `${SELF}${WHEN}${BE}${WHEN}(?:live|lives|living|reside|resides|residing|moved|move|moving|relocated|relocating|based|settled)(?: back)? (?:in|to) (?<value>.+)$`,
    ),
  },
  {
    name: 'workplace',
    pattern: new RegExp(
      `${SELF}${WHEN}${BE}${WHEN}(?:(?:work|works|working|employed|started working|started|got a job|got a new job|have a new job|has a new job) (?:at|for|by) |joined )(?<value>.+)$`,
    ),
  },
  { name: 'workplace', pattern: /^my (?:employer|company) is (?<value>.+)$/ },
  { name: 'occupation', pattern: new RegExp(`${SELF}${WHEN}${BE}(?:work|works|working) as (?:an? )?(?<value>.+)$`) },
  { name: 'occupation', pattern: /^my (?:job|job title|profession|occupation) is (?:an? )?(?<value>.+)$/ },
  { name: 'name', pattern: /^(?:my name is|my name's|i am called|call me) (?<value>.+)$/ },
  { name: 'age', pattern: new RegExp(`${SELF}(?:am|is|turned|just turned) (?<value>\\d{1,3})(?: years? old)?$`) },
  { name: 'age', pattern: /^my age is (?<value>\d{1,3})$/ },
  { name: 'favourite', pattern: /^my (?:favou?rite|fave) (?<thing>.+?) (?:is|are) (?<value>.+)$/ },
  { name: 'favourite', pattern: /^(?<value>.+?) (?:is|are) my (?:favou?rite|fave) (?<thing>.+)$/ },
  { name: 'my', pattern: /^my (?<thing>(?:[\p{L}'-]+ ){0,2}[\p{L}'-]+) (?:is|are) (?<value>.+)$/u, minSimilarity: SAME_THING },
];

/** A value's qualifiers that do not change it: "Porto last year" is "porto". */
const VALUE_END =
  /\s*(?:,|;|\(|\b(?:since|last|this|next|now|again|for|from|until|with|because|and|but|as|where|when|so|ago|these days|nowadays|in \d{4}|\d+ (?:years?|months?|weeks?|days?) ago)\b).*$/;

const STOPWORDS = new Set(
  (
    'i me my mine we us our you your the a an user am is are was were be been being have has had do does did will would shall should can could ' +
    'to in at of on for and or with that this it its very really so also too just now currently still every each daily usually often always sometimes ' +
    'morning mornings evening evenings night nights day days week weeks weekend weekends'
  ).split(' '),
);
const NEGATIONS = new Set(['not', 'never', 'no']);
/** Words that say something stopped being true. */
const NO_LONGER = /\s*\b(?:no longer|any ?more|any longer)\b/;
const ALL_NO_LONGER = new RegExp(NO_LONGER.source, 'g');

/** One fact or memory as the rules read it. */
interface Reading {
  /** Who it is about: `self` (I, we, or no subject), `my <noun>`, or the first word (a name). */
  subject: string;
  /** Says something stopped being true: "no longer", "not … anymore". */
  retraction: boolean;
  /** Negated: "don't", "never", "not", or a retraction. */
  negated: boolean;
  /** The content words, negation and filler removed, crudely stemmed. */
  core: Set<string>;
  /** The attribute and value it states (affirmative statements only). */
  attribute: { key: string; value: string; minSimilarity: number } | null;
  /** The numbers it holds, sorted: "30 years old" and "31 years old" are not duplicates. */
  numbers: string;
}

/** Lower-cased, contractions spelled out, "the user" as "I", end punctuation dropped. */
function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/\bcan't\b/g, 'can not')
    .replace(/\bwon't\b/g, 'will not')
    .replace(/n't\b/g, ' not')
    .replace(/\bi'm\b/g, 'i am')
    .replace(/\bi've\b/g, 'i have')
    .replace(/\bi'll\b/g, 'i will')
    .replace(/^(?:the )?user's /, 'my ')
    .replace(/^(?:the )?user /, 'i ')
    .replace(/[.!?]+$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The affirmative of a retraction: "i no longer live in lisbon" → "i live in lisbon", "i am not vegetarian anymore" → "i am vegetarian". */
function affirmative(normalized: string): string {
  return normalized
    .replace(ALL_NO_LONGER, '')
    .replace(/\b(?:do|does|did) not /, '')
    .replace(/\b(am|is|are|was|were|have|has) not /, '$1 ')
    .trim();
}

function attributeOf(normalized: string): Reading['attribute'] {
  for (const attribute of ATTRIBUTES) {
    const groups = attribute.pattern.exec(normalized)?.groups;
    if (!groups) continue;
    const value = (groups.value ?? '').replace(VALUE_END, '').replace(/^(?:the|a|an) /, '').trim();
    if (value === '' || NEGATIONS.has(value.split(' ')[0] ?? '')) continue;
    const key = groups.thing === undefined ? attribute.name : `${attribute.name}:${groups.thing.trim()}`;
    return { key, value, minSimilarity: attribute.minSimilarity ?? 0 };
  }
  return null;
}

const stem = (word: string): string => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);

function readNormalized(normalized: string): Reading {
  const retraction = NO_LONGER.test(normalized);
  const words = normalized.replace(ALL_NO_LONGER, '').split(/[^\p{L}\p{N}']+/u).filter((w) => w !== '');
  const negated = retraction || words.some((w) => NEGATIONS.has(w));
  const first = words[0] ?? '';
  return {
    subject: first === 'i' || first === 'we' ? 'self' : first === 'my' ? `my ${words[1] ?? ''}` : first,
    retraction,
    negated,
    core: new Set(words.filter((w) => !STOPWORDS.has(w) && !NEGATIONS.has(w)).map((w) => stem(w.replace(/'s$/, '')))),
    attribute: negated ? null : attributeOf(normalized),
    numbers: (normalized.match(/\d+(?:[.,]\d+)?/g) ?? []).sort().join(' '),
  };
}

const read = (text: string): Reading => readNormalized(normalize(text));

const sameWords = (a: Set<string>, b: Set<string>): boolean => a.size > 0 && a.size === b.size && [...a].every((w) => b.has(w));

/** True when memory `m` affirms what `wanted` affirms: the same attribute and value, or the same subject and words. */
function affirms(m: Reading, wanted: Reading): boolean {
  if (m.negated) return false;
  if (wanted.attribute && m.attribute) return wanted.attribute.key === m.attribute.key && wanted.attribute.value === m.attribute.value;
  return m.subject === wanted.subject && sameWords(m.core, wanted.core);
}

/** The most similar candidate `accept` keeps, or null. */
function best(candidates: readonly Candidate[], accept: (memory: Reading, candidate: Candidate) => boolean): Candidate | null {
  let found: Candidate | null = null;
  for (const candidate of candidates) {
    if ((found === null || candidate.similarity > found.similarity) && accept(read(candidate.text), candidate)) found = candidate;
  }
  return found;
}

/**
 * The local model's decision for one fact, by these rules in order:
 * 1. "Forget (that) X" deletes the memory that affirms X; NOOP when there is none.
 * 2. A retraction ("I no longer live in Lisbon", "I don't eat meat anymore") deletes the memory
 *    that affirms the same thing; with no such memory the fact is added.
 * 3. A fact that gives an attribute the user has one value of (where they live or work, their
 *    job, name, age, a favourite, "my <thing> is …") is NOOP when a memory gives it the same
 *    value, and UPDATEs the most similar memory that gives it another ("I moved to Porto"
 *    supersedes "I live in Lisbon").
 * 4. A fact that negates a memory, or that a memory negates ("I don't like jazz" / "I like
 *    jazz": same subject, same words), UPDATEs it.
 * 5. A fact at least `NEAR_DUPLICATE` similar to a memory, with the same numbers and polarity,
 *    is NOOP.
 * 6. Anything else is ADDed.
 */
export function decideByRules({ fact, candidates }: FactCandidates): Decision {
  const normalized = normalize(fact);
  const forget = /^(?:please )?forget(?: that| about)? (.+)$/.exec(normalized)?.[1];
  if (forget !== undefined) {
    const wanted = readNormalized(forget);
    const target = best(candidates, (m) => affirms(m, wanted));
    return target ? { event: 'DELETE', targetId: target.id } : { event: 'NOOP' };
  }
  const reading = readNormalized(normalized);
  if (reading.retraction) {
    const wanted = readNormalized(affirmative(normalized));
    const target = best(candidates, (m) => affirms(m, wanted));
    return target ? { event: 'DELETE', targetId: target.id } : { event: 'ADD', text: fact };
  }
  if (reading.attribute) {
    const { key, value, minSimilarity } = reading.attribute;
    const known = best(candidates, (m) => m.attribute?.key === key && m.attribute.value === value);
    if (known) return { event: 'NOOP', targetId: known.id };
    const superseded = best(candidates, (m, c) => m.attribute?.key === key && c.similarity >= minSimilarity);
    if (superseded) return { event: 'UPDATE', targetId: superseded.id, text: fact };
  }
  const flipped = best(candidates, (m) => m.negated !== reading.negated && m.subject === reading.subject && sameWords(m.core, reading.core));
  if (flipped) return { event: 'UPDATE', targetId: flipped.id, text: fact };
  const duplicate = best(candidates, (m, c) => c.similarity >= NEAR_DUPLICATE && m.numbers === reading.numbers && m.negated === reading.negated);
  if (duplicate) return { event: 'NOOP', targetId: duplicate.id };
  return { event: 'ADD', text: fact };
}

