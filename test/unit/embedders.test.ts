import { expect } from 'chai';
import { modelName, Providers } from '../../providers/registry.js';
import { ConfigError, loadConfig } from '../../lib/config.js';
import { AppError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';

const log = createLogger('silent');

/** The AppError `fn` throws (fails the test when it throws nothing or something else). */
function appErrorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  return expect.fail('expected an AppError');
}

// Without LOCAL_MODEL_DIR a local model may be downloaded, so nothing here touches the disk.
const configured = loadConfig({
  COHERE_API_KEY: 'test-key',
  OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
});
const bare = loadConfig({});
const normalizeModelName = (name: string): string => modelName('embed', name);

describe('embedder names', () => {
  it('reads plain `local` as the default local model, in any case', () => {
    expect(normalizeModelName('local')).to.equal('local/all-MiniLM-L6-v2');
    expect(normalizeModelName(' Local ')).to.equal('local/all-MiniLM-L6-v2');
    expect(normalizeModelName('LOCAL/all-minilm-l6-v2')).to.equal('local/all-MiniLM-L6-v2');
  });

  it('keeps provider model names as given, slashes included', () => {
    expect(normalizeModelName('cohere/embed-v4.0')).to.equal('cohere/embed-v4.0');
    expect(normalizeModelName('Cohere/embed-v4.0')).to.equal('cohere/embed-v4.0');
    expect(normalizeModelName('openai/BAAI/bge-small-en-v1.5')).to.equal('openai/BAAI/bge-small-en-v1.5');
  });

  it('rejects unknown providers and names without a model, saying how names look', () => {
    for (const name of ['huggingface/bert', 'text-embedding-3-small', 'cohere', 'openai/', 'cohere/embed v4', '']) {
      const error = appErrorOf(() => normalizeModelName(name));
      expect(error.status, name).to.equal(400);
      expect(error.code, name).to.equal('unknown_embed_model');
      expect(error.detail, name).to.include('provider/model');
    }
  });

  it('rejects a local model that does not exist, listing the ones that do', () => {
    const error = appErrorOf(() => normalizeModelName('local/bert-base'));
    expect(error.code).to.equal('unknown_embed_model');
    expect(error.detail).to.include('local/all-MiniLM-L6-v2');
  });
});

describe('embedder registry', () => {
  it('validates a usable name to its canonical form without calling the provider', () => {
    const embedders = new Providers(configured, log).embedders;
    expect(embedders.validate('local')).to.equal('local/all-MiniLM-L6-v2');
    expect(embedders.validate('cohere/embed-english-v3.0')).to.equal('cohere/embed-english-v3.0');
    expect(embedders.validate('openai/nomic-embed-text')).to.equal('openai/nomic-embed-text');
  });

  it('says which variable to set when a provider is not configured', () => {
    const embedders = new Providers(bare, log).embedders;
    const cohere = appErrorOf(() => embedders.get('cohere/embed-v4.0'));
    expect([cohere.status, cohere.code]).to.deep.equal([400, 'embed_model_unavailable']);
    expect(cohere.detail).to.include('COHERE_API_KEY');
    const openai = appErrorOf(() => embedders.validate('openai/text-embedding-3-small'));
    expect([openai.status, openai.code]).to.deep.equal([400, 'embed_model_unavailable']);
    expect(openai.detail).to.include('OPENAI_BASE_URL');
    expect(appErrorOf(() => embedders.get('mystery/model')).code).to.equal('unknown_embed_model');
  });

  it('hands out one embedder per model, whatever the spelling', () => {
    const embedders = new Providers(configured, log).embedders;
    const local = embedders.get('local');
    expect(embedders.get('local/all-MiniLM-L6-v2')).to.equal(local);
    expect(local.model).to.equal('local/all-MiniLM-L6-v2');
    expect(embedders.get('Cohere/embed-v4.0')).to.equal(embedders.get('cohere/embed-v4.0'));
    expect(embedders.get('openai/text-embedding-3-small').model).to.equal('openai/text-embedding-3-small');
  });

  it('knows the vector length of well-known models without a call', async () => {
    // OPENAI_BASE_URL points at a closed port: a call would fail, so these come from the tables
    const embedders = new Providers(configured, log).embedders;
    const dims = async (model: string): Promise<number> => embedders.get(model).dimension();
    expect(await dims('local')).to.equal(384);
    expect(await dims('cohere/embed-v4.0')).to.equal(1536);
    expect(await dims('cohere/embed-multilingual-v3.0')).to.equal(1024);
    expect(await dims('cohere/embed-english-light-v3.0')).to.equal(384);
    expect(await dims('openai/text-embedding-3-small')).to.equal(1536);
    expect(await dims('openai/text-embedding-3-large')).to.equal(3072);
    expect(await dims('openai/text-embedding-ada-002')).to.equal(1536);
  });

  it('takes COHERE_BASE_URL only as an http(s) URL', () => {
    expect(loadConfig({ COHERE_BASE_URL: 'https://cohere.internal:8443' }).cohereBaseUrl).to.equal('https://cohere.internal:8443');
    expect(loadConfig({}).cohereBaseUrl).to.equal(null);
    expect(() => loadConfig({ COHERE_BASE_URL: 'ftp://cohere.internal' })).to.throw(ConfigError, /COHERE_BASE_URL/);
  });
});
