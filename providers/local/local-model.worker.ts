import path from 'node:path';
import type { FeatureExtractionPipeline } from '@huggingface/transformers';
import { move } from 'piscina';

// The body of the local model's thread (`LocalModelThread`): the model is loaded here, once per
// thread, and every batch runs here, so tokenising and onnxruntime's run never hold the event
// loop that answers HTTP requests.

/** One batch for the model thread. */
export interface EmbedTask {
  /** Local model name (`all-MiniLM-L6-v2`). */
  name: string;
  /** The model's id on the hub, used when `localModelDir` is null. */
  hubId: string;
  localModelDir: string | null;
  cacheDir: string;
  texts: string[];
}

// transformers' `env` is global to this thread: set by the first model to load here, kept after
let configuredFor: string | null | undefined;
const pipelines = new Map<string, Promise<FeatureExtractionPipeline>>();

async function load(task: EmbedTask): Promise<FeatureExtractionPipeline> {
  const { env, pipeline } = await import('@huggingface/transformers');
  if (configuredFor === undefined) {
    configuredFor = task.localModelDir;
    if (task.localModelDir !== null) {
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      env.localModelPath = task.localModelDir.endsWith(path.sep) ? task.localModelDir : task.localModelDir + path.sep;
    } else {
      env.allowRemoteModels = true;
      env.cacheDir = task.cacheDir;
    }
  }
  const id = configuredFor !== null ? task.name : task.hubId;
  return pipeline('feature-extraction', id, { dtype: 'q8' });
}

function model(task: EmbedTask): Promise<FeatureExtractionPipeline> {
  let loading = pipelines.get(task.name);
  if (loading === undefined) {
    loading = load(task).catch((err: unknown) => {
      // nothing loaded, so the next batch may configure transformers afresh
      pipelines.delete(task.name);
      if (pipelines.size === 0) configuredFor = undefined;
      throw err;
    });
    pipelines.set(task.name, loading);
  }
  return loading;
}

/**
 * Embeds one batch: mean pooling, unit length. Answers the vectors back to back
 * (`texts.length × dimension` floats), in a buffer moved to the caller's thread, not copied.
 */
export default async function embed(task: EmbedTask): Promise<Float32Array> {
  const extractor = await model(task);
  const output = await extractor(task.texts, { pooling: 'mean', normalize: true });
  // a copy of exactly this batch's floats, handed over to the caller's thread
  const data = (output.data as Float32Array).slice();
  output.dispose();
  return move(data) as Float32Array;
}
