import { AppError, unavailable } from '../../lib/errors.js';
import type { CohereApi } from './client.js';
import { LearnedDimension, type Embedder, type InputType } from '../embedder.js';

/** Vector lengths of Cohere's embedding models; any other model's is learned from one call. */
export const COHERE_DIMENSIONS: Readonly<Record<string, number>> = {
  'embed-v4.0': 1536,
  'embed-english-v3.0': 1024,
  'embed-multilingual-v3.0': 1024,
  'embed-english-light-v3.0': 384,
  'embed-multilingual-light-v3.0': 384,
};

const INPUT_TYPES = { document: 'search_document', query: 'search_query' } as const;

/**
 * Cohere's v2 embed API (`POST /v2/embed`, float vectors, at most `maxBatch` texts a call:
 * COHERE_EMBED_BATCH, default and most 96). Long texts are truncated by Cohere (`truncate: 'END'`).
 *
 * Failures: unreachable, timed out, 408, 429 or 5xx, and a rejected COHERE_API_KEY (401/403,
 * an operator's fix, not the caller's) throw 503 `service_unavailable`; any other 4xx means
 * Cohere refused this input or model and throws 400 `embed_input_rejected` with Cohere's reason.
 */
export class CohereEmbedder implements Embedder {
  readonly model: string;
  private readonly learned = new LearnedDimension(() => this.embed(['dimension probe'], 'query'));

  constructor(
    private readonly name: string,
    private readonly api: CohereApi,
    readonly maxBatch = 96,
  ) {
    this.model = `cohere/${name}`;
  }

  /** From the table of known models, else from one call to Cohere (remembered). */
  dimension(): Promise<number> {
    const known = COHERE_DIMENSIONS[this.name];
    if (known !== undefined) return Promise.resolve(known);
    return this.learned.get();
  }

  /** One vector per text, in order; more than `maxBatch` texts become several calls. */
  async embed(texts: string[], inputType: InputType): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.maxBatch) {
      const batch = texts.slice(start, start + this.maxBatch);
      let floats: number[][] | undefined;
      try {
        const response = await this.api.client.embed({
          model: this.name,
          texts: batch,
          inputType: INPUT_TYPES[inputType],
          embeddingTypes: ['float'],
          truncate: 'END',
        });
        floats = response.embeddings.float;
      } catch (err) {
        throw this.failure(err);
      }
      if (!Array.isArray(floats) || floats.length !== batch.length) {
        throw unavailable(`Cohere answered with ${Array.isArray(floats) ? floats.length : 'no'} float embeddings for ${batch.length} texts (model ${this.name}).`);
      }
      for (const vector of floats) vectors.push(Float32Array.from(vector));
    }
    return vectors;
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: 'Cohere', model: this.name, rejectedCode: 'embed_input_rejected', rejectedWhat: 'the input' });
  }
}

