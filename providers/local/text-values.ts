// Finders for values written in a recognisable form (emails, URLs, phone numbers, dates,
// numbers, lists, names) — the pure text side of the local extractor.

/** A piece of text found at [start, end) of the string searched. */
export interface Found<T = string> {
  start: number;
  end: number;
  value: T;
}

const EMAIL = /(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])/g;
const URL_LIKE = /(?<![\w@/.-])(?:https?:\/\/|www\.)[^\s<>"'`]+/gi;

/** Email addresses, as written. */
export function findEmails(text: string): Found[] {
  return [...text.matchAll(EMAIL)].map((m) => ({ start: m.index, end: m.index + m[0].length, value: m[0] }));
}

/** `http(s)://…` and `www.…` addresses, as written, without trailing punctuation or an unmatched `)`. */
export function findUrls(text: string): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(URL_LIKE)) {
    let url = m[0].replace(/[.,;:!?]+$/, '');
    while (url.endsWith(')') && (url.match(/\(/g)?.length ?? 0) < (url.match(/\)/g)?.length ?? 0)) url = url.slice(0, -1).replace(/[.,;:!?]+$/, '');
    if (/^(?:https?:\/\/|www\.)[^./]+\.[^.]|^https?:\/\/(?:localhost|\d)/i.test(url)) found.push({ start: m.index, end: m.index + url.length, value: url });
  }
  return found;
}

const PHONE = /(?<![\w/.:-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d[\d\s.-]{4,}\d(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?![\w/-])/gi;

/** Phone numbers (7 to 15 digits, with the usual separators), as written; never a date. */
export function findPhones(text: string): Found[] {
  const found: Found[] = [];
  const dates = findDates(text);
  for (const m of text.matchAll(PHONE)) {
    const value = m[0].trim();
    const digits = value.replace(/\D/g, '').length;
    if (digits < 7 || digits > 15) continue;
    // a plain number or an amount is not a phone number: it needs a separator pattern or a +
    if (!/^\+/.test(value) && !/\d[\s.-]\d/.test(value) && !/\(\d/.test(value)) continue;
    if (/^\d{1,3}(?:[.,]\d{3})+$/.test(value)) continue;
    if (/^\d{4}-\d{2}-\d{2}/.test(value)) continue;
    const start = m.index + m[0].indexOf(value);
    if (dates.some((d) => d.start < start + value.length && start < d.end)) continue;
    found.push({ start, end: start + value.length, value });
  }
  return found;
}

const MONTHS: Readonly<Record<string, number>> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6,
  july: 7, jul: 7, august: 8, aug: 8, september: 9, sept: 9, sep: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
};
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH = '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?';
const WEEKDAY = '(?:(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun)\\.?,?\\s+)?';
const ORDINAL = '(?:st|nd|rd|th)?';

const ISO_DATE = /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])/g;
const MONTH_FIRST = new RegExp(`(?<![\\w])${WEEKDAY}${MONTH}\\s+(\\d{1,2})${ORDINAL}(?:,?\\s+(\\d{4}))?(?![\\w]|[:.]\\d)`, 'gi');
const DAY_FIRST = new RegExp(`(?<![\\w])${WEEKDAY}(?:the\\s+)?(\\d{1,2})${ORDINAL}\\s+(?:of\\s+)?${MONTH}(?:,?\\s+(\\d{4}))?(?![\\w])`, 'gi');
const SLASHED = /(?<![\w/.])(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?![\w/.])/g;
const YEAR_FIRST_SLASHED = /(?<![\w/.])(\d{4})\/(\d{1,2})\/(\d{1,2})(?![\w/.])/g;

const pad = (n: number): string => String(n).padStart(2, '0');

function validDay(year: number | null, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year ?? 2000, month, 0)).getUTCDate();
  return day <= days;
}

function dateValue(year: number | null, month: number, day: number): string | null {
  if (!validDay(year, month, day)) return null;
  if (year === null) return `${MONTH_NAMES[month - 1]} ${day}`;
  if (year < 1000 || year > 9999) return null;
  return `${year}-${pad(month)}-${pad(day)}`;
}

/**
 * Calendar dates written out in full: ISO (`2026-03-03`, kept whole when it has a time),
 * `March 3, 2026`, `3 March 2026`, `Tue, Mar 3rd 2026`, `2026/03/03`, and `03/14/2026` or
 * `14.03.2026` when the order of day and month is unambiguous. A full date becomes
 * `YYYY-MM-DD`; a date without a year stays as `March 3`. Relative words (today, tomorrow,
 * next Friday) and lone weekdays or months are not dates here: they are not explicit.
 */
