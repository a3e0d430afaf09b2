import { request } from 'undici';
import type { AppError } from '../../lib/errors.js';
import type { Reranker } from '../reranker.js';
import { failureByStatus, unreachable, type CallContext } from '../remote-calls.js';

/** The most bytes of a rerank answer read (a few thousand scores are a few hundred KB). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** One scored document as the servers answer it: `relevance_score` (Jina, Cohere, vLLM, Infinity) or `score` (TEI's own route). */
interface ScoredDocument {
  index?: unknown;
  relevance_score?: unknown;
  score?: unknown;
}

/**
 * Any rerank endpoint that speaks the common shape: `POST <RERANK_BASE_URL>/rerank`
 * `{model, query, documents, top_n}` answered by `{results: [{index, relevance_score}]}` — as
 * Hugging Face text-embeddings-inference, Jina, vLLM and Infinity serve it. A bare list of
 * `{index, score}` (TEI's native answer) is read too. `RERANK_API_KEY`, when set, is sent as a
 * bearer token. Failures: unreachable, timed out, 408, 429 or 5xx, and a rejected key are 503s;
 * another 4xx is a 400 `rerank_rejected` with the server's reason.
 */
export class HttpReranker implements Reranker {
  readonly model: string;
  private readonly endpoint: string;
  private readonly call: CallContext;

  constructor(
    private readonly name: string,
    baseUrl: string,
    private readonly apiKey: string | null,
    private readonly timeoutMs: number,
  ) {
    this.model = `http/${name}`;
    this.endpoint = `${baseUrl.replace(/\/+$/, '')}/rerank`;
    this.call = { where: 'The rerank server (RERANK_BASE_URL)', model: name, timeoutMs, rejectedCode: 'rerank_rejected', rejectedWhat: 'the rerank request' };
  }

  async rerank(query: string, documents: string[], topN: number): Promise<Array<{ index: number; score: number }>> {
    if (documents.length === 0) return [];
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.apiKey !== null) headers.authorization = `Bearer ${this.apiKey}`;
    const body = JSON.stringify({ model: this.name, query, documents, top_n: Math.min(topN, documents.length), return_documents: false });
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const response = await request(this.endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      status = response.statusCode;
      const header = response.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
      text = await readCapped(response.body);
    } catch (err) {
      throw unreachable(this.call, err);
    }
    if (status < 200 || status >= 300) throw this.failure(status, text, retryAfter);
    return this.scores(text, documents.length, topN);
  }

  /** The answer's scores, best first, indexes checked; an answer that is not the shape is a 503. */
  private scores(text: string, count: number, topN: number): Array<{ index: number; score: number }> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw unreachable(this.call, new Error('the answer is not JSON'));
    }
    const list: unknown = Array.isArray(parsed) ? parsed : (parsed as { results?: unknown; data?: unknown } | null)?.results ?? (parsed as { data?: unknown } | null)?.data;
    if (!Array.isArray(list)) throw unreachable(this.call, new Error('the answer has no results list'));
    const seen = new Set<number>();
    const scored: Array<{ index: number; score: number }> = [];
    for (const item of list as ScoredDocument[]) {
      const index = item?.index;
      const score = typeof item?.relevance_score === 'number' ? item.relevance_score : item?.score;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) continue;
      if (typeof score !== 'number' || !Number.isFinite(score)) continue;
      seen.add(index);
      scored.push({ index, score });
    }
    return scored.sort((a, b) => b.score - a.score || a.index - b.index).slice(0, topN);
  }

  private failure(status: number, text: string, retryAfter: string | undefined): AppError {
    let reason = text.slice(0, 500);
    try {
      const body = JSON.parse(text) as { message?: unknown; error?: unknown; detail?: unknown };
      const message = [body.message, body.error, body.detail].find((m) => typeof m === 'string');
      if (typeof message === 'string') reason = message.slice(0, 500);
    } catch {
      // a plain-text reason is kept as it came
    }
    return failureByStatus(this.call, status, reason || `HTTP ${status}`, retryAfter, 'RERANK_API_KEY', [401, 403]);
  }
}

/** The answer as text, at most `MAX_ANSWER_BYTES`; a larger one is an error. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
