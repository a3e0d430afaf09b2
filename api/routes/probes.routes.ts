import type { ProbeView } from '../../core/probes.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { ERROR_SCHEMA, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';

const PROBE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'done'] },
    hold_ms: { type: 'integer' },
    attempts: { type: 'integer', description: 'Times a worker started the job.' },
    processed_by: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    processed_at: { type: ['string', 'null'], format: 'date-time' },
    latency_ms: { type: ['integer', 'null'], description: 'From the write to the worker finishing.' },
  },
} as const;

const show = (p: ProbeView) => ({ ...p, created_at: iso(p.created_at), processed_at: isoOrNull(p.processed_at) });

/** `/v1/probes`: pipeline probes, to check that background work flows. */
export function probeRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const create: RouteSpec<{ hold_ms?: number }, Record<string, never>> = {
    method: 'post',
    path: '/v1/probes',
    operationId: 'createProbe',
    summary:
      'Start a pipeline probe: a write whose derived job a worker completes. Poll it to see the async path work and how long it takes.',
    tag: 'Operations',
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        hold_ms: {
          type: 'integer',
          minimum: 0,
          maximum: 60_000,
          description: 'How long the worker holds the job before finishing it (simulates slow work). Default 0.',
        },
      },
    },
    responses: { 202: { description: 'Accepted; status is pending', schema: PROBE }, 400: { description: 'Invalid body', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      const probe = await runtime.probes.create(ctx.state.principal.projectId, ctx.state.body.hold_ms ?? 0);
      ctx.status = 202;
      ctx.body = show(probe);
    },
  };

  const get: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: '/v1/probes/:id',
    operationId: 'getProbe',
    summary: 'Get a pipeline probe.',
    tag: 'Operations',
    auth: 'token',
    responses: { 200: { description: 'The probe', schema: PROBE }, 404: { description: 'Unknown probe', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      ctx.body = show(await runtime.probes.get(ctx.state.principal.projectId, String(ctx.params.id)));
    },
  };

  return [create, get] as Array<RouteSpec<never, never>>;
}
