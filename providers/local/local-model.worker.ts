import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { FeatureExtractionPipeline, Tensor } from '@huggingface/transformers';

// The body of one thread of the local model pool (`LocalModelPool`): the model is loaded here,
// once per thread, and batches run here one at a time, so tokenising and onnxruntime's run never
// hold the event loop that answers HTTP requests. The thread ends on its own when told to close:
// it finishes its batch, releases its onnxruntime sessions and lets its event loop run dry.
// Terminated from outside in the middle of a batch, onnxruntime can abort the whole process.

/** One batch for a model thread. */
export interface EmbedTask {
  /** Local model name (`all-MiniLM-L6-v2`). */
  name: string;
  /** The folder holding the model's folder (LOCAL_MODEL_DIR, or `<DATA_DIR>/models`). */
  root: string;
  /** The model's folder under `root` (its name, or its hub id). */
  id: string;
  texts: string[];
  /** Word pieces kept of each text (the rest is cut before the model runs). */
  maxTokens: number;
}

/** What a model thread is started with. */
export interface ModelThreadOptions {
  /** onnxruntime's intra-op threads for this thread's sessions. */
  intraOpThreads: number;
  /** Linux nice steps the thread (and the onnxruntime threads it starts) gives up. */
  niceIncrement: number;
}

/** A message to a model thread: a batch to embed, or the end (after the batch it is running). */
export type ModelThreadRequest = { kind: 'embed'; task: EmbedTask } | { kind: 'close' };

/** What a model thread made of one batch. */
export interface Embedded {
  /** The vectors back to back (`texts.length × dimension` floats). */
  data: Float32Array;
  /** How long loading the model took, when this batch was the first of its model on this thread. */
  loadMs: number | null;
}

/** A model thread's answer to one batch: its vectors, or why there are none. */
export type ModelThreadReply = ({ ok: true } & Embedded) | { ok: false; message: string };

const options = workerData as ModelThreadOptions;

// transformers' `env` is global to this thread: set by the first model to load here, kept after.
// Models are only ever read from a folder: the provider has fetched their files beforehand.
let configuredFor: string | undefined;
const pipelines = new Map<string, Promise<FeatureExtractionPipeline>>();

async function load(task: EmbedTask): Promise<FeatureExtractionPipeline> {
  const { env, pipeline } = await import('@huggingface/transformers');
  if (configuredFor === undefined) {
    configuredFor = task.root;
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = task.root.endsWith(path.sep) ? task.root : task.root + path.sep;
  }
  return pipeline('feature-extraction', task.id, {
    dtype: 'q8',
    // the pool splits the cores between its threads; onnxruntime's default would take them all in each
    // and its threads sleep between a batch's operators instead of spinning: on a machine whose
    // cores the database, the queue and the vector store share, a spinning thread burns the CPU
    // they wait for (production bench:ingest: model CPU per record +15 % over the model alone)
    session_options: {
      // onnxruntime's CPU arena keeps the high-water mark of the largest batch for good (200 texts
      // of 12 KB took a process from 0.6 to 4.7 GB, and it stayed there); without it, and without
      // memory patterns planned per input shape, a batch's tensors are given back when it ends
      enableCpuMemArena: false,
      enableMemPattern: false,
      intraOpNumThreads: options.intraOpThreads,
      interOpNumThreads: 1,
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    },
  });
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

/** Embeds one batch: mean pooling, unit length. */
async function embed(task: EmbedTask): Promise<Embedded> {
  const loading = pipelines.has(task.name) ? null : performance.now();
  const extractor = await model(task);
  const loadMs = loading === null ? null : Math.round(performance.now() - loading);
  const { mean_pooling } = await import('@huggingface/transformers');
  // what the feature-extraction pipeline does, but cut at the model's own length: a batch's
  // attention memory grows with the square of its longest text
  const inputs = extractor.tokenizer(task.texts, { padding: true, truncation: true, max_length: task.maxTokens });
  const outputs = (await extractor.model(inputs)) as { last_hidden_state: Tensor };
  const pooled = mean_pooling(outputs.last_hidden_state, inputs.attention_mask as Tensor);
  const output = pooled.normalize(2, -1);
  // a copy of exactly this batch's floats, handed over to the pool's thread
  const data = (output.data as Float32Array).slice();
  for (const tensor of [output, pooled, outputs.last_hidden_state, ...(Object.values(inputs) as Tensor[])]) tensor.dispose();
  return { data, loadMs };
}

/** Releases every loaded model's onnxruntime sessions, after any load still under way. */
async function release(): Promise<void> {
  for (const loading of pipelines.values()) {
    const extractor = await loading.catch(() => null);
    await extractor?.dispose();
  }
  pipelines.clear();
}

if (options.niceIncrement !== 0 && process.platform === 'linux') {
  // a nice value is per thread on Linux; onnxruntime's threads, started from this one, inherit it
  try {
    os.setPriority(Math.min(19, os.getPriority() + options.niceIncrement));
  } catch {
    // not allowed here: the thread runs at the process's priority
  }
}

const port = parentPort;
if (port === null) throw new Error('local-model.worker.ts runs as a worker thread of LocalModelPool');
// the batch under way (the pool sends the next one only after its answer)
let running: Promise<void> = Promise.resolve();
port.on('message', (request: ModelThreadRequest) => {
  if (request.kind === 'embed') {
    running = embed(request.task).then(
      (embedded) => port.postMessage({ ok: true, ...embedded } satisfies ModelThreadReply, [embedded.data.buffer as ArrayBuffer]),
      (err: unknown) => port.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) } satisfies ModelThreadReply),
    );
    return;
  }
  // with the port closed and the sessions released, nothing keeps the thread's event loop alive
  void running
    .then(release)
    .catch(() => undefined)
    .finally(() => port.close());
});
