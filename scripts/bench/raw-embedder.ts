import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { Providers } from '../../providers/registry.js';
import { notes } from './corpus.js';
import { machineTicks, processCpu } from './children.js';

// The raw embedder of `npm run bench:ingest`, in a process of its own so that it runs as a worker
// process's model does (its own onnxruntime, its own niced model thread) and leaves no model
// thread behind in the bench. Loads the local model (not timed), then embeds `sentences` seeded
// notes, or the texts of a file (a JSON array of strings, in its order), `batch` at a time, one
// call after the other.
// Usage: raw-embedder.ts <batch> <sentences> <seed>   (LOCAL_MODEL_DIR from the environment)
//        raw-embedder.ts <batch> --texts <file.json>
// Prints one JSON line on stdout: sentences, seconds, sentencesPerSecond, the CPU seconds of this
// process and of its model threads (cpuSeconds, modelCpuSeconds), and how busy the machine was
// meanwhile (machineBusy, a share of all cores; machineSeconds).

const argv = process.argv.slice(2);
const textsFile = argv[1] === '--texts' ? argv[2] : undefined;
const [batch, sentences, seed] = textsFile === undefined ? argv.map(Number) : [Number(argv[0]), 1, 0];
if (![batch, sentences, seed].every((x) => Number.isInteger(x) && (x as number) >= 0) || !batch || !sentences || (argv[1] === '--texts' && !textsFile)) {
  process.stderr.write('Usage: raw-embedder.ts <batch> <sentences> <seed>  |  raw-embedder.ts <batch> --texts <file.json>\n');
  process.exit(2);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-raw-'));
const modelDir = process.env.LOCAL_MODEL_DIR;
// one model thread with every core: a batch of 32 at a time is the model run the simplest way, each
// call as fast as it goes (Cairn's default of a thread per core pays off only with batches side by side)
const providers = new Providers(loadConfig({ DATA_DIR: dataDir, LOCAL_EMBED_THREADS: '1', ...(modelDir ? { LOCAL_MODEL_DIR: modelDir } : {}) }), createLogger('warn'));
try {
  const embedder = providers.embedders.get('local');
  const texts = textsFile === undefined ? notes(sentences as number, seed as number) : readTexts(textsFile);
  // loads the model; a second call so the timed ones find everything warm
  await embedder.embed(notes(batch as number, (seed as number) + 10_000_000), 'document');
  await embedder.embed(notes(batch as number, (seed as number) + 20_000_000), 'document');
  const cpuBefore = processCpu(process.pid);
  const machineBefore = machineTicks();
  const started = performance.now();
  for (let i = 0; i < texts.length; i += batch as number) await embedder.embed(texts.slice(i, i + (batch as number)), 'document');
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = processCpu(process.pid);
  const machineAfter = machineTicks();
  process.stdout.write(
    `${JSON.stringify({
      sentences: texts.length,
      seconds,
      sentencesPerSecond: texts.length / seconds,
      cpuSeconds: cpuAfter.total - cpuBefore.total,
      modelCpuSeconds: cpuAfter.model - cpuBefore.model,
      machineBusy: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
      machineSeconds: (machineAfter.busy - machineBefore.busy) / 100,
    })}\n`,
  );
} finally {
  await providers.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/** The texts of a file: a JSON array of strings. */
function readTexts(file: string): string[] {
  const texts: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string')) throw new Error(`${file} is not a JSON array of strings`);
  return texts as string[];
}
