import type { JsonSchema } from '../lib/validation.js';
import { isRegistryPath } from './middleware/errors.js';
import { ERROR_SCHEMA, REGISTRY_ERROR, type ResponseSpec, type RouteCatalog, type RouteSpec } from './route.js';

/**
 * The OpenAPI 3.1 document, generated from the same route specs (and so the same ajv schemas)
 * that validate requests: what is documented is what is enforced.
 */
export function buildOpenApi(catalog: RouteCatalog, version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of catalog.routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const queryParams = parametersOf(route.query, 'query');
    const headerParams = parametersOf(route.headers, 'header');
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters: [...pathParams, ...queryParams, ...headerParams],
      responses: Object.fromEntries(
        Object.entries(withCommonErrors(route)).map(([status, r]) => [
          status,
          r.schema
            ? {
                description: r.description,
                content: { 'application/json': { schema: r.schema }, ...(r.eventStream ? { 'text/event-stream': { schema: SSE_EVENT } } : {}) },
              }
            : { description: r.description },
        ]),
      ),
      security: route.auth === 'token' ? [{ apiKey: [] }] : route.auth === 'admin' ? [{ adminToken: [] }] : route.auth === 'oidc' ? [{ idToken: [] }] : [],
    };
    if (route.body) {
      const content: Record<string, { schema: JsonSchema }> = { 'application/json': { schema: route.body } };
      if (route.mergePatch) content['application/merge-patch+json'] = { schema: route.body };
      if (route.upload) {
        const fields = route.upload.fields as { properties?: Record<string, unknown>; required?: string[] };
        content['multipart/form-data'] = {
          schema: {
            type: 'object',
            required: ['file', ...(fields.required ?? [])],
            properties: { file: { type: 'string', format: 'binary', description: `At most ${route.upload.maxBytes} bytes.` }, ...(fields.properties ?? {}) },
          },
        };
      }
      operation.requestBody = { required: false, content };
    }
    paths[path] = { ...(paths[path] ?? {}), [route.method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cairn',
      version,
      description:
        'Agents with typed long-term memory, knowledge bases and vector indexes. Every path also accepts a trailing slash. Errors on /v1 and /v3 are {detail, code, errors?}.',
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <API_KEY>' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        idToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An OIDC ID token (registry paths, /projects/…)' },
      },
    },
    paths,
  };
}

/** One server-sent event: its name and its data (JSON text). */
const SSE_EVENT: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: { event: { type: 'string', enum: ['delta', 'response', 'error'] }, data: { type: 'string', description: 'JSON' }, id: { type: 'string' } },
};

/**
 * The errors every operation of a kind can answer, added where a route does not describe them
 * itself: 400 (every operation validates its query string, and its body when it takes one), 401
 * (authenticated operations), 413 and 415 (operations that read a body).
 */
function withCommonErrors(route: RouteSpec): Record<number, ResponseSpec> {
  const responses: Record<number, ResponseSpec> = { ...route.responses };
  const schema = isRegistryPath(route.path) ? REGISTRY_ERROR : ERROR_SCHEMA;
  const add = (status: number, description: string) => {
    responses[status] ??= { description, schema };
  };
  add(400, 'Invalid input');
  if (route.auth === 'token') add(401, 'Missing or invalid API key');
  if (route.auth === 'admin') add(401, 'Missing or invalid admin token');
  if (route.body) {
    add(413, 'The body is over the size limit');
    add(415, route.upload ? 'Neither JSON nor multipart/form-data' : 'The body is not JSON');
  }
  return responses;
}

/** The OpenAPI parameters `in` the query string or the headers that an object schema declares, each with its schema. */
function parametersOf(schema: JsonSchema | undefined, where: 'query' | 'header'): Array<Record<string, unknown>> {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}
