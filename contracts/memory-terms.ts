import { stemmer } from 'stemmer';

/**
 * Words too common in conversation to tell one memory from another: function words, pronouns,
 * auxiliaries and question words. Names, numbers and content words are kept.
 */
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could ' +
    'did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if ' +
    'in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own ' +
    'same she should so some such than that the their theirs them themselves then there these they this those through to too under ' +
    'until up very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    "i'm i've i'd i'll you're you've he's she's it's we're they're that's what's there's don't doesn't didn't isn't wasn't aren't " +
    "weren't won't can't couldn't shouldn't wouldn't haven't hasn't hadn't let's im ive id ill youre dont doesnt didnt isnt wasnt cant " +
    'also really yeah yes oh ok okay hey hi hello thanks thank well much many get got go going gone went like just s t'
  ).split(' '),
);

/** Longest term kept; longer runs of letters are not words anyone searches for. */
const MAX_TERM_LENGTH = 64;

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** The keyword term of one word: lower-cased, stop words dropped, English words stemmed (Porter); null when it is not a term. */
export function term(word: string): string | null {
  const lower = word.toLowerCase().replace(/’/g, "'");
  if (STOP_WORDS.has(lower)) return null;
  // a possessive is its noun: "Caroline's" → "caroline"
  const bare = lower.endsWith("'s") ? lower.slice(0, -2) : lower.replace(/'/g, '');
  if (bare.length === 0 || bare.length > MAX_TERM_LENGTH || STOP_WORDS.has(bare)) return null;
  if (bare.length < 2 && !/\p{N}/u.test(bare)) return null;
  // stemming is for Latin-script words; numbers and other scripts are kept as written
  return /^[a-z]+$/.test(bare) ? stemmer(bare) : bare;
}

/** The terms of a text with their counts (term frequency), and how many terms it has. */
export function termCounts(text: string): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  let length = 0;
  for (const match of text.matchAll(WORD)) {
    const t = term(match[0]);
    if (t === null) continue;
    counts.set(t, (counts.get(t) ?? 0) + 1);
    length += 1;
  }
  return { counts, length };
}

/** The distinct terms of a query, in order of first appearance. */
export function queryTerms(query: string): string[] {
  return [...termCounts(query).counts.keys()];
}

/**
 * Most distinct terms indexed per memory: a long text keeps its most frequent ones (the first seen
 * among equals), its length still counting every term. A 32 KB message of distinct words would
 * otherwise write ~5 000 postings, and a batch of them hundreds of thousands in one transaction.
 */
export const MAX_INDEXED_TERMS = 1_000;

/** The terms of a memory's text as the keyword index stores them: `termCounts`, at most `MAX_INDEXED_TERMS` of them. */
export function indexedTerms(text: string): { counts: Map<string, number>; length: number } {
  const all = termCounts(text);
  if (all.counts.size <= MAX_INDEXED_TERMS) return all;
  // a stable sort keeps first-seen order among terms of equal frequency
  const kept = [...all.counts].sort((a, b) => b[1] - a[1]).slice(0, MAX_INDEXED_TERMS);
  return { counts: new Map(kept), length: all.length };
}
