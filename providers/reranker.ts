/** Orders passages by relevance to a query. */
export interface Reranker {
  readonly model: string;
  /** The best `topN` passages as indexes into `documents`, best first, with their relevance (0–1). */
  rerank(query: string, documents: string[], topN: number): Promise<Array<{ index: number; score: number }>>;
}
