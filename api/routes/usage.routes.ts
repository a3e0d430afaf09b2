import type { Usage } from '../../core/usage.js';
import { route, type RouteSpec } from '../route.js';
import { DAY, USAGE_QUERY } from '../schemas/usage.js';

/** `GET /v1/usage`: metered operations of the calling project by day. */
export function usageRoutes({ usage }: { usage: Usage }): RouteSpec[] {
  const report = route({
    method: 'get',
    path: '/v1/usage',
    operationId: 'getUsage',
    summary: 'Counts of metered operations (memory.add: each stored record or memory) by UTC day; default the last 30 days.',
    tag: 'Usage',
    auth: 'token',
    query: USAGE_QUERY,
    responses: {
      200: {
        description: 'Usage',
        schema: {
          type: 'object',
          properties: {
            from: DAY,
            to: DAY,
            totals: { type: 'object', additionalProperties: { type: 'integer' } },
            days: {
              type: 'array',
              items: { type: 'object', properties: { day: DAY, operation: { type: 'string' }, count: { type: 'integer' } } },
            },
          },
        },
      },
    },
    async handler(ctx) {
      const { from, to } = ctx.state.query ?? {};
      ctx.body = await usage.report(ctx.state.principal.projectId, from, to);
    },
  });
  return [report];
}
