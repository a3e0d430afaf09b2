import { route, type RouteSpec } from '../route.js';

/**
 * `GET /v1/ping`: checks a key and says which project it acts for. Answered from the key cache,
 * without touching the database; mem0's clients call it to validate their key.
 */
export function pingRoutes(): RouteSpec[] {
  const ping = route({
    method: 'get',
    path: '/v1/ping',
    operationId: 'ping',
    summary: 'Check an API key: the project it belongs to.',
    tag: 'API keys',
    auth: 'token',
    responses: {
      200: {
        description: 'The key is valid',
        schema: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: ['ok'] },
            project_id: { type: 'string' },
            project: { type: 'string' },
            org_id: { type: 'string', description: "Cairn has no organisations: each project is its own, so this is the project's id (mem0's Python client needs both ids set)" },
            user_email: { type: 'null', description: "A key belongs to a project, not a person; mem0's clients then keep their own anonymous id" },
          },
        },
      },
      401: { description: 'Missing or invalid key' },
    },
    handler(ctx) {
      const { projectId, projectName } = ctx.state.principal;
      ctx.body = { status: 'ok', project_id: projectId, project: projectName, org_id: projectId, user_email: null };
    },
  });
  return [ping];
}
