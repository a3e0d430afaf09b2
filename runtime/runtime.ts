import type { Queue } from 'bullmq';
import { AdminAccess } from '../core/admin-access.js';
import { ConsoleAccess } from '../core/console-access.js';
import { ApiKeys } from '../core/api-keys.js';
import type { KeyCache } from '../db/key-cache.js';
import { RecordExtraction } from '../core/memory/record-extraction.js';
import { MemoryInference } from '../core/memory/inference.js';
import { Indexes } from '../core/indexes.js';
import { MemoryKeywords } from '../core/memory/keyword.js';
import { MemoryIndexer } from '../core/memory/indexing.js';
import { Memories } from '../core/memory/memories.js';
import { BulkMemories } from '../core/memory/bulk.js';
import { Records } from '../core/memory/records.js';
import { MemorySearch } from '../core/memory/search.js';
import { MemoryModels } from '../core/memory/memory-models.js';
import { MemoryReembedding } from '../core/memory/reembedding.js';
import { ProjectSettings } from '../core/project/settings.js';
import { ProjectSettingsRepository } from '../db/repositories/project-settings.repository.js';
import { memoryReembedJob } from '../jobs/memory-reembed.job.js';
import { Reranking } from '../core/reranking.js';
import { MemoryWrites } from '../core/memory/writes.js';
import { MemoryWriteEvents } from '../core/memory/events.js';
import { MemoryEntityIndex } from '../core/memory/entity-index.js';
import { MemoryEntitiesRepository } from '../db/repositories/memory-entities.repository.js';
import { Webhooks } from '../core/webhooks/webhooks.js';
import { WebhooksRepository } from '../db/repositories/webhooks.repository.js';
import { webhookDeliverJob } from '../jobs/webhook-deliver.job.js';
import { MemoryExports } from '../core/memory/exports.js';
import { MemoryExportsRepository } from '../db/repositories/memory-exports.repository.js';
import { memoryExportJob } from '../jobs/memory-export.job.js';
import { MemoryDecisions } from '../core/memory/decisions.js';
import { Probes } from '../core/probes.js';
import { Retention } from '../core/retention.js';
import { Usage } from '../core/usage.js';
import { Operations } from '../core/operations.js';
import { Schemas } from '../core/schemas.js';
import { ConfigCache } from '../core/config-cache.js';
import { createDatabase, sqliteFile, supportsRowLocks, type Knex } from '../db/knex.js';
import { startCheckpoints } from '../db/sqlite-checkpoints.js';
import { migrateLatest, pendingMigrations } from '../db/migrate.js';
import type { MilvusConnection } from '../db/milvus.js';
import { AdminSignOutsRepository } from '../db/repositories/admin-sign-outs.repository.js';
import { IdempotencyKeysRepository } from '../db/repositories/idempotency-keys.repository.js';
import { Idempotency } from '../core/idempotency.js';
import { ApiKeysRepository } from '../db/repositories/api-keys.repository.js';
import { IndexesRepository } from '../db/repositories/indexes.repository.js';
import { MemoryTermsRepository } from '../db/repositories/memory-terms.repository.js';
import { MemoriesRepository } from '../db/repositories/memories.repository.js';
import { OutboxRepository } from '../db/repositories/outbox.repository.js';
import { TransactionalOutbox } from '../db/transactional-outbox.js';
import { ProbesRepository } from '../db/repositories/probes.repository.js';
import { ProjectsRepository } from '../db/repositories/projects.repository.js';
import { UsageRepository } from '../db/repositories/usage.repository.js';
import { SchemasRepository } from '../db/repositories/schemas.repository.js';
import { EmbeddedVectorStore } from '../db/vectors/embedded.store.js';
import { MilvusVectorStore } from '../db/vectors/milvus.store.js';
import type { VectorStore } from '../contracts/vector-store.js';
import { assertHandlers, type JobHandlers } from '../contracts/jobs/handlers.js';
import { memoryIndexJob } from '../jobs/memory-index.job.js';
import { indexReconcileJob } from '../jobs/index-reconcile.job.js';
import { Reconciliation } from '../core/reconcile.js';
import { ReconcileRepository } from '../db/repositories/reconcile.repository.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import { probeTouchJob } from '../jobs/probe-touch.job.js';
import { retentionSweepJob } from '../jobs/retention-sweep.job.js';
import { recordExtractJob } from '../jobs/record-extract.job.js';
import { memoryInferJob } from '../jobs/memory-infer.job.js';
import { documentProcessJob, knowledgePurgeJob } from '../jobs/document-process.job.js';
import { Knowledge } from '../core/knowledge/knowledge.js';
import { KnowledgeRepository } from '../db/repositories/knowledge.repository.js';
import { AgentsRepository } from '../db/repositories/agents.repository.js';
import { Agents } from '../core/agents/agents.js';
import { ChatRiskModel, Guardrails } from '../core/agents/guardrails.js';
import { McpClient } from '../core/agents/mcp-client.js';
import { ToolRunner } from '../core/agents/tool-runner.js';
import { ChatTurns } from '../core/agents/turn.js';
import { Secrets, secretsKey } from '../core/secrets.js';
import { ProjectSpecs } from '../core/project/project-specs.js';
import { OidcVerifier } from '../core/registry/identity.js';
import { Registry } from '../core/registry/registry.js';
import { RegistryRepository } from '../db/repositories/registry.repository.js';
import { BullmqQueue } from '../workers/bullmq.driver.js';
import { OutboxRelay, type RelayOptions } from '../workers/outbox-relay.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';
import type { Config } from '../lib/config.js';
import { profileAdapters, type ProfileAdapters } from './profiles.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { modelName, Providers, type Embedders, type LanguageModels } from '../providers/registry.js';
import { Metrics } from '../lib/metrics.js';
import { Shutdown, ShutdownPhase } from '../lib/shutdown.js';
import { withTimeout } from '../lib/time.js';
import { startTelemetry } from './telemetry.js';

