import createClient from 'openapi-fetch';
import type { components, paths } from './generated/api';

// The console's only view of the server: the types generated from /openapi.json
// (scripts/openapi-types.ts) and typed calls to the API's own routes. The session cookie
// authenticates them; the header says they come from the console's scripts.

export type { components, paths };

export const CONSOLE_HEADER = 'X-Cairn-Console';

export const api = createClient<paths>({ baseUrl: location.origin, headers: { [CONSOLE_HEADER]: '1' } });

type Json<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'delete', S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Memory = Json<'/v1/memories/{id}', 'get', 200>;
export type HistoryEntry = Json<'/v1/memories/{id}/history', 'get', 200>[number];
export type Entity = NonNullable<Json<'/v1/entities', 'get', 200>['results']>[number];
export type SearchResult = NonNullable<Json<'/v3/memories/search', 'post', 200>['results']>[number];
export type RerankReport = NonNullable<Json<'/v3/memories/search', 'post', 200>['rerank']>;
export type SearchBody = NonNullable<paths['/v3/memories/search']['post']['requestBody']>['content']['application/json'];
export type Session = Json<'/console/api/session', 'get', 200>;
export type SchemaVersion = Json<'/v1/schemas/{name}', 'get', 200>;
export type JsonSchema = NonNullable<SchemaVersion['json_schema']>;
export type TypedRecord = Json<'/v1/records/{schema}/{id}', 'get', 200>;
export type Extracted = Json<'/v1/records/{schema}/extract', 'post', 200> | Json<'/v1/records/{schema}/extract', 'post', 201>;
export type ListBody = NonNullable<paths['/v3/memories']['post']['requestBody']>['content']['application/json'];
export type EntityType = NonNullable<Entity['type']>;
export type KnowledgeBase = Json<'/v1/knowledge/{name}', 'get', 200>;
export type KnowledgeDocument = Json<'/v1/knowledge/{name}/documents/{docId}', 'get', 200>;
export type Chunk = NonNullable<Json<'/v1/knowledge/{name}/documents/{docId}/chunks', 'get', 200>['chunks']>[number];
export type KnowledgeHit = NonNullable<Json<'/v1/knowledge/{name}/search', 'post', 200>['results']>[number];
export type Agent = Json<'/v1/agents/{name}', 'get', 200>;
export type AgentChanges = NonNullable<paths['/v1/agents/{name}']['patch']['requestBody']>['content']['application/json'];
export type ChatResponse = Json<'/v1/agents/{name}/chat', 'post', 200>;
export type RunSummary = NonNullable<Json<'/v1/agents/{name}/runs', 'get', 200>['runs']>[number];
export type RunDetail = Json<'/v1/agents/{name}/runs/{runId}', 'get', 200>;
export const ENTITY_TYPES: readonly EntityType[] = ['user', 'agent', 'app', 'run'];
export const SEARCH_MODES = ['hybrid', 'dense', 'keyword'] as const satisfies ReadonlyArray<SearchBody['mode']>;

/** An answer other than a success: the project's error shape, {detail, code, errors?}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly retryAfter: string | null = null,
    /** A 400's fields at fault: each a JSON pointer into the body sent, with what is wrong there. */
    readonly errors: ReadonlyArray<{ path: string; message: string }> = [],
  ) {
    super(detail);
  }
}

let whenSignedOut: () => void = () => undefined;

/** Called when an API call answers 401: the session ended (signed out, expired, its key revoked). */
export function onSignedOut(listener: () => void): void {
  whenSignedOut = listener;
}

/** The data of a successful call; an ApiError otherwise (a 401 also shows the sign-in page). */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (response.ok) return data as D;
  const body = (typeof error === 'object' && error !== null ? error : {}) as { detail?: unknown; code?: unknown; errors?: unknown };
  if (response.status === 401) whenSignedOut();
  throw new ApiError(
    response.status,
    typeof body.code === 'string' ? body.code : 'error',
    typeof body.detail === 'string' ? body.detail : `${response.status} ${response.statusText}`,
    response.headers.get('Retry-After'),
    Array.isArray(body.errors) ? body.errors.filter((e): e is { path: string; message: string } => typeof e?.path === 'string' && typeof e?.message === 'string') : [],
  );
}

/** The filter that names one entity: {"user_id": "alice"}. */
export const entityFilter = (type: EntityType, id: string): Record<string, string> => ({ [`${type}_id`]: id });

// The project and operations pages
export type ApiKey = NonNullable<Json<'/v1/api-keys', 'get', 200>['api_keys']>[number];
export type CreatedKey = Json<'/v1/api-keys', 'post', 201>;
export type ProjectSettings = Json<'/v1/project/settings', 'get', 200>;
export type UsageReport = Json<'/v1/usage', 'get', 200>;
export type Webhook = Json<'/api/v1/webhooks/projects/{projectId}', 'get', 200>[number];
export type Delivery = NonNullable<Json<'/api/v1/webhooks/{id}/deliveries', 'get', 200>['results']>[number];
export type VectorIndex = NonNullable<Json<'/v1/indexes', 'get', 200>['indexes']>[number];
export type IndexStats = Json<'/v1/indexes/{name}/stats', 'get', 200>;
export type IndexQuery = NonNullable<paths['/v1/indexes/{name}/query']['post']['requestBody']>['content']['application/json'];
export type IndexMatch = NonNullable<Json<'/v1/indexes/{name}/query', 'post', 200>['matches']>[number];
export type OperationsView = Json<'/v1/operations', 'get', 200>;
export type OperationRow = OperationsView['pending'][number];

/** Shows the sign-in page now: the session was ended here (its own key revoked). */
export function signedOut(): void {
  whenSignedOut();
}
