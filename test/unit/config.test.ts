import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, defaultEmbedConcurrency, defaultLocalEmbedThreads, loadConfig } from '../../lib/config.js';

describe('config', () => {
  it('defaults to the embedded profile on port 8080 with data in ./data', () => {
    const config = loadConfig({});
    expect(config.profile).to.equal('embedded');
    expect(config.port).to.equal(8080);
    expect(config.dataDir).to.equal(path.resolve('./data'));
    expect(config.bodyLimitBytes).to.equal(10 * 1024 * 1024);
    expect(config.oidc.usernameClaim).to.equal('preferred_username');
  });

  it('is the production profile when DATABASE_URL, REDIS_URL and MILVUS_ADDRESS are set', () => {
    const config = loadConfig({
      DATABASE_URL: 'mysql://u:p@db:3306/cairn',
      REDIS_URL: 'redis://redis:6379',
      MILVUS_ADDRESS: 'milvus:19530',
    });
    expect(config.profile).to.equal('production');
  });

  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '99999', DATABASE_URL: 'nope', LOG_LEVEL: 'chatty', SECRETS_KEY: 'abc', ADMIN_TOKEN: 'short', BODY_LIMIT_MB: '0' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'SECRETS_KEY', 'ADMIN_TOKEN', 'BODY_LIMIT_MB', 'REDIS_URL', 'MILVUS_ADDRESS']) {
      expect(problems, name).to.include(name);
    }
  });

  it('never echoes a password from a bad URL', () => {
    try {
      loadConfig({ DATABASE_URL: 'mysql//user:hunter2@host' });
      expect.fail('should have thrown');
    } catch (err) {
      expect((err as Error).message).not.to.include('hunter2');
    }
  });

  it('takes QUEUE_PREFIX as a name, or a name in braces (a Redis Cluster hash tag), as written', () => {
    expect(loadConfig({}).queuePrefix).to.equal('cairn');
    expect(loadConfig({ QUEUE_PREFIX: '{cairn}' }).queuePrefix).to.equal('{cairn}');
    for (const bad of ['{cairn', 'cairn}', '{}', '{a}{b}', 'a:b', 'x'.repeat(33)]) {
      expect(() => loadConfig({ QUEUE_PREFIX: bad }), bad).to.throw(ConfigError, /QUEUE_PREFIX/);
    }
  });

  it('takes SECRETS_KEY as 64 hex characters or 32 bytes of base64', () => {
    expect(loadConfig({ SECRETS_KEY: 'ab'.repeat(32) }).secretsKey).to.have.length(32);
    expect(loadConfig({ SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') }).secretsKey).to.have.length(32);
    expect(() => loadConfig({ SECRETS_KEY: Buffer.alloc(16).toString('base64') })).to.throw(ConfigError, /SECRETS_KEY/);
  });

  it('takes GUARDRAIL_MODEL as a remote model only, and TOOL_TIMEOUT_MS within bounds', () => {
    expect(loadConfig({}).guardrailModel).to.equal(null);
    expect(loadConfig({ GUARDRAIL_MODEL: 'openai/guard' }).guardrailModel).to.equal('openai/guard');
    expect(() => loadConfig({ GUARDRAIL_MODEL: 'local' })).to.throw(ConfigError, /GUARDRAIL_MODEL/);
    expect(loadConfig({}).toolTimeoutMs).to.equal(10_000);
    expect(() => loadConfig({ TOOL_TIMEOUT_MS: '5' })).to.throw(ConfigError, /TOOL_TIMEOUT_MS/);
  });

  it('takes remote embedding concurrency and batch size per provider, within what each provider accepts', () => {
    const defaults = loadConfig({});
    expect(defaults.openaiEmbed).to.deep.equal({ concurrency: 4, batch: 256 });
    expect(defaults.cohereEmbed).to.deep.equal({ concurrency: 4, batch: 96 });
    const set = loadConfig({ OPENAI_EMBED_CONCURRENCY: '16', OPENAI_EMBED_BATCH: '2048', COHERE_EMBED_CONCURRENCY: '1', COHERE_EMBED_BATCH: '32' });
    expect(set.openaiEmbed).to.deep.equal({ concurrency: 16, batch: 2048 });
    expect(set.cohereEmbed).to.deep.equal({ concurrency: 1, batch: 32 });
    let error: unknown;
    try {
      loadConfig({ OPENAI_EMBED_CONCURRENCY: '0', OPENAI_EMBED_BATCH: '4096', COHERE_EMBED_CONCURRENCY: 'many', COHERE_EMBED_BATCH: '97' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['OPENAI_EMBED_CONCURRENCY', 'OPENAI_EMBED_BATCH', 'COHERE_EMBED_CONCURRENCY', 'COHERE_EMBED_BATCH']) expect(problems, name).to.include(name);
  });

  it('runs the local model on one thread per core by default, at most 4, and on up to one per core when LOCAL_EMBED_THREADS says so', () => {
    expect([1, 2, 3, 4, 7, 8, 16, 64].map((cores) => defaultLocalEmbedThreads(cores))).to.deep.equal([1, 2, 3, 4, 4, 4, 4, 4]);
    expect(loadConfig({}).localEmbedThreads).to.equal(defaultLocalEmbedThreads(os.availableParallelism()));
    expect(loadConfig({ LOCAL_EMBED_THREADS: '1' }).localEmbedThreads).to.equal(1);
    const cores = os.availableParallelism();
    expect(loadConfig({ LOCAL_EMBED_THREADS: String(cores) }).localEmbedThreads).to.equal(cores);
    for (const bad of ['0', String(cores + 1), 'two']) {
      expect(() => loadConfig({ LOCAL_EMBED_THREADS: bad }), bad).to.throw(ConfigError, new RegExp(`LOCAL_EMBED_THREADS must be an integer from 1 to ${cores}`));
    }
  });

  it('runs two model batches of indexing jobs per model thread by default, and EMBED_CONCURRENCY when set', () => {
    expect([1, 2, 4].map((threads) => defaultEmbedConcurrency(threads))).to.deep.equal([64, 128, 256]);
    expect(loadConfig({ LOCAL_EMBED_THREADS: '1' }).embedConcurrency).to.equal(64);
    expect(loadConfig({}).embedConcurrency).to.equal(64 * loadConfig({}).localEmbedThreads);
    expect(loadConfig({ LOCAL_EMBED_THREADS: '1', EMBED_CONCURRENCY: '8' }).embedConcurrency).to.equal(8);
    expect(() => loadConfig({ EMBED_CONCURRENCY: '513' })).to.throw(ConfigError, /EMBED_CONCURRENCY must be an integer from 1 to 512/);
  });

  it('takes MEMORY_EMBED_MODEL as provider/model, with the setting its provider needs', () => {
    expect(loadConfig({}).memoryEmbedModel).to.equal('local');
    expect(loadConfig({ MEMORY_EMBED_MODEL: 'openai/text-embedding-3-small', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).memoryEmbedModel).to.equal('openai/text-embedding-3-small');
    expect(() => loadConfig({ MEMORY_EMBED_MODEL: 'openai/text-embedding-3-small' })).to.throw(ConfigError, /MEMORY_EMBED_MODEL.*OPENAI_BASE_URL/);
    expect(() => loadConfig({ MEMORY_EMBED_MODEL: 'cohere/embed-v4.0' })).to.throw(ConfigError, /MEMORY_EMBED_MODEL.*COHERE_API_KEY/);
    expect(() => loadConfig({ MEMORY_EMBED_MODEL: 'bert' })).to.throw(ConfigError, /MEMORY_EMBED_MODEL/);
  });

  it('takes RERANK_MODEL as cohere/<model> (a bare name is Cohere’s) or http/<model> served at RERANK_BASE_URL', () => {
    expect(loadConfig({}).rerankModel).to.equal(null);
    expect(loadConfig({ COHERE_API_KEY: 'k' }).rerankModel).to.equal('cohere/rerank-v3.5');
    expect(loadConfig({ COHERE_API_KEY: 'k', RERANK_MODEL: 'rerank-english-v3.0' }).rerankModel).to.equal('cohere/rerank-english-v3.0');
    const served = loadConfig({ RERANK_MODEL: 'http/BAAI/bge-reranker-v2-m3', RERANK_BASE_URL: 'http://127.0.0.1:8080', RERANK_TIMEOUT_MS: '2500' });
    expect(served).to.include({ rerankModel: 'http/BAAI/bge-reranker-v2-m3', rerankBaseUrl: 'http://127.0.0.1:8080', rerankTimeoutMs: 2500, rerankApiKey: null });
    expect(loadConfig({}).rerankTimeoutMs).to.equal(10_000);
    expect(() => loadConfig({ RERANK_MODEL: 'http/bge' })).to.throw(ConfigError, /RERANK_MODEL http\/bge needs RERANK_BASE_URL/);
    expect(() => loadConfig({ RERANK_BASE_URL: 'http://127.0.0.1:8080' })).to.throw(ConfigError, /RERANK_MODEL=http\/<model>/);
    expect(() => loadConfig({ RERANK_MODEL: 'cohere/rerank-v3.5' })).to.throw(ConfigError, /needs COHERE_API_KEY/);
    expect(() => loadConfig({ RERANK_MODEL: 'http/bge', RERANK_BASE_URL: 'ftp://x' })).to.throw(ConfigError, /RERANK_BASE_URL/);
  });
});

describe('config: TOOL_ALLOW_PRIVATE_HOSTS', () => {
  const allowance = (raw: string) => loadConfig({ TOOL_ALLOW_PRIVATE_HOSTS: raw }).toolAllowPrivateHosts;

  it('allows nothing non-public by default', () => {
    expect(loadConfig({}).toolAllowPrivateHosts).to.deep.equal({ names: [], suffixes: [], networks: [] });
  });

  it('takes host names, *.domain, addresses and CIDR networks, in canonical form', () => {
    expect(allowance(' Billing.Internal. , *.svc.cluster.local,10.0.0.0/8, 127.0.0.1,[::1], fd12:3456::/32 ,,::ffff:192.168.0.0/112')).to.deep.equal({
      names: ['billing.internal'],
      suffixes: ['.svc.cluster.local'],
      networks: ['10.0.0.0/8', '127.0.0.1/32', '::1/128', 'fd12:3456::/32', '192.168.0.0/16'],
    });
  });

  it('reads numeric address forms as the address a resolver makes of them', () => {
    expect(allowance('2130706433,0x7f.1,127.1').networks).to.deep.equal(['127.0.0.1/32', '127.0.0.1/32', '127.0.0.1/32']);
  });

  it('refuses to start on a bad entry, naming it, with the other problems', () => {
    let error: unknown;
    try {
      loadConfig({ TOOL_ALLOW_PRIVATE_HOSTS: '10.0.0.0/33,host:8080,http://x.internal,999.1.1.1,ok.internal,10.0.0/8', PORT: 'x' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    for (const entry of ['10.0.0.0/33', 'host:8080', 'http://x.internal', '999.1.1.1', '10.0.0/8']) {
      expect(problems.some((p) => p.startsWith(`TOOL_ALLOW_PRIVATE_HOSTS entry "${entry}"`)), entry).to.equal(true);
    }
    expect(problems.join('\n')).to.not.include('"ok.internal"');
    expect(problems.join('\n')).to.include('PORT');
  });

});

describe('config: OpenTelemetry', () => {
  it('is off without an OTLP endpoint, and when the SDK or its trace exporter is turned off', () => {
    expect(loadConfig({}).otel).to.equal(null);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).otel).to.equal(null);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).otel).to.equal(null);
  });

  it('reads the standard variables: endpoint with /v1/traces appended, protocol, headers, service name and resource attributes', () => {
    const otel = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D,tenant=one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'tenant=two',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=ignored',
      OTEL_SERVICE_NAME: 'cairn-eu',
    }).otel;
    expect(otel).to.deep.equal({
      tracesUrl: 'https://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-api-key': 'abc==', tenant: 'two' },
      serviceName: 'cairn-eu',
      resourceAttributes: { 'deployment.environment.name': 'staging', 'service.name': 'ignored' },
    });
    const own = loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/otlp/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).otel;
    expect(own).to.include({ tracesUrl: 'http://tempo:4318/otlp/v1/traces', protocol: 'http/json', serviceName: 'cairn' });
  });

  it('refuses gRPC, a URL that is not http(s) and a header without a key, naming each', () => {
    let error: unknown;
    try {
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_HEADERS: '=secret' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).to.match(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/);
    expect(problems).to.match(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(got "grpc"\)/);
    expect(problems).to.match(/OTEL_EXPORTER_OTLP_HEADERS entry "" must be key=value/);
    expect(problems).to.not.include('secret');
  });
});