export function findDates(text: string): Array<Found & { hasYear: boolean }> {
  const found: Array<Found & { hasYear: boolean }> = [];
  const add = (start: number, end: number, value: string | null, hasYear: boolean): void => {
    if (value === null || found.some((f) => f.start < end && start < f.end)) return;
    found.push({ start, end, value, hasYear });
  };
  for (const m of text.matchAll(ISO_DATE)) {
    const [whole, y, mo, d, time] = m as unknown as [string, string, string, string, string | undefined];
    const date = dateValue(Number(y), Number(mo), Number(d));
    add(m.index, m.index + whole.length, date === null ? null : time !== undefined ? whole : date, true);
  }
  for (const m of text.matchAll(MONTH_FIRST)) {
    const [whole, monthWord, d, y] = m as unknown as [string, string, string, string | undefined];
    // "may" is a verb far more often than a month unless capitalised
    if (monthWord === 'may') continue;
    add(m.index, m.index + whole.length, dateValue(y === undefined ? null : Number(y), MONTHS[monthWord.toLowerCase()] as number, Number(d)), y !== undefined);
  }
  for (const m of text.matchAll(DAY_FIRST)) {
    const [whole, d, monthWord, y] = m as unknown as [string, string, string, string | undefined];
    if (monthWord === 'may') continue;
    add(m.index, m.index + whole.length, dateValue(y === undefined ? null : Number(y), MONTHS[monthWord.toLowerCase()] as number, Number(d)), y !== undefined);
  }
  for (const m of text.matchAll(YEAR_FIRST_SLASHED)) {
    const [whole, y, mo, d] = m as unknown as [string, string, string, string];
    add(m.index, m.index + whole.length, dateValue(Number(y), Number(mo), Number(d)), true);
  }
  for (const m of text.matchAll(SLASHED)) {
    const [whole, a, , b, y] = m as unknown as [string, string, string, string, string];
    const [first, second] = [Number(a), Number(b)];
    // 03/04/2026 could be March 4 or 3 April: only an unambiguous order is read
    let value: string | null = null;
    if (first > 12 && second <= 12) value = dateValue(Number(y), second, first);
    else if (second > 12 && first <= 12) value = dateValue(Number(y), first, second);
    else if (first === second) value = dateValue(Number(y), first, first);
    add(m.index, m.index + whole.length, value, true);
  }
  return found.sort((x, y) => x.start - y.start);
}

const SMALL_NUMBERS: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, dozen: 12,
};

const NUMBER = new RegExp(
  String.raw`(?<![\w.,/:-])(-|\+)?(?:(USD|EUR|GBP|CHF|CAD|AUD|JPY|INR)\s?)?([$€£¥₹])?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?` +
    String.raw`(?:\s?(k|mm|m|bn|b|thousand|million|billion)(?![A-Za-z]))?(?![\d@/]|[.,]\d)` +
    String.raw`|(?<![\w-])(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|dozen)(?![\w-])`,
  'gi',
);

/**
 * Numbers as written in prose: `1200`, `1,200.50`, `$1,200` (1200), `-3`, `12%` (12), `50k`
 * (50000), `$2.5m` / `2.5 million` (2500000), `twelve` (12). Units after a number are not
 * part of it (`5 kg` is 5). `protect` spans (dates, phone numbers, …) hold no numbers.
 */
export function findNumbers(text: string, protect: ReadonlyArray<{ start: number; end: number }> = []): Array<Found<number>> {
  const found: Array<Found<number>> = [];
  for (const m of text.matchAll(NUMBER)) {
    const [whole, sign, code, symbol, digits, fraction, suffix, word] = m as unknown as Array<string | undefined>;
    const start = m.index;
    const end = start + (whole as string).length;
    if (protect.some((p) => p.start < end && start < p.end)) continue;
    if (word !== undefined) {
      found.push({ start, end, value: SMALL_NUMBERS[word.toLowerCase()] as number });
      continue;
    }
    let value = Number(`${(digits as string).replace(/,/g, '')}${fraction ?? ''}`);
    const money = code !== undefined || symbol !== undefined;
    switch (suffix?.toLowerCase()) {
      case 'k':
      case 'thousand':
        value *= 1_000;
        break;
      case 'm':
      case 'mm':
        // "5m" alone is as likely minutes or metres; with a currency it is millions
        if (!money) {
          found.push({ start, end: end - (suffix as string).length, value: sign === '-' ? -value : value });
          continue;
        }
        value *= 1_000_000;
        break;
      case 'million':
        value *= 1_000_000;
        break;
      case 'b':
      case 'bn':
      case 'billion':
        if (!money && suffix?.toLowerCase() === 'b') {
          found.push({ start, end: end - (suffix as string).length, value: sign === '-' ? -value : value });
          continue;
        }
        value *= 1_000_000_000;
        break;
      default:
        break;
    }
    // float noise: 2.3 * 1e6 must be 2300000
    value = Number(value.toPrecision(15));
    found.push({ start, end, value: sign === '-' ? -value : value });
  }
  return found;
}

