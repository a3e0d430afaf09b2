import nlp from 'compromise/two';
import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

// Named entities of a memory's text, without a language model: wink-nlp finds the proper-noun runs
// and the dates (≈40 µs for a chat line), compromise's lexicon (cities, countries, organisations,
// first names, the words that end an organisation's or a place's name) says what each run names,
// and the words before a run decide when the lexicon does not know it. compromise's own
// people()/places() cost ~20× more per text and miss most names outside its lexicon
// (scripts/bench/entities.bench.ts measures both).

/** What a named entity is. */
export type EntityKind = 'person' | 'place' | 'organization' | 'product' | 'date';

/** A named entity found in a memory's text. */
export interface MemoryEntity {
  /** as written, trimmed */
  name: string;
  /** lower case, spaces collapsed, no leading 'the', no possessive 's: what two mentions share */
  key: string;
  kind: EntityKind;
}

/** Only the start of a long text is read (its cost grows faster than its length: ~1 ms for 2 KB, ~18 ms for 8 KB). */
export const ENTITY_TEXT_LIMIT = 2048;
/** At most this many entities per memory. */
export const ENTITY_LIMIT = 32;

/**
 * The named entities of `text`, each key+kind once, in order of first mention. The speaker of a
 * chat line ("Maya: ...") is not one of them: every line of a chat names its speaker, so it would
 * be an entity of every memory of the conversation and say nothing about what the line is about.
 * Never throws.
 */
export function entitiesOf(text: string): MemoryEntity[] {
  try {
    return read(typeof text === 'string' ? text : '');
  } catch {
    return [];
  }
}

