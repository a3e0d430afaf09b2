import type { AppError } from '../../lib/errors.js';
import type { Reranker } from '../reranker.js';
import type { CohereApi } from './client.js';

/**
 * Cohere's rerank API (`POST /v2/rerank`). Failures: unreachable, timed out, 429 or 5xx and a
 * rejected key are 503s; another 4xx is a 400 `rerank_rejected` with Cohere's reason.
 */
export class CohereReranker implements Reranker {
  readonly model: string;

  constructor(
    private readonly name: string,
    private readonly api: CohereApi,
  ) {
    this.model = `cohere/${name}`;
  }

  async rerank(query: string, documents: string[], topN: number): Promise<Array<{ index: number; score: number }>> {
    try {
      const response = await this.api.client.rerank({ model: this.name, query, documents, topN: Math.min(topN, documents.length) });
      return response.results
        .filter((r) => Number.isInteger(r.index) && r.index >= 0 && r.index < documents.length)
        .map((r) => ({ index: r.index, score: r.relevanceScore }))
        .sort((a, b) => b.score - a.score);
    } catch (err) {
      throw this.failure(err);
    }
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: 'Cohere', model: this.name, rejectedCode: 'rerank_rejected', rejectedWhat: 'the rerank request' });
  }
}
