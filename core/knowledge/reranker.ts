import type { CohereClientV2 } from 'cohere-ai';
import type { AppError } from '../../lib/errors.js';
import { cohereClient, cohereFailure } from '../../providers/cohere/client.js';

/** Orders passages by relevance to a query. */
export interface Reranker {
  readonly model: string;
  /** The best `topN` passages as indexes into `documents`, best first, with their relevance (0–1). */
  rerank(query: string, documents: string[], topN: number): Promise<Array<{ index: number; score: number }>>;
}

export interface CohereRerankerOptions {
  apiKey: string;
  baseUrl: string | null;
  maxRetries?: number;
  timeoutMs?: number;
}

/**
 * Cohere's rerank API (`POST /v2/rerank`). Failures: unreachable, timed out, 429 or 5xx and a
 * rejected key are 503s; another 4xx is a 400 `rerank_rejected` with Cohere's reason.
 */
export class CohereReranker implements Reranker {
  readonly model: string;
  private readonly client: CohereClientV2;
  private readonly timeoutMs: number;

  constructor(
    private readonly name: string,
    options: CohereRerankerOptions,
  ) {
    this.model = `cohere/${name}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.client = cohereClient({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRetries: options.maxRetries ?? 2, timeoutMs: this.timeoutMs });
  }

  async rerank(query: string, documents: string[], topN: number): Promise<Array<{ index: number; score: number }>> {
    try {
      const response = await this.client.rerank({ model: this.name, query, documents, topN: Math.min(topN, documents.length) });
      return response.results
        .filter((r) => Number.isInteger(r.index) && r.index >= 0 && r.index < documents.length)
        .map((r) => ({ index: r.index, score: r.relevanceScore }))
        .sort((a, b) => b.score - a.score);
    } catch (err) {
      throw this.failure(err);
    }
  }

  private failure(err: unknown): AppError {
    return cohereFailure(err, { where: 'Cohere', model: this.name, timeoutMs: this.timeoutMs, rejectedCode: 'rerank_rejected', rejectedWhat: 'the rerank request' });
  }
}
