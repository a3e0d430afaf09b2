import * as chrono from 'chrono-node';

/** A span of event time, epoch ms, `end` exclusive. */
export interface TimeSpan {
  start: number;
  end: number;
}

const DAY = 86_400_000;

/**
 * The parsers of chrono's English casual set that read a written-out date; times of day and
 * relative expressions are left out, since no span is taken from them. The full set's patterns cost
 * a fresh process 300–370 ms of V8 compiling its regular expressions on the first queries naming
 * a date — on the event loop, in a search — against about 20 ms for these.
 */
const DATE_PARSERS = new Set([
  'ENYearMonthDayParser',
  'ISOFormatParser',
  'SlashDateFormatParser',
  'ENMonthNameLittleEndianParser',
  'ENMonthNameMiddleEndianParser',
  'ENSlashMonthFormatParser',
  'ENYearMonthNameParser',
  'ENMonthNameParser',
]);

const dates = chrono.casual.clone();
dates.parsers = dates.parsers.filter((parser) => DATE_PARSERS.has(parser.constructor.name));

/**
 * The time a query names explicitly — a day, a month or a year with its year written out ("in May
 * 2023", "on 8 May 2023", "back in 2022") — as a span of event time; null when it names none.
 * Relative expressions ("last week", "in March") are left alone: what they mean depends on when the
 * memories were made, which a query does not say. A day is widened by one day on each side, for
 * time zones. Several named times give the span that covers them all.
 */
export function namedTime(query: string): TimeSpan | null {
  const spans: TimeSpan[] = [];
  for (const result of dates.parse(query)) {
    const known = result.start;
    // the year written out, not one a relative expression ("last week") was resolved to
    if (!/\b\d{4}\b/.test(result.text) || !known.isCertain('year')) continue;
    const year = known.get('year') as number;
    if (known.isCertain('month')) {
      const month = (known.get('month') as number) - 1;
      if (known.isCertain('day')) {
        const day = Date.UTC(year, month, known.get('day') as number);
        spans.push({ start: day - DAY, end: day + 2 * DAY });
      } else {
        spans.push({ start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) });
      }
    } else {
      spans.push({ start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) });
    }
  }
  if (spans.length === 0) {
    // a year on its own ("in 2022", "the summer of 2023"), which date parsers leave out
    for (const match of query.matchAll(/\b(19\d{2}|20\d{2})\b/g)) {
      const year = Number(match[1]);
      spans.push({ start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) });
    }
  }
  if (spans.length === 0) return null;
  return { start: Math.min(...spans.map((s) => s.start)), end: Math.max(...spans.map((s) => s.end)) };
}
