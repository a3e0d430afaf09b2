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

const SPEAKERS = ['Maya', 'Daniel', 'Priya', 'Tomás', 'Aiko', 'Lars', 'Fatima', 'Owen'];
const PEOPLE = ['Daniel', 'my sister Ines', 'Dr. Okafor', 'Grandma Rosa', 'our neighbour Mr. Patel', 'Lucia from Acme', 'the Hendersons', 'Coach Brennan'];
const CITIES = ['Porto', 'Lisbon', 'Berlin', 'Osaka', 'the Lake District', 'Montreal', 'Nairobi', 'Valencia', 'Seattle', 'Kraków'];
const LINES = [
  (p: string, w: string) => `We moved to ${w} with ${p}`,
  (p: string, w: string) => `I'm flying to ${w} next month to see ${p}, can you remind me to book the hotel near the old town?`,
  (p: string, w: string) => `${p} recommended a small restaurant in ${w}, the one with the blue door`,
  (p: string, w: string) => `Remember that ${p} is allergic to peanuts when we plan the dinner in ${w}`,
  (p: string, w: string) => `Last summer ${p} and I hiked for a week around ${w} and it rained every single day`,
  (p: string, w: string) => `My new job starts in ${w} on the 3rd of March; ${p} will help me find a flat`,
];
const WHEN = ['', ' on Friday', ' in 2019', ' after the wedding', ' before Christmas', ' last week'];

/** `count` seeded chat lines of 60–200 characters that name people and places, distinct by their seed. */
export function chatLines(count: number, seed: number): string[] {
  const next = random(seed + 1);
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)] as T;
  return Array.from({ length: count }, (_, i) => `${pick(SPEAKERS)}: ${pick(LINES)(pick(PEOPLE), pick(CITIES))}${pick(WHEN)} (#${seed + i})`);
}