/** Rows each reconciliation check reads per pass. */
const RECONCILE_PAGE = 500;

/** What a process does: serve HTTP, run jobs, or both (`npm start`). */
export type Role = 'all' | 'api' | 'worker';

export interface RuntimeOptions {
  role: Role;
  logger?: Logger;
  relay?: Partial<RelayOptions>;
  /** Apply pending migrations at start (always on the embedded profile). */
  migrate?: boolean;
}

/** The result of one readiness probe. */
export interface DependencyStatus {
  name: string;
  ok: boolean;
  error?: string;
}

/**
 * Everything a Cairn process needs, built from the configuration: the adapters of its profile,
 * the domain services, and an ordered shutdown. HTTP and worker entry points share it.
 */
export class Runtime {
  readonly repositories;
  readonly queue: QueueDriver;
  readonly keyCache: KeyCache;
  /** The Milvus connection (production), null on the embedded profile. */
  readonly milvus: MilvusConnection | null;
  readonly relay: OutboxRelay;
  readonly apiKeys: ApiKeys;
  /** ADMIN_TOKEN's tries, counted across every way it is presented, and the admin sessions signed out. */
  readonly adminAccess: AdminAccess;
  /** The web console's sign-in with a project API key, and its sessions. */
  readonly consoleAccess: ConsoleAccess;
  readonly probes: Probes;
  /** Milvus on the production profile, the in-process exact index on the embedded one. */
  readonly vectors: VectorStore;
  /** Every model this server can use: embedding, extraction, chat, reranking. */
  readonly providers: Providers;
  readonly embedders: Embedders;
  readonly indexes: Indexes;
  /** Typed-memory record schemas and their versions. */
  readonly schemas: Schemas;
  /** Typed records (`/v1/records`). */
  readonly records: Records;
  /** mem0's free-form memories. */
  readonly memories: Memories;
  readonly bulkMemories: BulkMemories;
  /** mem0's memory exports: a schema filled from an entity's memories by the `memory.export` job. */
  readonly memoryExports: MemoryExports;
  /** mem0's webhooks: memory events recorded with each write, delivered signed by the `webhook.deliver` job. */
  readonly webhooks: Webhooks;
  /** Memory search over typed records and free-form memories. */
  readonly memorySearch: MemorySearch;
  /** The reranker of searches with `rerank: true` (`RERANK_MODEL`), with its timeout and fallback. */
  readonly reranking: Reranking;
  /** The `memory.index` job: a memory's vector derived from its row. */
  readonly memoryIndexer: MemoryIndexer;
  /** The `memory.reembed` job: a project's memories moved to the embedding model its setting names. */
  readonly reembedding: MemoryReembedding;
  /** Project settings (`/v1/project/settings`): the memory embedding model, and its re-embedding's progress. */
  readonly projectSettings: ProjectSettings;
  /** Deletes records past their schema's retention (the `retention.sweep` job). */
  readonly retention: Retention;
  readonly usage: Usage;
  /** The background work of a project now: queue depths, its pending and failed memories and documents. */
  readonly operations: Operations;
  /** Who and what each owner's memories mention. */
  readonly entityIndex: MemoryEntityIndex;
  /** Typed-record extraction by a model (`record.extract`). */
  readonly extraction: RecordExtraction;
  /** mem0's add: the facts of a conversation picked and decided by a model (`memory.infer`). */
  readonly inference: MemoryInference;
  /** The answers of writes sent with an `Idempotency-Key`. */
  readonly idempotency: Idempotency;
  /** Knowledge bases, the document pipeline and retrieval. */
  readonly knowledge: Knowledge;
  /** The `index.reconcile` pass: re-queues stuck indexing and re-indexes rows whose vectors are missing. */
  readonly reconciliation: Reconciliation;
  /** Write-only project secrets (tool credentials). */
  readonly secrets: Secrets;
  readonly languageModels: LanguageModels;
  /** Agents with their tools, rules and knowledge. */
  readonly agents: Agents;
  /** Chat turns and their runs. */
  readonly chat: ChatTurns;
  /** Export and apply of a project's whole configuration as one spec document. */
  readonly projectSpecs: ProjectSpecs;
  readonly toolRunner: ToolRunner;
  readonly mcpClient: McpClient;
  /** Verifies the OIDC ID tokens registry paths take. */
  readonly oidc: OidcVerifier;
  /** Published project versions, their owners and members. */
  readonly registry: Registry;
  readonly metrics: Metrics;
  readonly shutdown: Shutdown;

