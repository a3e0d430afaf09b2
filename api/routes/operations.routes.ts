import { QUEUE_NAMES } from '../../contracts/jobs/catalogue.js';
import { OPERATIONS_ROWS, type Operations } from '../../core/operations.js';
import { route, type RouteSpec } from '../route.js';

const count = { type: 'integer', minimum: 0 } as const;
const counts = (states: readonly string[]) => ({ type: 'object', required: states, properties: Object.fromEntries(states.map((s) => [s, count])) }) as const;
const ROW = {
  type: 'object',
  required: ['kind', 'id', 'label', 'status', 'knowledge_base', 'error', 'updated_at'],
  properties: {
    kind: { type: 'string', enum: ['memory', 'document'] },
    id: { type: 'string' },
    label: { type: 'string', description: "The memory's text (its first 200 characters) or the document's file name" },
    status: { type: 'string', description: 'A memory: pending or failed; a document: uploaded, processing or failed' },
    knowledge_base: { type: ['string', 'null'], description: "A document's knowledge base; null for a memory" },
    error: { type: ['string', 'null'], description: 'Why its work failed (or last failed before a retry)' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
const QUEUE_DEPTH = {
  type: 'object',
  required: ['queue', 'waiting', 'active', 'delayed', 'failed', 'completed'],
  properties: { queue: { type: 'string', enum: [...QUEUE_NAMES] }, waiting: count, active: count, delayed: count, failed: count, completed: count },
} as const;

/** `GET /v1/operations`: the calling project's background work now. */
export function operationsRoutes({ operations }: { operations: Operations }): RouteSpec[] {
  const view = route({
    method: 'get',
    path: '/v1/operations',
    operationId: 'getOperations',
    summary: `The background work now: the job counts of every queue by state (the server's queues, which every project shares), how many of the calling project's memories (and typed records) are pending, indexed or failed and its documents uploaded, processing, ready or failed, and its pending and failed ones with their reasons (up to ${OPERATIONS_ROWS} of each kind in each list, the latest changed first).`,
    tag: 'Operations',
    auth: 'token',
    responses: {
      200: {
        description: 'Queues and counts',
        schema: {
          type: 'object',
          required: ['queues', 'memories', 'documents', 'pending', 'failed'],
          properties: {
            queues: { type: 'array', items: QUEUE_DEPTH },
            memories: counts(['pending', 'indexed', 'failed']),
            documents: counts(['uploaded', 'processing', 'ready', 'failed']),
            pending: { type: 'array', items: ROW },
            failed: { type: 'array', items: ROW },
          },
        },
      },
    },
    async handler(ctx) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await operations.view(ctx.state.principal.projectId);
    },
  });
  return [view];
}