/** Items of a written list: `a, b and c`, `a; b; c`, `#a #b`, `"a", "b" or "c"`, without duplicates. */
export function splitList(text: string): string[] {
  const parts = text
    .split(/\s*(?:,|;|\||\s&\s|\band\b|\bor\b|\bplus\b|(?<=\S)\s+(?=#))\s*/i)
    .map((part) => stripQuotes(part.trim().replace(/^(?:#|and\s+|or\s+)/i, '').replace(/[.!?]+$/, '').trim()))
    .filter((part) => part !== '' && part.length <= 80);
  const items: string[] = [];
  for (const part of parts) {
    if (!items.some((kept) => kept.toLowerCase() === part.toLowerCase())) items.push(part);
  }
  return items;
}

/** Hashtags (`#search`), without the `#`. */
export function findHashtags(text: string): string[] {
  return [...text.matchAll(/(?<![\w&#/])#([A-Za-z][\w-]*)/g)].map((m) => m[1] as string);
}

/** Removes one pair of matching quotes around a whole value. */
export function stripQuotes(value: string): string {
  const m = /^(["“”'‘’«])(.*)(["“”'‘’»])$/s.exec(value);
  return m !== null && m[2] !== undefined && m[2].trim() !== '' ? m[2].trim() : value;
}

/** Capitalised words that start sentences or name times, never people or companies. */
const NOT_NAMES = new Set(
  (
    'i im i\'m i’m me my mine we our us you your he she his her they them their it its this that these those there here the a an ' +
    'hi hello hey dear thanks thank ok okay yes no yeah yep sure please and but or so also then after before when while since because ' +
    'if on in at by for from to with of about as yesterday today tomorrow tonight now next last finally eventually ultimately ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december ' +
    'mr mrs ms dr prof sir madam team everyone all someone somebody nobody none subject re fyi note update task todo decision observation ' +
    'need needs remember don\'t don’t let\'s let’s lets make must should will would could can going try want plan have has had get got keep stop start check call send'
  ).split(' '),
);

const NAME_WORD = String.raw`[A-Z][\p{L}'’.-]*`;
const NAME_PARTICLE = String.raw`(?:van|von|de|da|del|della|der|den|di|du|la|le|bin|al|st\.)`;
/** A run of one to four capitalised words (with particles such as `van`, `de`). */
export const PERSON_RUN = String.raw`${NAME_WORD}(?:\s+(?:${NAME_PARTICLE}\s+)?${NAME_WORD}){0,3}`;

/**
 * The person's name a text starts with: up to four capitalised words, or (for chat users who
 * do not capitalise) up to three words when that is the whole text. Null when it starts with
 * something else.
 */
export function leadingPersonName(text: string, allowLowercase = false): string | null {
  const trimmed = text.trim().replace(/^@/, '');
  const run = new RegExp(`^${PERSON_RUN}`, 'u').exec(trimmed);
  if (run !== null) {
    const words = run[0].replace(/[.]+$/, '').split(/\s+/);
    while (words.length > 0 && NOT_NAMES.has((words[0] as string).toLowerCase())) words.shift();
    if (words.length > 0 && !NOT_NAMES.has((words.at(-1) as string).toLowerCase())) return words.join(' ');
    return null;
  }
  if (allowLowercase && /^[\p{Ll}'’-]+(?:\s+[\p{Ll}'’-]+){0,2}$/u.test(trimmed) && !trimmed.split(/\s+/).some((w) => NOT_NAMES.has(w))) {
    return trimmed;
  }
  return null;
}

const LEGAL_SUFFIX = String.raw`(?:Inc\.?|Ltd\.?|LLC|LLP|GmbH|AG|SA|S\.A\.|BV|B\.V\.|PLC|plc|Corp\.?|Co\.?|Corporation|Company|Limited|Group|Labs?)`;
const COMPANY_WORD = String.raw`(?:[A-Z0-9][\p{L}\p{N}&'’.-]*|[a-z]+[A-Z][\p{L}\p{N}]*)`;
/** A company name: capitalised words (digits, `&`, `of`/`and` between them), with a legal suffix. */
const COMPANY_RUN = new RegExp(
  String.raw`^${COMPANY_WORD}(?:(?:\s+(?:&|and|of|de|the|for)\s+|\s+|-)${COMPANY_WORD}){0,4}(?:,?\s+${LEGAL_SUFFIX})?`,
  'u',
);

/** The company name a text starts with, or null. */
export function leadingCompanyName(text: string): string | null {
  const m = COMPANY_RUN.exec(text.trim());
  if (m === null) return null;
  const words = m[0].replace(/['’]s$/, '').split(/\s+/);
  // "Acme. We" or "Acme and I": stop before a word that starts a sentence
  const cut = words.findIndex((w, i) => i > 0 && NOT_NAMES.has(w.toLowerCase().replace(/[.,]$/, '')) && !/^(?:and|of|the|for|de)$/i.test(w));
  const kept = (cut === -1 ? words : words.slice(0, cut)).join(' ');
  const cleaned = kept.replace(/[.,]+$/, '').replace(/\s+(?:&|and|of|de|the|for)$/i, '').trim();
  if (cleaned === '' || NOT_NAMES.has(cleaned.toLowerCase())) return null;
  return cleaned;
}
