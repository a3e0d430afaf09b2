import type { Metrics } from '../../lib/metrics.js';
import { packageVersion } from '../../lib/modules.js';
import { buildOpenApi } from '../openapi.js';
import { route, type RouteCatalog, type RouteSpec } from '../route.js';

/** What the operations endpoints read. */
export interface SystemServices {
  /** Checks every dependency of the profile. */
  readiness: () => Promise<Array<{ name: string; ok: boolean; error?: string }>>;
  profile: string;
  metrics: Metrics;
}

/** Health, readiness, metrics and the OpenAPI document: unauthenticated, for operators and tools. */
export function systemRoutes({ readiness, profile, metrics }: SystemServices, catalog: RouteCatalog): RouteSpec[] {
  const healthz = route({
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'The process is up.',
    tag: 'Operations',
    auth: 'none',
    responses: { 200: { description: 'Up', schema: { type: 'object', properties: { status: { type: 'string' } } } } },
    handler(ctx) {
      ctx.body = { status: 'ok' };
    },
  });

  const readyz = route({
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Every dependency (database, queue, vector store) answers and the embedding model of memories can embed. 503 names the ones that do not.',
    tag: 'Operations',
    auth: 'none',
    responses: {
      200: { description: 'Ready' },
      503: { description: 'A dependency is unreachable, or the local embedding model is still being fetched (or could not be)' },
    },
    async handler(ctx) {
      const checks = await readiness();
      const ready = checks.every((c) => c.ok);
      ctx.status = ready ? 200 : 503;
      if (!ready) ctx.set('Retry-After', '5');
      ctx.body = { status: ready ? 'ready' : 'unavailable', profile, checks };
    },
  });

  const scrape = route({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics: request latency histogram, queue depths, outbox backlog, process stats.',
    tag: 'Operations',
    auth: 'none',
    responses: { 200: { description: 'Prometheus text format' } },
    async handler(ctx) {
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.registry.metrics();
    },
  });

  let document: unknown = null;
  const openapi = route({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document.',
    tag: 'Operations',
    auth: 'none',
    responses: { 200: { description: 'OpenAPI 3.1' } },
    handler(ctx) {
      document ??= buildOpenApi(catalog, packageVersion());
      ctx.body = document;
    },
  });

  return [healthz, readyz, scrape, openapi];
}
