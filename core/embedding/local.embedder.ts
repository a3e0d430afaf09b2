import fs from 'node:fs';
import path from 'node:path';
import type { FeatureExtractionPipeline } from '@huggingface/transformers';
import { badRequest, unavailable } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Embedder, InputType } from './embedder.js';

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

// transformers' `env` is process-wide, so it is set once, by the first local model to load, and
// every later embedder shares that model: the weights are the same wherever they were read from.
let envSource: LocalModelSource | null = null;
const pipelines = new Map<string, Promise<FeatureExtractionPipeline>>();

async function loadPipeline(name: string, source: LocalModelSource, logger: Logger): Promise<FeatureExtractionPipeline> {
  const started = Date.now();
  // imported here so processes that never embed locally do not load onnxruntime
  const { env, pipeline } = await import('@huggingface/transformers');
  if (envSource === null) {
    envSource = source;
    if (source.localModelDir !== null) {
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      env.localModelPath = source.localModelDir.endsWith(path.sep) ? source.localModelDir : source.localModelDir + path.sep;
    } else {
      env.allowRemoteModels = true;
      env.cacheDir = source.cacheDir;
    }
  } else if (envSource.localModelDir !== source.localModelDir) {
    logger.warn(
      { model: `local/${name}`, using: envSource.localModelDir ?? 'hub', asked: source.localModelDir ?? 'hub' },
      'local models are already configured in this process; keeping the first LOCAL_MODEL_DIR',
    );
  }
  const id = envSource.localModelDir !== null ? name : (LOCAL_MODELS[name]?.hubId ?? name);
  const loaded = await pipeline('feature-extraction', id, { dtype: 'q8' });
  logger.info({ model: `local/${name}`, ms: Date.now() - started }, 'local embedding model loaded');
  return loaded;
}

/**
 * A sentence-embedding model run in-process with transformers.js (int8 ONNX, mean pooling,
 * unit-length vectors). Loads on first use; every instance in the process shares one loaded
 * model per name. Texts longer than the model's 512 tokens are truncated, not rejected.
 * Symmetric models only: the input type does not change the vector.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string;
  readonly maxBatch = 32;

  constructor(
    private readonly name: string,
    private readonly source: LocalModelSource,
    private readonly logger: Logger,
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
    const extractor = await this.pipeline();
    const dimension = await this.dimension();
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.maxBatch) {
      const output = await extractor(texts.slice(start, start + this.maxBatch), { pooling: 'mean', normalize: true });
      const data = output.data as Float32Array;
      for (let offset = 0; offset < data.length; offset += dimension) {
        // a copy, so one kept vector does not pin the whole batch's buffer
        vectors.push(data.slice(offset, offset + dimension));
      }
      output.dispose();
    }
    return vectors;
  }

  private pipeline(): Promise<FeatureExtractionPipeline> {
    // checked per instance, even when another instance already loaded the model: this
    // instance's LOCAL_MODEL_DIR is what its operator must fix
    const problem = localModelProblem(this.name, this.source);
    if (problem !== null) return Promise.reject(badRequest('embed_model_unavailable', problem));
    let loading = pipelines.get(this.name);
    if (loading === undefined) {
      loading = loadPipeline(this.name, this.source, this.logger).catch((err: unknown) => {
        // nothing loaded, so the next attempt may configure transformers afresh
        pipelines.delete(this.name);
        envSource = null;
        throw this.loadError(err);
      });
      pipelines.set(this.name, loading);
    }
    return loading;
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