  private constructor(
    readonly config: Config,
    readonly role: Role,
    readonly log: Logger,
    readonly db: Knex,
    adapters: ProfileAdapters,
    relayOptions: Partial<RelayOptions>,
  ) {
    const { queue, keyCache, milvus, memoryChanges, configChanges, toolLimiter, adminLimiter } = adapters;
    this.queue = queue;
    this.keyCache = keyCache;
    this.milvus = milvus;
    this.repositories = {
      projects: new ProjectsRepository(db),
      apiKeys: new ApiKeysRepository(db),
      adminSignOuts: new AdminSignOutsRepository(db),
      outbox: new OutboxRepository(db),
      probes: new ProbesRepository(db),
      indexes: new IndexesRepository(db),
      schemas: new SchemasRepository(db),
      memories: new MemoriesRepository(db),
      memoryEntities: new MemoryEntitiesRepository(db),
      memoryTerms: new MemoryTermsRepository(db),
      usage: new UsageRepository(db),
      knowledge: new KnowledgeRepository(db),
      agents: new AgentsRepository(db),
      registry: new RegistryRepository(db),
      webhooks: new WebhooksRepository(db),
      memoryExports: new MemoryExportsRepository(db),
      projectSettings: new ProjectSettingsRepository(db),
      idempotencyKeys: new IdempotencyKeysRepository(db),
    };
    this.relay = new OutboxRelay(this.repositories.outbox, queue, log.child({ component: 'outbox-relay' }), relayOptions);
    const outbox = new TransactionalOutbox(db, this.repositories.outbox, (entries) => this.relay.handOff(entries));
    this.apiKeys = new ApiKeys(this.repositories.apiKeys, this.repositories.projects, keyCache, log);
    this.adminAccess = new AdminAccess(config.adminToken, adminLimiter, this.repositories.adminSignOuts);
    this.consoleAccess = new ConsoleAccess(this.apiKeys, this.repositories.apiKeys, adminLimiter, this.repositories.adminSignOuts, {
      adminToken: config.adminToken,
      projects: this.repositories.projects,
    });
    this.probes = new Probes(this.repositories.probes, outbox);
    this.vectors = milvus ? new MilvusVectorStore(milvus, log.child({ component: 'vectors' })) : new EmbeddedVectorStore(db);
    this.providers = new Providers(config, log.child({ component: 'providers' }));
    this.embedders = this.providers.embedders;
    // agents, schemas, indexes and knowledge bases as loaded objects, until the project's configuration changes
    const configCache = new ConfigCache(configChanges);
    this.indexes = new Indexes(this.repositories.indexes, this.vectors, this.embedders, configCache);
    this.schemas = new Schemas(this.repositories.schemas, configCache);
    const { memories, usage } = this.repositories;
    const keywords = new MemoryKeywords(this.repositories.memoryTerms, memoryChanges);
    this.webhooks = new Webhooks(this.repositories.webhooks, { privateHosts: config.toolAllowPrivateHosts, timeoutMs: config.toolTimeoutMs });
    const events = new MemoryWriteEvents();
    events.subscribe(this.webhooks);
    this.entityIndex = new MemoryEntityIndex(this.repositories.memoryEntities);
    events.subscribe(this.entityIndex);
    const writes = new MemoryWrites(memories, outbox, keywords, usage, events, { synchronousDriver: !supportsRowLocks(this.db) });
    this.records = new Records(memories, writes, this.schemas);
    const memoryEmbedModel = modelName('embed', config.memoryEmbedModel);
    this.reranking = new Reranking(config.rerankModel !== null ? this.providers.rerankers.get(config.rerankModel) : null, config.rerankTimeoutMs);
    // each project's memory embedding model (its setting, else MEMORY_EMBED_MODEL), read through the configuration cache
    const memoryModels = new MemoryModels(this.repositories.projectSettings, configCache, this.embedders, memoryEmbedModel);
    this.memorySearch = new MemorySearch(memories, keywords, this.vectors, this.reranking, memoryModels);
    this.memories = new Memories(memories, writes, this.memorySearch);
    this.bulkMemories = new BulkMemories(memories, writes, this.memories);
    this.memoryIndexer = new MemoryIndexer(memories, this.repositories.memoryEntities, this.vectors, memoryModels);
    this.reembedding = new MemoryReembedding(this.repositories.projectSettings, memories, this.vectors, memoryModels, this.memoryIndexer, { leaseMs: config.jobLockMs });
    this.projectSettings = new ProjectSettings(this.repositories.projectSettings, outbox, memoryModels, this.embedders);
    this.retention = new Retention(this.repositories.schemas, memories, this.records, { expiryGraceDays: config.memoryExpiryGraceDays });
    this.usage = new Usage(this.repositories.usage);
    this.operations = new Operations(queue, memories, this.repositories.knowledge);
    const decisions = new MemoryDecisions(this.memories, this.embedders, log.child({ component: 'memory-decisions' }));
    this.memoryExports = new MemoryExports(this.repositories.memoryExports, outbox, this.memories, this.providers.extractors, config.memoryModel);
    // a retry waits on the first request with its key as long as that request waits on its job
    this.idempotency = new Idempotency(this.repositories.idempotencyKeys, { waitMs: config.extractTimeoutMs });
    this.extraction = new RecordExtraction(this.schemas, this.records, this.providers.extractors, queue, config.extractTimeoutMs);
    this.inference = new MemoryInference(this.memories, this.providers.extractors, queue, config.extractTimeoutMs, decisions, this.idempotency);
    this.knowledge = new Knowledge(db, this.repositories.knowledge, outbox, this.vectors, this.embedders, this.reranking, configCache);
    this.reconciliation = new Reconciliation(new ReconcileRepository(db), memories, this.memoryIndexer, this.knowledge, this.vectors, queue, this.repositories.projectSettings, {
      graceMs: config.reconcileGraceMs,
      pageSize: RECONCILE_PAGE,
    });
    this.secrets = new Secrets(this.repositories.agents, secretsKey(config.secretsKey, config.profile === 'embedded' ? config.dataDir : null));
    this.languageModels = this.providers.languageModels;
    this.agents = new Agents(this.repositories.agents, this.knowledge, this.secrets, this.languageModels, this.schemas, configCache);
    this.projectSpecs = new ProjectSpecs({
      agents: this.agents,
      knowledge: this.knowledge,
      schemas: this.schemas,
      indexes: this.indexes,
      secrets: this.secrets,
      languageModels: this.languageModels,
      embedders: this.embedders,
      settings: this.projectSettings,
    });
    this.toolRunner = new ToolRunner(toolLimiter, { timeoutMs: config.toolTimeoutMs, privateHosts: config.toolAllowPrivateHosts });
    const riskModel = config.guardrailModel !== null ? new ChatRiskModel(this.languageModels.get(this.languageModels.validate(config.guardrailModel))) : null;
    const guardrails = new Guardrails({ model: riskModel });
    this.mcpClient = new McpClient(toolLimiter, { timeoutMs: config.toolTimeoutMs, privateHosts: config.toolAllowPrivateHosts });
    this.chat = new ChatTurns(this.agents, this.repositories.agents, this.knowledge, this.languageModels, guardrails, this.toolRunner, this.mcpClient, this.secrets, this.extraction, log.child({ component: 'chat' }), (turn) =>
      this.metrics.observeTurn(turn),
    );
    this.oidc = new OidcVerifier(config.oidc, log.child({ component: 'oidc' }));
    this.registry = new Registry(this.repositories.registry);
    this.metrics = new Metrics({
      queueDepths: async () => (await queue.depths()) as unknown as Array<Record<string, number | string>>,
      outbox: () => this.repositories.outbox.countPending(),
    });
    this.shutdown = new Shutdown(log, config.shutdownTimeoutMs);
    this.shutdown.add('outbox relay', ShutdownPhase.workers, () => this.relay.stop());
    this.shutdown.add('workers', ShutdownPhase.workers, () => queue.closeWorkers());
    this.shutdown.add('queues', ShutdownPhase.queues, () => queue.closeQueues());
    // with the job consumers: a job still reading or embedding a large document is cut short
    // (it runs again, from the start, after the restart) rather than holding shutdown for minutes
    this.shutdown.add('document threads', ShutdownPhase.workers, () => this.knowledge.close());
    // a re-embedding stops at its next page and resumes at its cursor after the restart
    this.shutdown.add('memory re-embedding', ShutdownPhase.workers, () => this.reembedding.close());
    this.shutdown.add('embedding threads', ShutdownPhase.workers, () => this.providers.close());
    const checkpoints = config.profile === 'embedded' ? startCheckpoints(sqliteFile(config.dataDir)) : null;
    this.shutdown.add('database', ShutdownPhase.database, async () => {
      await checkpoints?.stop();
      await db.destroy();
    });
    if (milvus) this.shutdown.add('milvus', ShutdownPhase.vectors, () => milvus.close());
    this.shutdown.add('key cache', ShutdownPhase.redis, () => keyCache.close());
    this.shutdown.add('memory changes', ShutdownPhase.redis, () => memoryChanges.close());
    this.shutdown.add('configuration changes', ShutdownPhase.redis, () => configChanges.close());
    this.shutdown.add('admin sign-in tries', ShutdownPhase.redis, () => adminLimiter.close());
    this.shutdown.add('webhook deliveries', ShutdownPhase.workers, () => this.webhooks.close());
    this.shutdown.add('tool runner', ShutdownPhase.redis, async () => {
      await this.toolRunner.close();
      await this.mcpClient.close();
      await toolLimiter.close();
    });
  }

