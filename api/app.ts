import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type { Runtime } from '../runtime/runtime.js';
import { adminSessionKeys } from './middleware/admin-session.js';
import { requireAdmin, requireApiKey, requireIdToken } from './middleware/auth.js';
import { errorHandler } from './middleware/errors.js';
import { requestContext } from './middleware/request-context.js';
import { traceRequests } from './middleware/trace-requests.js';
import { tracingEnabled } from '../lib/tracing.js';
import { wellFormedUri } from './middleware/uri.js';
import { mount, RouteCatalog, type RouteAuth, type RouteSpec } from './route.js';
import { bullBoard, queueDepthRoute } from './routes/admin.routes.js';
import { adminSignIn } from './routes/admin-sign-in.routes.js';
import { apiKeyRoutes } from './routes/api-keys.routes.js';
import { consolePages, consoleRoutes } from './routes/console.routes.js';
import { indexRoutes } from './routes/indexes.routes.js';
import { mem0Routes } from './routes/mem0.routes.js';
import { operationsRoutes } from './routes/operations.routes.js';
import { mem0BulkRoutes } from './routes/mem0-bulk.routes.js';
import { mem0ExportRoutes } from './routes/mem0-exports.routes.js';
import { mem0FeedbackRoutes } from './routes/mem0-feedback.routes.js';
import { pingRoutes } from './routes/ping.routes.js';
import { webhookRoutes } from './routes/webhooks.routes.js';
import { probeRoutes } from './routes/probes.routes.js';
import { recordRoutes } from './routes/records.routes.js';
import { schemaRoutes } from './routes/schemas.routes.js';
import { systemRoutes } from './routes/system.routes.js';
import { usageRoutes } from './routes/usage.routes.js';
import { knowledgeRoutes } from './routes/knowledge.routes.js';
import { agentRoutes } from './routes/agents.routes.js';
import { secretRoutes } from './routes/secrets.routes.js';
import { projectRoutes } from './routes/project.routes.js';
import { registryRoutes } from './routes/registry.routes.js';
import { mountMcp } from './mcp/endpoint.js';

const ROUTES = Symbol('cairn.routes');

/** The routes mounted on an app built by `createApp` (what `/openapi.json` documents). */
export function routesOf(app: Koa): readonly RouteSpec[] {
  return (app as Koa & { [ROUTES]: RouteSpec[] })[ROUTES];
}

/** Builds the Koa application on a runtime. Tests drive it with supertest; start-api serves it. */
export function createApp(runtime: Runtime): Koa {
  const app = new Koa();
  app.silent = true;
  // the admin session cookie's signing keys (see adminSessionKeys for why they come from the token)
  if (runtime.config.adminToken !== null) app.keys = adminSessionKeys(runtime.config.adminToken);
  const catalog = new RouteCatalog();
  const router = new Router();
  const guards: Record<RouteAuth, Middleware> = {
    // the console's session cookie stands in for the key on the API's routes (not on /mcp)
    token: requireApiKey(runtime.apiKeys, { consoleAccess: runtime.consoleAccess }),
    admin: requireAdmin(runtime.adminAccess),
    oidc: requireIdToken(runtime.oidc),
    none: (_ctx, next) => next(),
  };
  const options = { bodyLimitBytes: runtime.config.bodyLimitBytes };

  // each route gets the services it uses, never the database or the repositories
  const board = bullBoard(runtime.bullQueues(), guards.admin);
  const specs = [
    ...systemRoutes({ readiness: () => runtime.readiness(), profile: runtime.config.profile, metrics: runtime.metrics }, catalog),
    ...apiKeyRoutes({ apiKeys: runtime.apiKeys }),
    ...pingRoutes(),
    ...consoleRoutes({ consoleAccess: runtime.consoleAccess }),
    ...probeRoutes({ probes: runtime.probes }),
    ...indexRoutes({ indexes: runtime.indexes }),
    ...schemaRoutes({ schemas: runtime.schemas }),
    ...recordRoutes({ records: runtime.records, memorySearch: runtime.memorySearch, extraction: runtime.extraction, entityIndex: runtime.entityIndex }),
    ...mem0Routes({ memories: runtime.memories, entityIndex: runtime.entityIndex, inference: runtime.inference, idempotency: runtime.idempotency, memoryModel: runtime.config.memoryModel }),
    ...mem0BulkRoutes({ bulk: runtime.bulkMemories }),
    ...mem0FeedbackRoutes({ memories: runtime.memories }),
    ...mem0ExportRoutes({ memoryExports: runtime.memoryExports }),
    ...webhookRoutes({ webhooks: runtime.webhooks }),
    ...usageRoutes({ usage: runtime.usage }),
    ...operationsRoutes({ operations: runtime.operations }),
    ...knowledgeRoutes({ knowledge: runtime.knowledge }),
    ...agentRoutes({ agents: runtime.agents, chat: runtime.chat, log: runtime.log }),
    ...secretRoutes({ secrets: runtime.secrets }),
    ...projectRoutes({ projectSpecs: runtime.projectSpecs, projectSettings: runtime.projectSettings }),
    ...registryRoutes({ registry: runtime.registry }),
    ...(board ? [] : [queueDepthRoute(runtime.queue)]),
  ];
  for (const spec of specs) mount(router, catalog, guards, spec, options);
  mountMcp(router, {
    auth: requireApiKey(runtime.apiKeys, { bearer: true }),
    bodyLimitBytes: runtime.config.bodyLimitBytes,
    services: {
      memories: runtime.memories,
      memorySearch: runtime.memorySearch,
      extraction: runtime.extraction,
      inference: runtime.inference,
      memoryModel: runtime.config.memoryModel,
      records: runtime.records,
      knowledge: runtime.knowledge,
      indexes: runtime.indexes,
      chat: runtime.chat,
      agents: runtime.agents,
      schemas: runtime.schemas,
    },
    log: runtime.log,
  });

  // mounted only with an exporter running: without one, a request pays nothing for tracing
  if (tracingEnabled()) app.use(traceRequests());
  app.use(requestContext(runtime.log, runtime.metrics));
  app.use(errorHandler());
  app.use(wellFormedUri());
  app.use(adminSignIn(runtime.adminAccess));
  app.use(consolePages());
  if (board) app.use(board);
  app.use(router.routes());
  // Sets 405 (or 501 for a method no route uses) with Allow; the error handler answers both as 405.
  app.use(router.allowedMethods());
  Object.defineProperty(app, ROUTES, { value: catalog.routes });
  return app;
}
