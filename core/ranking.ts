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