  /** Builds the runtime of a profile: connects, migrates where allowed, ensures the bootstrap key. */
  static async create(config: Config, options: RuntimeOptions): Promise<Runtime> {
    const log = options.logger ?? createLogger(config.logLevel, { role: options.role });
    if (config.profile === 'embedded' && options.role !== 'all') {
      throw new Error(
        'The embedded profile runs API and worker in one process (npm start). Set DATABASE_URL, REDIS_URL and MILVUS_ADDRESS to run them apart.',
      );
    }
    // before anything that makes spans; the SDK is flushed after everything else has closed
    const stopTelemetry = config.otel !== null ? startTelemetry(config.otel) : null;
    const db = createDatabase(config, log.child({ component: 'database' }));
    try {
      if (config.profile === 'embedded' || options.migrate) {
        await migrateLatest(db);
      } else {
        const pending = await pendingMigrations(db);
        if (pending.length > 0) {
          throw new Error(`The database is missing migrations (${pending.join(', ')}). Run: npm run db:migrate`);
        }
      }
    } catch (err) {
      await db.destroy();
      await stopTelemetry?.();
      throw err;
    }
    const adapters = profileAdapters(config, log);
    const runtime = new Runtime(config, options.role, log, db, adapters, options.relay ?? {});
    if (stopTelemetry) runtime.shutdown.add('telemetry', ShutdownPhase.telemetry, stopTelemetry);
    if (config.bootstrapApiKey !== null) await runtime.apiKeys.ensureBootstrapKey(config.bootstrapApiKey);
    return runtime;
  }

