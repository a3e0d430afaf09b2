/** What a text is embedded as: a stored document, or a search query (asymmetric models differ). */
export type InputType = 'document' | 'query';

/**
 * A text-embedding model. Model names are `provider/model` (`local`, `local/all-MiniLM-L6-v2`,
 * `cohere/embed-v4.0`, `openai/text-embedding-3-small`).
 */
export interface Embedder {
  /** The full `provider/model` name. */
  readonly model: string;
  /** Largest number of texts one provider call takes; `embed` splits bigger inputs. */
  readonly maxBatch: number;
  /** Vector length; may call the provider once when the model's size is not known in advance. */
  dimension(): Promise<number>;
  /** One vector per text, in order. */
  embed(texts: string[], inputType: InputType): Promise<Float32Array[]>;
}
