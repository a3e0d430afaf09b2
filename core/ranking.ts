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
  const withValues = hits.filter((h) => h.values !== undefined && h.values.length > 0);
  const n = withValues.length;
  const k = Math.min(HUB_NEIGHBOURS, n - 1);
  if (k < 1) return hits.map((h) => ({ ...h, corrected: h.score }));
  const dim = (withValues[0] as T).values?.length as number;
  const unit = withValues.map((h) => {
    const v = h.values as ArrayLike<number>;
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += (v[i] as number) ** 2;
    const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm);
    const out = new Float64Array(dim);
    for (let i = 0; i < dim; i++) out[i] = (v[i] as number) * scale;
    return out;
  });
  // the similarity of every pair, each pair computed once
  const sim = Array.from({ length: n }, () => new Float64Array(n));
  for (let a = 0; a < n; a++) {
    const va = unit[a] as Float64Array;
    for (let b = a + 1; b < n; b++) {
      const vb = unit[b] as Float64Array;
      let dot = 0;
      for (let i = 0; i < dim; i++) dot += (va[i] as number) * (vb[i] as number);
      (sim[a] as Float64Array)[b] = dot;
      (sim[b] as Float64Array)[a] = dot;
    }
  }
  const corrected = withValues.map((h, a) => {
    const row = Array.from(sim[a] as Float64Array).filter((_, b) => b !== a);
    row.sort((x, y) => y - x);
    let hub = 0;
    for (let j = 0; j < k; j++) hub += row[j] as number;
    return { ...h, corrected: h.score - hub / k / 2 };
  });
  corrected.sort((x, y) => y.corrected - x.corrected);
  const without = hits.filter((h) => !(h.values !== undefined && h.values.length > 0)).map((h) => ({ ...h, corrected: h.score }));
  return [...corrected, ...without];
}
