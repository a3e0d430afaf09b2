import fs from 'node:fs';
import path from 'node:path';
import { badRequest, unavailable } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Embedder, InputType } from '../embedder.js';
import { LocalModelPool, type PoolResult } from './local-model.pool.js';

/** The models `local/<name>` can serve: where the hub keeps them and the vector length they give. */
export const LOCAL_MODELS: Readonly<Record<string, { hubId: string; dimension: number }>> = {
  'all-MiniLM-L6-v2': { hubId: 'Xenova/all-MiniLM-L6-v2', dimension: 384 },
};

/** Files a model folder under LOCAL_MODEL_DIR must hold (the int8 graph is what `dtype: 'q8'` loads). */
const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'];

/** Where a local model comes from: a folder (nothing is downloaded) or the hub, cached under `cacheDir`. */
export interface LocalModelSource {
  /** LOCAL_MODEL_DIR: the folder that holds `<model>/config.json`, … ; null allows a one-time download. */
  localModelDir: string | null;
  /** Download cache used when `localModelDir` is null (`<DATA_DIR>/models`). */
  cacheDir: string;
}

/**
 * Why `local/<name>` cannot be loaded from `source` without downloading, as a sentence for the
 * operator, or null when nothing is missing (or a download is allowed).
 */
export function localModelProblem(name: string, source: LocalModelSource): string | null {
  if (source.localModelDir === null) return null;
  const folder = path.join(source.localModelDir, name);
  const missing = REQUIRED_FILES.filter((file) => !fs.existsSync(path.join(folder, file)));
  if (missing.length === 0) return null;
  return (
    `The local model "${name}" is not in LOCAL_MODEL_DIR (${source.localModelDir}): ${folder} lacks ${missing.join(', ')}. ` +
    `Run scripts/model-files.sh ${source.localModelDir} to fetch it, or point LOCAL_MODEL_DIR at a folder that has it.`
  );
}

/**
 * A sentence-embedding model run with transformers.js (int8 ONNX, mean pooling, unit-length
 * vectors) on the worker threads of this process (`LocalModelPool`), so embedding never blocks
 * the event loop. Loads on first use, once per thread; embedders that share a pool share its
 * loaded models. A call of more than `maxBatch` texts runs its batches on every thread at once.
 * Texts longer than the model's 512 tokens are truncated, not rejected. Symmetric models only:
 * the input type does not change the vector.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string;
  readonly maxBatch = 32;
  private loaded = false;

  constructor(
    private readonly name: string,
    private readonly source: LocalModelSource,
    private readonly logger: Logger,
    /** The threads that run the model; the embedders of one server share one pool. */
    private readonly pool: LocalModelPool = new LocalModelPool(1),
  ) {
    if (LOCAL_MODELS[name] === undefined) {
      throw badRequest('unknown_embed_model', `There is no local model "${name}"; local models are ${Object.keys(LOCAL_MODELS).map((m) => `local/${m}`).join(', ')}.`);
    }
    this.model = `local/${name}`;
  }

  /** Known without loading the model. */
  async dimension(): Promise<number> {
    return (LOCAL_MODELS[this.name] as { dimension: number }).dimension;
  }

  /**
   * One unit-length vector per text. Throws 400 `embed_model_unavailable` when the model's files
   * are missing and downloads are off, 503 when the download fails.
   */
  async embed(texts: string[], _inputType: InputType): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    // checked per call, even when the thread already loaded the model: this embedder's
    // LOCAL_MODEL_DIR is what its operator must fix
    const problem = localModelProblem(this.name, this.source);
    if (problem !== null) throw badRequest('embed_model_unavailable', problem);
    const dimension = await this.dimension();
    const batches: Array<Promise<Float32Array>> = [];
    for (let start = 0; start < texts.length; start += this.maxBatch) batches.push(this.run(texts.slice(start, start + this.maxBatch)));
    // every batch is waited for, so none is left to fail unheard
    const settled = await Promise.allSettled(batches);
    const vectors: Float32Array[] = [];
    for (const result of settled) {
      if (result.status === 'rejected') throw result.reason;
      const data = result.value;
      // copies, so one kept vector does not pin the whole batch's buffer
      for (let offset = 0; offset < data.length; offset += dimension) vectors.push(data.slice(offset, offset + dimension));
    }
    return vectors;
  }

  private async run(texts: string[]): Promise<Float32Array> {
    let result: PoolResult;
    try {
      result = await this.pool.run({
        name: this.name,
        hubId: (LOCAL_MODELS[this.name] as { hubId: string }).hubId,
        localModelDir: this.source.localModelDir,
        cacheDir: this.source.cacheDir,
        texts,
      });
    } catch (err) {
      // a thread ended by shutdown is no fault of the model: the caller may retry later
      if (this.pool.closing) throw unavailable('The embedding thread is shutting down; retry later.', 5);
      throw this.loaded ? err : this.loadError(err);
    }
    this.loaded = true;
    if (result.loadMs !== null) this.logger.info({ model: this.model, thread: result.thread, ms: result.loadMs }, 'local embedding model loaded');
    return result.data;
  }

  private loadError(err: unknown): Error {
    const reason = err instanceof Error ? err.message : String(err);
    const dir = this.source.localModelDir;
    if (dir !== null) {
      return badRequest(
        'embed_model_unavailable',
        `The local model "${this.name}" could not be loaded from LOCAL_MODEL_DIR (${dir}): ${reason}. Run scripts/model-files.sh to (re)build it.`,
      );
    }
    return unavailable(
      `The local model "${this.name}" could not be downloaded from the Hugging Face hub (${reason}). Retry later, or set LOCAL_MODEL_DIR to a folder filled by scripts/model-files.sh.`,
      30,
    );
  }
}
