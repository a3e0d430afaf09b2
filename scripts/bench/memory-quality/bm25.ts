import { stemmer } from 'stemmer';
import { eng } from 'stopword';

// A well-tokenised BM25 over a conversation's turns, the strong lexical baseline of
// `npm run bench:memory-quality`: each turn's text alone (the speaker's name is not part of it),
// lower-cased, contractions and possessives cut to their word, English stop words (stopword's
// list) dropped, the rest Porter-stemmed; every turn of the conversation scored (exhaustive).

const K1 = 1.2;
const B = 0.75;
const STOP = new Set(eng);
const WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;

/** The terms of a text, in order, repeats kept. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const [match] of text.toLowerCase().replaceAll('’', "'").matchAll(WORD)) {
    // "don't", "can't": an auxiliary and a not, both stop words
    if (match.endsWith("n't")) continue;
    // "kenji's" is kenji, "i'm" is i
    const word = match.split("'")[0] as string;
    if (STOP.has(word) || (word.length < 2 && !/\p{N}/u.test(word))) continue;
    out.push(/^[a-z]+$/.test(word) ? stemmer(word) : word);
  }
  return out;
}

export interface Document {
  id: string;
  text: string;
  /** Unix seconds: `rank` can keep only documents at or before a time. */
  time: number;
}

/** BM25 (k1 1.2, b 0.75, Lucene's idf) over one conversation's turns. */
export class Bm25 {
  private readonly docs: Array<{ id: string; time: number; tf: Map<string, number>; length: number }>;
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(documents: Document[]) {
    this.docs = documents.map((d) => {
      const terms = tokens(d.text);
      const tf = new Map<string, number>();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return { id: d.id, time: d.time, tf, length: terms.length };
    });
    this.avgLength = this.docs.reduce((n, d) => n + d.length, 0) / Math.max(1, this.docs.length);
  }

  /** Ids of the documents that share a term with the query, best first (ties in document order); with `asOf`, only those at or before it. */
  rank(query: string, asOf?: number): string[] {
    const n = this.docs.length;
    const idf = [...new Set(tokens(query))].map((t) => {
      const df = this.df.get(t) ?? 0;
      return { t, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) };
    });
    const scored: Array<{ id: string; score: number }> = [];
    for (const d of this.docs) {
      if (asOf !== undefined && d.time > asOf) continue;
      let score = 0;
      for (const { t, idf: w } of idf) {
        const f = d.tf.get(t);
        if (f) score += (w * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / this.avgLength));
      }
      if (score > 0) scored.push({ id: d.id, score });
    }
    // Array.prototype.sort is stable: equal scores keep the turns' order
    return scored.sort((a, b) => b.score - a.score).map((s) => s.id);
  }
}
