import type { Probes, ProbeView } from '../../core/probes.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { ERROR_SCHEMA, route, type RouteSpec } from '../route.js';
import { CREATE_PROBE, PROBE_VIEW } from '../schemas/probes.js';

const show = (p: ProbeView) => ({ ...p, created_at: iso(p.created_at), processed_at: isoOrNull(p.processed_at) });

/** `/v1/probes`: pipeline probes, to check that background work flows. */
export function probeRoutes({ probes }: { probes: Probes }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/probes',
    operationId: 'createProbe',
    summary:
      'Start a pipeline probe: a write whose derived job a worker completes. Poll it to see the async path work and how long it takes.',
    tag: 'Operations',
    auth: 'token',
    body: CREATE_PROBE,
    responses: { 202: { description: 'Accepted; status is pending', schema: PROBE_VIEW }, 400: { description: 'Invalid body', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      const probe = await probes.create(ctx.state.principal.projectId, ctx.state.body.hold_ms ?? 0);
      ctx.status = 202;
      ctx.body = show(probe);
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/probes/:id',
    operationId: 'getProbe',
    summary: 'Get a pipeline probe.',
    tag: 'Operations',
    auth: 'token',
    responses: { 200: { description: 'The probe', schema: PROBE_VIEW }, 404: { description: 'Unknown probe', schema: ERROR_SCHEMA } },
    async handler(ctx) {
      ctx.body = show(await probes.get(ctx.state.principal.projectId, String(ctx.params.id)));
    },
  });

  return [create, get];
}
