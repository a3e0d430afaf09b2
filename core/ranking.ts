/** Reciprocal rank fusion's constant (Cormack et al.): ranks beyond the first few count less. */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion of ranked lists of ids, best first: each list gives 1 / (k + rank + 1).
 * Ties (e.g. first in one list and second in the other, and the other way round) go to the better
 * best rank, then to `compareIds`.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<ReadonlyArray<string>>, compareIds: (a: string, b: string) => number): Array<{ id: string; score: number }> {
  const fused = new Map<string, { score: number; best: number }>();
  for (const list of lists) {
    list.forEach((id, rank) => {
      const entry = fused.get(id) ?? { score: 0, best: Infinity };
      fused.set(id, { score: entry.score + 1 / (RRF_K + rank + 1), best: Math.min(entry.best, rank) });
    });
  }
  return [...fused]
    .sort(([ia, a], [ib, b]) => b.score - a.score || a.best - b.best || compareIds(ia, ib))
    .map(([id, { score }]) => ({ id, score }));
}

/** The cosine similarity of two vectors (0 when either is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** How many nearest fellow candidates measure a candidate's hubness (CSLS's k). */
export const HUB_NEIGHBOURS = 10;

/**
 * Dense candidates reordered with less weight on hubs: each one's similarity to the query, less
 * half the mean similarity to its `HUB_NEIGHBOURS` nearest fellow candidates — cross-domain
 * similarity local scaling (CSLS, Conneau et al. 2018) with the neighbourhood taken among the
 * query's candidates. A short, generic text ("Why?", "How's your day going?") sits close to every
 * question and to every other such text, so plain cosine ranks it above the one line that answers;
 * its close neighbours give it away. Candidates without values keep their place after the others.
 * Returns the hits best first, each with its corrected score in `corrected` (`score` unchanged).
 */
export function lessHubs<T extends { score: number; values?: ArrayLike<number> }>(hits: T[]): Array<T & { corrected: number }> {
  const hasValues = (h: T): boolean => h.values !== undefined && h.values.length > 0;
  const withValues = hits.filter(hasValues);
  const without = hits.filter((h) => !hasValues(h)).map((h) => ({ ...h, corrected: h.score }));
  const n = withValues.length;
  const k = Math.min(HUB_NEIGHBOURS, n - 1);
  if (k < 1) return [...withValues.map((h) => ({ ...h, corrected: h.score })), ...without];
  const dim = (withValues[0] as T).values?.length as number;
  // unit vectors, one after another in one array
  const unit = new Float32Array(n * dim);
  withValues.forEach((h, a) => {
    const v = h.values as ArrayLike<number>;
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += (v[i] as number) ** 2;
    const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm);
    for (let i = 0; i < dim; i++) unit[a * dim + i] = (v[i] as number) * scale;
  });
  // each candidate's k greatest similarities to the others, kept in descending order
  const nearest = new Float64Array(n * k).fill(-Infinity);
  const keep = (a: number, similarity: number): void => {
    const at = a * k;
    if (similarity <= (nearest[at + k - 1] as number)) return;
    let j = k - 1;
    for (; j > 0 && (nearest[at + j - 1] as number) < similarity; j--) nearest[at + j] = nearest[at + j - 1] as number;
    nearest[at + j] = similarity;
  };
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const ia = a * dim;
      const ib = b * dim;
      // four running sums: a quarter of the loop's dependent additions
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      let i = 0;
      for (; i + 3 < dim; i += 4) {
        d0 += (unit[ia + i] as number) * (unit[ib + i] as number);
        d1 += (unit[ia + i + 1] as number) * (unit[ib + i + 1] as number);
        d2 += (unit[ia + i + 2] as number) * (unit[ib + i + 2] as number);
        d3 += (unit[ia + i + 3] as number) * (unit[ib + i + 3] as number);
      }
      for (; i < dim; i++) d0 += (unit[ia + i] as number) * (unit[ib + i] as number);
      const dot = d0 + d1 + d2 + d3;
      keep(a, dot);
      keep(b, dot);
    }
  }
  const corrected = withValues.map((h, a) => {
    let hub = 0;
    for (let j = 0; j < k; j++) hub += nearest[a * k + j] as number;
    return { ...h, corrected: h.score - hub / k / 2 };
  });
  corrected.sort((x, y) => y.corrected - x.corrected);
  return [...corrected, ...without];
}

/** A sentence: a run of text up to and with its closing marks (or the text's end). */
const SENTENCE = /[^.!?。！？]+[.!?。！？]*/gu;

/** A word: a run of non-space characters with at least one letter or digit in it. */
const WORD = /\S*[\p{L}\p{N}]\S*/gu;

/**
 * Whether a text mostly asks: more than half of its words are in sentences that end with a
 * question mark. `Cool! What did it look like?` asks; `I went to the support group yesterday, it
 * was so powerful. How about you?` tells, though it ends with a question.
 */
export function mostlyAsks(text: string): boolean {
  let asking = 0;
  let all = 0;
  for (const sentence of text.match(SENTENCE) ?? []) {
    const words = sentence.match(WORD)?.length ?? 0;
    all += words;
    if (/[?？]$/u.test(sentence.trim())) asking += words;
  }
  return asking * 2 > all;
}

/**
 * A ranking in which each hit that `asks` holds half its score, best first (the given order
 * between equal scores). In a conversation a question shares the words and the topic of every
 * later question about it, so questions crowd the first ranks, yet the answer is in what was
 * told: on the memory-quality chats a third of the ten results mostly asked, and 3 of 1 389
 * evidence turns did.
 */
export function lessAsking<T extends { id: string; score: number }>(ranked: T[], asks: (id: string) => boolean): T[] {
  return ranked.map((hit) => (asks(hit.id) ? { ...hit, score: hit.score / 2 } : hit)).sort((a, b) => b.score - a.score);
}
