import { seededRandom as random } from '../../lib/seeded-random.js';

// Seeded texts for the benches: the same run, the same texts.

const SUBJECTS = ['The new customer', 'My older sister', 'Our lead engineer', 'The night nurse', 'A regular visitor', 'The school principal', 'Her landlord', 'The delivery driver'];
const VERBS = ['asked about', 'complained about', 'finally fixed', 'wrote about', 'forgot about', 'paid for', 'argued over', 'strongly recommended'];
const OBJECTS = ['the broken heating system', 'a late invoice', 'the weekend hiking trip', 'two concert tickets', 'the blood test results', 'a cheaper phone plan', 'the garden fence', 'the quarterly budget'];
const PLACES = ['at the office', 'in the lobby', 'near the station', 'at home', 'over the phone', 'in the chat', 'at the market', 'by email'];
const TIMES = ['last Tuesday morning', 'before the holidays', 'on Friday', 'after lunch yesterday', 'early this month', 'during the storm'];
const REASONS = ['because the deadline moved', 'since nobody else would', 'although it was raining', 'so everyone could relax', '', ''];

/** Seeded notes of 12–21 words, distinct by their ticket number. */
export function notes(count: number, first: number): string[] {
  const next = random(first + 1);
  const pick = (list: string[]): string => list[Math.floor(next() * list.length)] as string;
  return Array.from({ length: count }, (_, i) =>
    [pick(SUBJECTS), pick(VERBS), pick(OBJECTS), pick(PLACES), pick(TIMES), pick(REASONS), `(ticket ${first + i})`].filter(Boolean).join(' '),
  );
}

/** A seeded Markdown handbook: `sections` sections of three paragraphs of notes, about 1.4 KB a section. */
export function handbook(n: number, sections = 10): string {
  const parts = [`# Handbook ${n}`];
  for (let s = 0; s < sections; s++) {
    parts.push(`## Section ${s} of handbook ${n}`);
    for (let p = 0; p < 3; p++) parts.push(notes(4, n * 1000 + s * 10 + p * 4).join('. ') + '.');
  }
  return `${parts.join('\n\n')}\n`;
}
