// The word-level text handling of the local language model: content words, a light stemmer and
// sentence splitting. Pure and deterministic.

/** English function words and chat filler that say nothing about what is asked. */
const STOP_WORDS = new Set(
  (
    'a about above after again all also am an and any are as at be been before being below between both but by can could ' +
    'did do does doing done down during each either else ever few for from further had has have having he her here hers him ' +
    'his how i if in into is it its itself just let me might mine more most much must my myself neither no nor not now of ' +
    'off on once one only or other our ours out over own per please same shall she should so some such than thank thanks ' +
    'that the their theirs them then there these they this those through thus to too under until up upon us very via was ' +
    'we were what whatever when where whether which while who whom whose why will with within without would yes yet you ' +
    'your yours hi hello hey ok okay tell know like want need wants needs wanted needed ' +
    // light verbs: "how long does it take", "what do I get" say nothing about the topic
    'get gets got take takes took make makes made go goes going went give gives gave put come comes say says said see thing things lot'
  ).split(' '),
);

/** A word's stem: lower case, plural `s`/`ies`, `ing` and `ed` stripped, a final `e` dropped, a doubled consonant undone. */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '');
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is|ous)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length >= 6) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length >= 5) w = w.slice(0, -2);
  // "shipping"/"shipped" → "shipp" → "ship"; "updated"/"update" → "updat"
  if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(?:ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** The words of a text, lower-cased: letters and digits, with inner apostrophes and hyphens split off. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** `getOrderStatus`, `get_order_status` and `get-order-status` as `get order status`. */
export function identifierWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .toLowerCase()
    .trim();
}

/** Stems of words seen before (a passage's vocabulary repeats from turn to turn); bounded. */
const stemCache = new Map<string, string>();

/** The distinct stems of a text's content words (stop words and one-letter words left out). */
export function contentStems(text: string): Set<string> {
  const stems = new Set<string>();
  for (const word of words(text)) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    let s = stemCache.get(word);
    if (s === undefined) {
      if (stemCache.size >= 50_000) stemCache.clear();
      s = stem(word);
      stemCache.set(word, s);
    }
    stems.add(s);
  }
  return stems;
}

/**
 * The sentences of a passage, trimmed: split after `.`, `!` or `?` followed by a space and an
 * upper-case letter, digit or quote, and at line breaks (headings, list items). Markdown list
 * and heading markers are dropped.
 */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    const clean = line.replace(/^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+)/, '').trim();
    if (clean === '') continue;
    for (const part of clean.split(/(?<=[.!?]["')\]]?)\s+(?=["'([]?[\p{Lu}\p{N}])/u)) {
      const sentence = part.trim();
      if (sentence !== '') out.push(sentence);
    }
  }
  return out;
}

/** Whitespace-separated words of a text: the local model's token count. */
export function wordCount(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160;
    if (!space && !inWord) count += 1;
    inWord = !space;
  }
  return count;
}
