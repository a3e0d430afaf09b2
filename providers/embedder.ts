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

/**
 * The vector length of a model whose size is not in a table: learned from one call and remembered;
 * a failed probe is forgotten, so the next caller tries again.
 */
export class LearnedDimension {
  private pending: Promise<number> | null = null;

  constructor(private readonly probe: () => Promise<Float32Array[]>) {}

  get(): Promise<number> {
    this.pending ??= this.probe().then(
      ([vector]) => (vector as Float32Array).length,
      (err: unknown) => {
        this.pending = null;
        throw err;
      },
    );
    return this.pending;
  }
}
