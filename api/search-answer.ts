import type { Context } from 'koa';
import type { RerankReport } from '../core/reranking.js';
import { requestLog } from './middleware/request-context.js';

/**
 * A search's answer body: its results, and its reranking's report when it asked for one. A
 * reranker that failed or was late is also logged for the operator (the caller sees the reason).
 */
export function searchAnswer<T>(ctx: Context, results: T[], rerank: RerankReport | undefined): { results: T[]; rerank?: RerankReport } {
  if (rerank === undefined) return { results };
  if (!rerank.applied && rerank.model !== null) {
    requestLog(ctx.state as Record<string, unknown>)?.warn({ model: rerank.model, reason: rerank.reason }, 'reranking failed: the search answered in its own order');
  }
  return { results, rerank };
}
