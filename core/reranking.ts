import { AppError } from '../lib/errors.js';
import type { Reranker } from '../providers/reranker.js';

/** What a search asked to rerank says of it: which model, and whether its order is the one shown. */
export interface RerankReport {
  /** The reranking model; null when the server has none. */
  model: string | null;
  /** True: the results are in the reranker's order, scored by its relevance; false: in the search's own order. */
  applied: boolean;
  /** Why the search's own order was kept (the reranker failed or did not answer in time). */
  reason?: string;
}

/** The reranker's order of the texts it was given, or null with the report of why it is not used. */
export interface RerankOutcome {
  order: Array<{ index: number; score: number }> | null;
  report: RerankReport;
}

/**
 * The reranking step searches share: the configured reranker (`RERANK_MODEL`), given at most
 * `timeoutMs` (`RERANK_TIMEOUT_MS`). A reranker that fails or is late costs the search its
 * reranking, never its answer: the search keeps its own order and says so.
 */
export class Reranking {
  constructor(
    private readonly reranker: Reranker | null,
    private readonly timeoutMs: number,
  ) {}

  /** The reranking model, or null when the server has none. */
  get model(): string | null {
    return this.reranker?.model ?? null;
  }

  /** The best `topN` of `texts` by the reranker, best first; `order: null` when it failed or was late. */
  async order(query: string, texts: string[], topN: number): Promise<RerankOutcome> {
    const reranker = this.reranker;
    if (reranker === null) throw new Error('no reranker is configured');
    if (texts.length === 0) return { order: [], report: { model: reranker.model, applied: true } };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.timeoutMs);
    });
    const call = reranker.rerank(query, texts, topN);
    try {
      const answer = await Promise.race([call, late]);
      if (answer === 'late') {
        call.catch(() => undefined);
        return { order: null, report: { model: reranker.model, applied: false, reason: `the reranker did not answer within ${this.timeoutMs} ms` } };
      }
      return { order: answer, report: { model: reranker.model, applied: true } };
    } catch (err) {
      // AppErrors say what failed without addresses or keys; anything else is not shown
      const reason = err instanceof AppError ? err.message : 'the reranker failed';
      return { order: null, report: { model: reranker.model, applied: false, reason } };
    } finally {
      clearTimeout(timer);
    }
  }
}