/** The lower-case, collapsed, article- and possessive-free form of a name. */
export function entityKey(name: string): string {
  return name
    .normalize('NFC')
    .toLowerCase()
    .replace(/[\s\u00a0]+/g, ' ')
    .trim()
    .replace(/^the /, '')
    .replace(/['’]s$/, '')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}.]+$/gu, '')
    .replace(/(?<!\b\p{Lu}?\p{L})\.$/u, '')
    .trim();
}

/** The text after a chat line's "Speaker: " prefix of one to three capitalised words, or all of it. */
export function withoutSpeaker(text: string): string {
  const prefix = /^\s*\p{Lu}[\p{L}\p{M}'’.-]*(?: \p{Lu}[\p{L}\p{M}'’.-]*){0,2}:\s+/u.exec(text);
  return prefix ? text.slice(prefix[0].length) : text;
}

// ---- the lexicon ----

type Lexicon = Record<string, string | string[] | undefined>;
const compromise = nlp.model() as { one: { lexicon: Lexicon }; two: { orgWords: Record<string, unknown>; placeWords: Record<string, unknown> } };
const LEXICON = compromise.one.lexicon;
const ORG_WORDS = new Set(Object.keys(compromise.two.orgWords));
// 'st' ends a street, but "St. Anne's" begins a hospital or a church; 'dune' is more often a book
const PLACE_WORDS = new Set(Object.keys(compromise.two.placeWords).filter((w) => w !== 'st' && w !== 'dune'));

const LEXICON_KIND: Record<string, EntityKind> = {
  City: 'place',
  Country: 'place',
  Region: 'place',
  Place: 'place',
  Organization: 'organization',
  FirstName: 'person',
  MaleName: 'person',
  FemaleName: 'person',
  LastName: 'person',
  Honorific: 'person',
};

/** Words compromise knows for what they are: a month or a weekday is a date, a demonym no name. */
function lexiconTags(word: string): string[] {
  const tags = LEXICON[word];
  return tags === undefined ? [] : Array.isArray(tags) ? tags : [tags];
}

function lexiconKind(word: string): EntityKind | undefined {
  const tags = LEXICON[word];
  if (tags === undefined) return undefined;
  for (const tag of Array.isArray(tags) ? tags : [tags]) {
    const kind = LEXICON_KIND[tag];
    if (kind) return kind;
  }
  return undefined;
}

// ---- the words before a run ----

const CUES: Array<[EntityKind, string[]]> = [
  ['place', ['in', 'to', 'from', 'near', 'around', 'visit', 'visited', 'visiting', 'across', 'towards', 'toward', 'via', 'leaving', 'left']],
  ['organization', ['at', 'joined', 'joining', 'join', 'supports', 'support', 'for']],
  [
    'person',
    [
      'with', 'and', 'named', 'called', 'sister', 'brother', 'mum', 'mom', 'dad', 'father', 'mother', 'wife', 'husband', 'son',
      'daughter', 'friend', 'partner', 'cousin', 'uncle', 'aunt', 'grandmother', 'grandfather', 'grandma', 'grandpa', 'manager',
      'boss', 'bf', 'gf', 'boyfriend', 'girlfriend', 'colleague', 'neighbour', 'neighbor', 'niece', 'nephew', 'ask', 'tell', 'met', 'meet', 'meeting',
    ],
  ],
  ['product', ['a', 'an', 'new', 'bought', 'buy', 'ordered', 'order', 'using', 'use', 'uses', 'own', 'owns', 'drives', 'drive', 'ride', 'rides', 'sold', 'selling', 'my', 'our', 'his', 'her']],
];
const CUE_KIND = new Map(CUES.flatMap(([kind, words]) => words.map((w) => [w, kind] as const)));

// ---- wink-nlp ----

// wink adds every word it has not seen to its vocabulary and never forgets it, so a long-running
// process would grow by ~300 bytes per new name or typo; a fresh instance (≈70 ms) after this many
// new words keeps that bounded.
const NEW_WORDS_BEFORE_RENEWAL = 50_000;

interface Wink {
  nlp: ReturnType<typeof winkNLP>;
  /** the first id wink gives a word it did not know */
  firstNewId: number;
}
let wink = createWink();

const NONE: Token = { value: '', lower: '', pos: '', spaces: '', id: 0, date: true, start: true };
const at = (tokens: Token[], i: number): Token => tokens[i] ?? NONE;

function createWink(): Wink {
  const instance = winkNLP(model);
  const probe = instance.readDoc('Xqzvwkj').tokens().out(instance.its.uniqueId) as number[];
  return { nlp: instance, firstNewId: probe[0] ?? 0 };
}

interface Token {
  value: string;
  lower: string;
  pos: string;
  spaces: string;
  id: number;
  /** inside a DATE entity */
  date: boolean;
  /** first of its sentence */
  start: boolean;
}

/**
 * What chat capitalises that names nothing: a pronoun with its contraction (`I’m`, `We'll`), and
 * interjections and slang, stretched or not (`Heyy`, `Hiii`, `Gotta`, `Lol`).
 */
const NOT_A_NAME = /^(?:(?:i|you|we|they|he|she|it|that|there|let)(?:['’](?:m|ve|ll|d|re|s))?|h+e+y+|h+i+|o+h+|a+h+|u+m+|h+m+|l+o+l+|h+a+(?:h+a+)*|o+m+g+|y+a+y+|w+o+w+|o+k+(?:a+y+)?|y+e+a+h*|y+e+p+|n+o+p+e+|gotta|gonna|wanna|kinda|sorta|dunno|thanks|thx|pls|btw|idk|tbh|ugh+|yikes|nah)$/;

function read(raw: string): MemoryEntity[] {
  // eslint-disable-next-line no-control-regex
  const text = withoutSpeaker(raw.slice(0, ENTITY_TEXT_LIMIT).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' '));
  if (!/\p{L}|\p{N}/u.test(text)) return [];
  const { nlp: w, firstNewId } = wink;
  const its = w.its;
  const doc = w.readDoc(text);
  const tokenList = doc.tokens();
  const values = tokenList.out(its.value) as string[];
  const pos = tokenList.out(its.pos) as string[];
  const spaces = tokenList.out(its.precedingSpaces) as string[];
  const ids = tokenList.out(its.uniqueId) as number[];
  const tokens: Token[] = values.map((value, i) => ({
    value,
    lower: value.toLowerCase(),
    pos: pos[i] ?? '',
    spaces: spaces[i] ?? '',
    id: ids[i] ?? 0,
    date: false,
    start: i === 0 || /^[.!?]+$/.test(values[i - 1] ?? ''),
  }));
  if (Math.max(0, ...ids) - firstNewId > NEW_WORDS_BEFORE_RENEWAL) wink = createWink();

  const found: Array<MemoryEntity & { at: number }> = [];
  const add = (kind: EntityKind, from: number, to: number): void => {
    const name = tokens
      .slice(from, to)
      .map((t, i) => (i === 0 ? t.value : t.spaces + t.value))
      .join('')
      .trim();
    const key = entityKey(name);
    if (key && /\p{L}|\p{N}/u.test(key) && !(kind !== 'date' && NOT_A_NAME.test(key))) found.push({ name, key, kind, at: from });
  };

  // all spans at once: an entity's own out(its.span) walks the document again
  const entityTypes = doc.entities().out(its.type) as string[];
  const spans = doc.entities().out(its.span) as unknown as Array<[number, number]>;
  spans.forEach(([from, to], e) => {
    if (entityTypes[e] !== 'DATE') return;
    for (const token of tokens.slice(from, to + 1)) token.date = true;
    add('date', from, to + 1);
  });

  for (let i = 0; i < tokens.length; ) {
    const end = runEnd(tokens, i);
    if (end === i) {
      i++;
      continue;
    }
    let from = i;
    if (end - from === 1) {
      const tags = lexiconTags(at(tokens, from).lower);
      if (tags.includes('Demonym') || tags.includes('Pronoun')) {
        i = end;
        continue;
      }
      if (tags.includes('Month') || tags.includes('WeekDay')) {
        add('date', from, end);
        i = end;
        continue;
      }
    }
    // a capitalised common word opening a sentence ("Coffee with Aditi", "Apparently Giulia")
    while (from < end && at(tokens, from).start && isCommonWord(at(tokens, from))) from++;
    if (from < end) add(kindOf(tokens, from, end), from, end);
    i = end;
  }
  return firstOfEach(found);
}

/** The end of the name that starts at `i` (exclusive), or `i` when none does. */
function runEnd(tokens: Token[], i: number): number {
  const isPart = (t: Token | undefined): boolean =>
    t !== undefined && !t.date && t.value !== 'I' && (t.pos === 'PROPN' || (/^\p{Lu}/u.test(t.value) && (t.pos === 'NOUN' || t.pos === 'NUM' || t.pos === 'ADJ')));
  const first = at(tokens, i);
  if (isPart(first) && /^\p{Lu}|^\p{Ll}+\p{Lu}/u.test(first.value)) {
    let end = i + 1;
    for (;;) {
      const next = at(tokens, end);
      if (!next.start && (isPart(next) || /^\d[\w-]*$/.test(next.value)) && next.spaces !== '') end++;
      else if (next.lower === 'of' && isPart(at(tokens, end + 1)) && /^\p{Lu}/u.test(at(tokens, end + 1).value)) end += 2;
      else return end;
    }
  }
  // lower-case chat: only what the lexicon names, and a place's or organisation's last word after it
  if (!first.date && (first.pos === 'NOUN' || first.pos === 'PROPN') && lexiconKind(first.lower) && first.lower.length > 2) {
    let end = i + 1;
    while ((PLACE_WORDS.has(at(tokens, end).lower) || ORG_WORDS.has(at(tokens, end).lower)) && at(tokens, end).pos === 'NOUN') end++;
    return end;
  }
  return i;
}

/** A capitalised sentence opener wink knows as a common word, and compromise not as a name. */
function isCommonWord(token: Token): boolean {
  if (lexiconKind(token.lower)) return false;
  const lower = wink.nlp.readDoc(token.lower).tokens().out(wink.nlp.its.uniqueId) as number[];
  return lower.length === 1 && (lower[0] ?? Infinity) < wink.firstNewId;
}

function kindOf(tokens: Token[], from: number, to: number): EntityKind {
  const run = tokens.slice(from, to);
  if (run.some((t) => /\d/.test(t.value) || /\p{Ll}\p{Lu}/u.test(t.value))) return 'product';
  const last = at(run, run.length - 1).lower.replace(/\.$/, '');
  if (run.length > 1 && ORG_WORDS.has(last)) return 'organization';
  if (run.length > 1 && PLACE_WORDS.has(last)) return 'place';
  const known = run.map((t) => lexiconKind(t.lower.replace(/['’]s$/, '')));
  if (known.includes('organization')) return 'organization';
  if (known.includes('place')) return 'place';
  if (known[0] === 'person') return 'person';
  let before = from - 1;
  while (before >= 0 && (at(tokens, before).lower === 'the' || at(tokens, before).pos === 'ADJ')) before--;
  const cue = before >= 0 ? CUE_KIND.get(at(tokens, before).lower) : undefined;
  if (cue === 'product' && at(tokens, from).start) return 'person';
  return cue ?? 'person';
}

function firstOfEach(found: Array<MemoryEntity & { at: number }>): MemoryEntity[] {
  const seen = new Set<string>();
  const out: MemoryEntity[] = [];
  for (const { name, key, kind } of found.sort((a, b) => a.at - b.at)) {
    if (seen.has(`${kind}\u0000${key}`)) continue;
    seen.add(`${kind}\u0000${key}`);
    out.push({ name, key, kind });
    if (out.length === ENTITY_LIMIT) break;
  }
  return out;
}