  /** The job handlers, checked against the catalogue. */
  handlers(): JobHandlers {
    const handlers = {
      'probe.touch': probeTouchJob(this.probes),
      'memory.index': memoryIndexJob(this.memoryIndexer),
      'retention.sweep': retentionSweepJob(this.retention, this.webhooks, this.config.webhookLogDays, this.idempotency),
      'record.extract': recordExtractJob(this.extraction),
      'memory.infer': memoryInferJob(this.inference),
      'document.process': documentProcessJob(this.knowledge),
      'knowledge.purge': knowledgePurgeJob(this.knowledge),
      'index.reconcile': indexReconcileJob(this.reconciliation),
      'webhook.deliver': webhookDeliverJob(this.webhooks),
      'memory.export': memoryExportJob(this.memoryExports),
      'memory.reembed': memoryReembedJob(this.reembedding),
    };
    assertHandlers(handlers);
    return handlers;
  }

  /** Starts background work: the outbox relay everywhere, job consumers where the role runs jobs. */
  async start(): Promise<void> {
    if (this.config.profile === 'embedded') {
      // One embedded process owns the outbox: leases left by a previous run are stale.
      await this.repositories.outbox.releaseAll();
      await this.repositories.projectSettings.releaseAll();
      // and so are idempotency keys whose jobs were running in it: a retry may take them over
      await this.repositories.idempotencyKeys.releaseAll();
    }
    if (this.role !== 'api') {
      this.queue.startWorkers(this.handlers());
      await this.queue.schedule('retention.sweep', this.config.retentionSweepMs, {});
      // the start-up sweep (in-process: the schedule's first run), then once per interval across all workers
      if (this.queue.kind === 'bullmq') {
        await this.queue.dispatch(envelope('index.reconcile', {})).catch((err: unknown) => this.log.warn({ err }, 'start-up reconciliation not queued; the schedule runs it'));
      }
      await this.queue.schedule('index.reconcile', this.config.reconcileIntervalMs, {});
    }
    this.providers.prepare();
    this.milvus?.prepare();
    this.relay.start();
    this.relay.kick();
  }

  /** BullMQ queues for Bull Board (production only). */
  bullQueues(): Queue[] {
    return this.queue instanceof BullmqQueue ? this.queue.bullQueues() : [];
  }

  /** Probes every dependency of this profile. */
  async readiness(): Promise<DependencyStatus[]> {
    const check = async (name: string, probe: () => Promise<unknown>): Promise<DependencyStatus> => {
      try {
        await withTimeout(probe(), 2_000);
        return { name, ok: true };
      } catch (err) {
        return { name, ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    };
    const checks = [check('database', () => this.db.raw('select 1')), check('queue', () => this.queue.ping())];
    const milvus = this.milvus;
    if (milvus) checks.push(check('vectors', () => milvus.ping()));
    // memories are embedded with this model: while it cannot embed, every semantic feature answers 503
    const embedModel = modelName('embed', this.config.memoryEmbedModel);
    checks.push(
      check('embedder', async () => {
        const problem = this.providers.embedderNotReady(embedModel);
        if (problem !== null) throw new Error(problem);
      }),
    );
    return Promise.all(checks);
  }
}
