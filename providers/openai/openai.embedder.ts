import type OpenAI from 'openai';
import { AppError, unavailable } from '../../lib/errors.js';
import type { OpenAIApi } from './client.js';
import { LearnedDimension, type Embedder, type InputType } from '../embedder.js';

/** Vector lengths of OpenAI's embedding models; any other model's is learned from one call. */
export const OPENAI_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * Any OpenAI-compatible `POST /embeddings` endpoint (OpenAI, vLLM, Ollama, LiteLLM, …), float
 * vectors, at most `maxBatch` texts a call (OPENAI_EMBED_BATCH, default 256: OpenAI itself takes
 * 2048, but many compatible servers take far fewer, and 256 short texts stay well under OpenAI's
 * per-request token budget). The input type is not sent: the API has no such field.
 *
 * Failures: unreachable, timed out, 408, 429 or 5xx, and a rejected OPENAI_API_KEY (401/403)
 * throw 503 `service_unavailable` (409 too: OpenAI uses it for a transient lock); any other 4xx (text over the model's context length, unknown
 * model) means the server refused this input or model and throws 400 `embed_input_rejected`.
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  private readonly learned = new LearnedDimension(() => this.embed(['dimension probe'], 'query'));

  constructor(
    private readonly name: string,
    private readonly api: OpenAIApi,
    readonly maxBatch = 256,
  ) {
    this.model = `openai/${name}`;
  }

  /** From the table of known models, else from one call to the server (remembered). */
  dimension(): Promise<number> {
    const known = OPENAI_DIMENSIONS[this.name];
    if (known !== undefined) return Promise.resolve(known);
    return this.learned.get();
  }

  /** One vector per text, in order (the server's `index`, not its list order); more than `maxBatch` texts become several calls. */
  async embed(texts: string[], _inputType: InputType): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.maxBatch) {
      const batch = texts.slice(start, start + this.maxBatch);
      let data: OpenAI.Embeddings.Embedding[];
      try {
        const response = await this.api.client.embeddings.create({ model: this.name, input: batch, encoding_format: 'float' });
        data = response.data;
      } catch (err) {
        throw this.failure(err);
      }
      const ordered: Array<Float32Array | undefined> = new Array<Float32Array | undefined>(batch.length);
      for (const item of Array.isArray(data) ? data : []) {
        if (Number.isInteger(item.index) && item.index >= 0 && item.index < batch.length && Array.isArray(item.embedding)) {
          ordered[item.index] = Float32Array.from(item.embedding);
        }
      }
      const missing = ordered.findIndex((v) => v === undefined);
      if (missing !== -1) {
        throw unavailable(`The embeddings server (OPENAI_BASE_URL) answered without a float vector for input ${missing} (model ${this.name}).`);
      }
      vectors.push(...(ordered as Float32Array[]));
    }
    return vectors;
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: 'The embeddings server (OPENAI_BASE_URL)', model: this.name, rejectedCode: 'embed_input_rejected', rejectedWhat: 'the input' });
  }
}

