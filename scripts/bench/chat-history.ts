import { seededRandom } from '../../lib/seeded-random.js';

// One person's chats with an assistant over a year, seeded, for `npm run bench:import`: short user
// turns ("how long should I rest the dough?") and assistant answers of mixed length, most of them
// 1–5 KB of paragraphs, as a chat export holds them.

/** One message of a chat; `time` in unix seconds. */
export interface HistoryTurn {
  role: 'user' | 'assistant';
  content: string;
  time: number;
}

/** One chat: a few exchanges within minutes. */
export interface Chat {
  id: string;
  turns: HistoryTurn[];
}

/** 2025-01-01T00:00:00Z: the year the chats are spread over. */
const YEAR_START = 1_735_689_600;
const YEAR_SECONDS = 365 * 86_400;

interface Topic {
  subject: string;
  things: string[];
}

const TOPICS: Topic[] = [
  { subject: 'sourdough baking', things: ['the starter', 'the levain', 'the bulk ferment', 'the autolyse', 'the crumb', 'the Dutch oven', 'rye flour', 'the banneton'] },
  { subject: 'marathon training', things: ['the long run', 'tempo intervals', 'my left calf', 'the taper', 'carb loading', 'recovery days', 'the race pace', 'new trainers'] },
  { subject: 'the kitchen renovation', things: ['the tiler', 'the quote', 'the worktop', 'the extractor fan', 'the building permit', 'the plumbing', 'the budget', 'the cabinets'] },
  { subject: 'learning Japanese', things: ['kanji', 'the JLPT N4', 'particles', 'my tutor', 'listening practice', 'keigo', 'flashcards', 'the textbook'] },
  { subject: 'the Postgres migration', things: ['the connection pool', 'the slow query', 'the index', 'the replica', 'the backup', 'the vacuum', 'the schema change', 'the staging copy'] },
  { subject: 'our trip to Portugal', things: ['the Lisbon flat', 'the train to Porto', 'the rental car', 'the Algarve', 'the museum tickets', 'the ferry', 'the hiking trail', 'the budget'] },
  { subject: 'my tomato plants', things: ['the seedlings', 'blossom end rot', 'the greenhouse', 'the compost', 'the watering schedule', 'the aphids', 'the trellis', 'the harvest'] },
  { subject: 'the savings plan', things: ['the index fund', 'the emergency fund', 'the pension', 'the mortgage', 'the tax return', 'the budget spreadsheet', 'the credit card', 'the ISA'] },
];

const QUESTIONS: Array<(t: Topic, a: string, b: string) => string> = [
  (_t, a) => `What should I do about ${a}?`,
  (t, a) => `Quick one: is ${a} normal for ${t.subject}?`,
  (_t, a, b) => `Can you compare ${a} and ${b} for me?`,
  (_t, a) => `I'm stuck with ${a} again. Any ideas?`,
  (t, a, b) => `Last time you said ${a} matters more than ${b}. Why was that? I want to get ${t.subject} right this time, and I keep going back and forth on it.`,
  () => 'Thanks, that helps.',
  () => 'ok and then?',
  (t) => `Remind me where we were with ${t.subject}.`,
];

const SENTENCES: Array<(t: Topic, a: string, b: string, n: number) => string> = [
  (t, a, b) => `With ${t.subject}, ${a} usually matters more than ${b}, so start there.`,
  (_t, a, b) => `If ${a} keeps giving you trouble, look at ${b} first; the two are more connected than they seem.`,
  (_t, a, _b, n) => `A good rule of thumb is to give ${a} about ${n} minutes more than the guide says and then check again.`,
  (t, a) => `Most people who are new to ${t.subject} underestimate ${a}, and that is fine: you learn it by doing it a few times.`,
  (_t, a, b) => `You mentioned ${a} last week; compared with then, ${b} sounds like it is going in the right direction.`,
  (_t, a, _b, n) => `Write down what happens with ${a} each time, with the date and roughly ${n} words on what you changed, so the pattern shows itself.`,
  (t, a, b) => `There are two common approaches to ${a}: change one thing at a time, or rethink ${b} as a whole; for ${t.subject} the first is usually safer.`,
  (_t, a) => `Do not worry too much about ${a} yet.`,
  (_t, a, b) => `One thing that often helps is to look at ${a} and ${b} on the same day, because each tells you something about the other.`,
  (_t, a, _b, n) => `In numbers: plan for around ${n} percent of your effort on ${a}, and leave the rest flexible.`,
];

/**
 * A person's chats over the year 2025, `turns` messages in all (the last chat cut short to fit):
 * chats of 1–8 exchanges, each a short user turn and an assistant answer; of the answers about a
 * quarter are a sentence or three, a sixth a paragraph or two (0.4–1 KB), the rest 1–5 KB.
 */
export function chatHistory(turns: number, seed: number): Chat[] {
  const next = seededRandom(seed + 1);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const sizes: number[] = [];
  for (let total = 0; total < turns; total += sizes[sizes.length - 1] as number) sizes.push(Math.min(2 * int(1, 8), turns - total));
  const starts = sizes.map(() => YEAR_START + Math.floor(next() * YEAR_SECONDS)).sort((a, b) => a - b);

  const sentence = (topic: Topic): string => {
    return pick(SENTENCES)(topic, pick(topic.things), pick(topic.things), int(5, 60));
  };
  const answer = (topic: Topic): string => {
    const size = next();
    const length = size < 0.25 ? int(80, 400) : size < 0.42 ? int(400, 1000) : int(1000, 5000);
    const paragraphs: string[] = [];
    let written = 0;
    while (written < length) {
      const paragraph: string[] = [];
      for (let n = int(2, 6); n > 0 && written < length; n--) {
        const s = sentence(topic);
        paragraph.push(s);
        written += s.length + 1;
      }
      paragraphs.push(paragraph.join(' '));
    }
    return paragraphs.join('\n\n');
  };

  return sizes.map((size, c) => {
    const topic = pick(TOPICS);
    let time = starts[c] as number;
    const chat: HistoryTurn[] = [];
    for (let i = 0; i < size; i++) {
      const user = i % 2 === 0;
      const content = user ? pick(QUESTIONS)(topic, pick(topic.things), pick(topic.things)) : answer(topic);
      chat.push({ role: user ? 'user' : 'assistant', content, time });
      time += user ? int(5, 40) : int(30, 600);
    }
    return { id: `chat-${c + 1}`, turns: chat };
  });
}
