import { CHUNKING, type Citation, type CreateKnowledgeInput, type DocumentView, type KnowledgeBaseView, type KnowledgeSearchInput } from '../../core/knowledge/knowledge.js';
import { DOCUMENT_LIMITS, sourceTypeOf, TEXT_SOURCE_TYPES, type SourceType } from '../../core/knowledge/documents.js';
import { badRequest } from '../../lib/errors.js';
import { iso } from '../../lib/time.js';
import type { JsonSchema } from '../../lib/validation.js';
import { errorResponses, PAGING_QUERY, projectOf, type RouteContext, type RouteSpec } from '../route.js';
import type { RouteDeps } from './deps.js';

const TAG = 'Knowledge';

/** Knowledge base names, as agents refer to them. */
export const KNOWLEDGE_NAME = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$';

const BASE_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    instructions: { type: 'string' },
    model: { type: 'string' },
    embed_model: { type: 'string' },
    chunk_size: { type: 'integer' },
    chunk_overlap: { type: 'integer' },
    document_count: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const DOCUMENT_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    knowledge_base: { type: 'string' },
    filename: { type: 'string' },
    source_type: { type: 'string', enum: ['text', 'markdown', 'html', 'pdf', 'docx'] },
    size: { type: 'integer', description: 'Bytes.' },
    metadata: { type: 'object' },
    status: { type: 'string', enum: ['uploaded', 'processing', 'ready', 'failed'] },
    chunk_count: { type: 'integer' },
    error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const CITATION = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    score: { type: 'number', description: 'hybrid: reciprocal-rank-fusion score; dense: cosine similarity; keyword: BM25; reranked: relevance 0–1.' },
    document_id: { type: 'string' },
    filename: { type: 'string' },
    chunk_id: { type: 'string' },
    knowledge_base: { type: 'string' },
    start: { type: 'integer', description: "Offset of the passage in the document's extracted text." },
    end: { type: 'integer' },
    heading: { type: ['string', 'null'], description: 'The heading path of the section (Markdown documents).' },
  },
} as const;

const METADATA: JsonSchema = { type: 'object', maxProperties: 32, description: 'Flat values to filter on (metadata.<key>).' };

const SEARCH_PROPS = {
  query: { type: 'string', minLength: 1, maxLength: 4096 },
  top_k: { type: 'integer', minimum: 1, maximum: 50, default: 5 },
  filter: {
    type: 'object',
    description: 'Shared filter language over document_id, filename, source_type and metadata.<key>: {"source_type": "pdf"}, {"metadata.team": {"in": ["a", "b"]}}, AND/OR/NOT.',
  },
  mode: { type: 'string', enum: ['hybrid', 'dense', 'keyword'], default: 'hybrid' },
  rerank: { type: 'boolean', default: false, description: 'Rerank the fused candidates with Cohere (needs COHERE_API_KEY).' },
} as const;

/** Knowledge base fields on create (and in project specs). */
export const KNOWLEDGE_FIELDS = {
  name: { type: 'string', pattern: KNOWLEDGE_NAME },
  instructions: { type: 'string', maxLength: 16_384 },
  model: { type: 'string', minLength: 1, maxLength: 128, description: 'local (default), cohere/<model> or openai/<model>.' },
  embed_model: { type: 'string', minLength: 1, maxLength: 128, description: 'Default local/all-MiniLM-L6-v2.' },
  chunk_size: { type: 'integer', minimum: CHUNKING.minSize, maximum: CHUNKING.maxSize, description: `Characters; default ${CHUNKING.size}.` },
  chunk_overlap: { type: 'integer', minimum: 0, maximum: CHUNKING.maxSize / 2, description: `Characters; default ${CHUNKING.overlap}.` },
} as const;

const showBase = (v: KnowledgeBaseView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });
const showDocument = (v: DocumentView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });

const errors = (extra: Record<number, string> = {}) => errorResponses('No such knowledge base or document in this project', extra);

interface JsonDocument {
  filename: string;
  content: string;
  source_type?: SourceType;
  metadata?: Record<string, unknown>;
}

/** Knowledge bases, their documents, and retrieval. */
export function knowledgeRoutes({ runtime }: RouteDeps): Array<RouteSpec<never, never>> {
  const knowledge = runtime.knowledge;
  const project = projectOf;

  const create: RouteSpec<CreateKnowledgeInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/knowledge',
    operationId: 'createKnowledgeBase',
    summary: 'Create a knowledge base. model is the language model agents answer with from it; embed_model embeds its chunks.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: KNOWLEDGE_FIELDS,
    },
    responses: { 201: { description: 'Created', schema: BASE_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showBase(await knowledge.create(project(ctx), ctx.state.body));
    },
  };

  const list: RouteSpec<undefined, { limit: number; offset: number }> = {
    method: 'get',
    path: '/v1/knowledge',
    operationId: 'listKnowledgeBases',
    summary: 'List knowledge bases, newest first.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: { 200: { description: 'Knowledge bases', schema: { type: 'object', properties: { knowledge_bases: { type: 'array', items: BASE_VIEW } } } } },
    async handler(ctx) {
      ctx.body = { knowledge_bases: (await knowledge.list(project(ctx), ctx.state.query.limit, ctx.state.query.offset)).map(showBase) };
    },
  };

  const get: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: '/v1/knowledge/:name',
    operationId: 'getKnowledgeBase',
    summary: 'Describe a knowledge base; document_count counts its documents in every status.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The knowledge base', schema: BASE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showBase(await knowledge.get(project(ctx), String(ctx.params.name)));
    },
  };

  const remove: RouteSpec<undefined, Record<string, never>> = {
    method: 'delete',
    path: '/v1/knowledge/:name',
    operationId: 'deleteKnowledgeBase',
    summary: 'Delete a knowledge base with its documents and chunks; its vectors are removed in the background.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await knowledge.delete(project(ctx), String(ctx.params.name));
      ctx.status = 204;
    },
  };

  const documentFields = {
    filename: { type: 'string', minLength: 1, maxLength: 255 },
    source_type: { type: 'string', enum: [...TEXT_SOURCE_TYPES, 'pdf', 'docx'] },
    metadata: METADATA,
  } as const;

  const addDocument: RouteSpec<JsonDocument, Record<string, never>> = {
    method: 'post',
    path: '/v1/knowledge/:name/documents',
    operationId: 'addDocument',
    summary: `Add a document: JSON {filename, content, source_type: text | markdown | html} or a multipart upload (field "file": txt, md, html, pdf or docx; optional fields filename, source_type, metadata as JSON). At most ${DOCUMENT_LIMITS.maxBytes} bytes (413 over it), ${DOCUMENT_LIMITS.maxTextChars} characters of text (text or Markdown over it: 400 document_too_large; HTML, PDF or DOCX whose extracted text is over it: failed, never cut) and ${DOCUMENT_LIMITS.maxPerBase} documents per base. Answers 202 with status uploaded; a worker moves it to processing, then ready (chunk_count set) or failed (error set).`,
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['filename', 'content'],
      properties: {
        filename: documentFields.filename,
        content: { type: 'string', minLength: 1 },
        source_type: { type: 'string', enum: [...TEXT_SOURCE_TYPES], default: 'text' },
        metadata: METADATA,
      },
    },
    upload: {
      fields: { type: 'object', additionalProperties: false, properties: documentFields },
      jsonFields: ['metadata'],
      maxBytes: DOCUMENT_LIMITS.maxBytes,
    },
    responses: {
      202: { description: 'Accepted; status uploaded', schema: DOCUMENT_VIEW },
      ...errors({ 409: 'The knowledge base is full', 413: 'The document is too large', 415: 'Neither JSON nor multipart/form-data' }),
    },
    async handler(ctx: RouteContext<JsonDocument, Record<string, never>>) {
      const { upload, body } = ctx.state;
      let input;
      if (upload !== undefined) {
        const filename = body.filename ?? upload.filename;
        if (!filename) throw badRequest('validation_failed', 'The upload has no file name; send one in the field "filename".', [{ path: '/filename', message: 'is required' }]);
        const type = body.source_type ?? sourceTypeOf(filename, upload.mimeType);
        if (type === null) {
          throw badRequest('unsupported_document', `"${filename}" (${upload.mimeType}) is not a supported document: send txt, md, html, pdf or docx, or name its source_type.`, [
            { path: '/source_type', message: 'unsupported file type' },
          ]);
        }
        input = { filename, source_type: type, content: upload.data, metadata: body.metadata };
      } else {
        input = { filename: body.filename, source_type: body.source_type ?? 'text', content: Buffer.from(body.content, 'utf8'), metadata: body.metadata };
      }
      ctx.status = 202;
      ctx.body = showDocument(await knowledge.addDocument(project(ctx), String(ctx.params.name), input));
    },
  };

  const listDocuments: RouteSpec<undefined, { limit: number; offset: number }> = {
    method: 'get',
    path: '/v1/knowledge/:name/documents',
    operationId: 'listDocuments',
    summary: 'List the documents of a knowledge base, newest first.',
    tag: TAG,
    auth: 'token',
    query: { type: 'object', additionalProperties: false, properties: PAGING_QUERY },
    responses: { 200: { description: 'Documents', schema: { type: 'object', properties: { documents: { type: 'array', items: DOCUMENT_VIEW } } } }, ...errors() },
    async handler(ctx) {
      ctx.body = { documents: (await knowledge.listDocuments(project(ctx), String(ctx.params.name), ctx.state.query.limit, ctx.state.query.offset)).map(showDocument) };
    },
  };

  const getDocument: RouteSpec<undefined, Record<string, never>> = {
    method: 'get',
    path: '/v1/knowledge/:name/documents/:docId',
    operationId: 'getDocument',
    summary: 'Get a document and its processing status.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The document', schema: DOCUMENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showDocument(await knowledge.getDocument(project(ctx), String(ctx.params.name), String(ctx.params.docId)));
    },
  };

  const deleteDocument: RouteSpec<undefined, Record<string, never>> = {
    method: 'delete',
    path: '/v1/knowledge/:name/documents/:docId',
    operationId: 'deleteDocument',
    summary: 'Delete a document and its chunks; its vectors are removed in the background.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await knowledge.deleteDocument(project(ctx), String(ctx.params.name), String(ctx.params.docId));
      ctx.status = 204;
    },
  };

  const reprocess: RouteSpec<undefined, Record<string, never>> = {
    method: 'post',
    path: '/v1/knowledge/:name/documents/:docId/reprocess',
    operationId: 'reprocessDocument',
    summary: "Process a document again from its stored file (with the base's current chunking); its chunks are replaced, never duplicated.",
    tag: TAG,
    auth: 'token',
    responses: { 202: { description: 'Accepted; status uploaded', schema: DOCUMENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.status = 202;
      ctx.body = showDocument(await knowledge.reprocess(project(ctx), String(ctx.params.name), String(ctx.params.docId)));
    },
  };

  const searchResponses = { 200: { description: 'Passages, best first', schema: { type: 'object', properties: { results: { type: 'array', items: CITATION } } } }, ...errors() };
  const show = (results: Citation[]) => ({ results });

  const search: RouteSpec<KnowledgeSearchInput, Record<string, never>> = {
    method: 'post',
    path: '/v1/knowledge/:name/search',
    operationId: 'searchKnowledgeBase',
    summary: 'Retrieve passages: dense and BM25 keyword search fused by reciprocal rank (mode hybrid, the default), or either alone; optionally reranked.',
    tag: TAG,
    auth: 'token',
    body: { type: 'object', additionalProperties: false, required: ['query'], properties: SEARCH_PROPS },
    responses: searchResponses,
    async handler(ctx) {
      ctx.body = show(await knowledge.search(project(ctx), [String(ctx.params.name)], ctx.state.body));
    },
  };

  const searchMany: RouteSpec<KnowledgeSearchInput & { knowledge: string[] }, Record<string, never>> = {
    method: 'post',
    path: '/v1/knowledge/search',
    operationId: 'searchKnowledgeBases',
    summary: 'Retrieve passages across several knowledge bases at once (as an agent does), fused into one ranking.',
    tag: TAG,
    auth: 'token',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['query', 'knowledge'],
      properties: { knowledge: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', pattern: KNOWLEDGE_NAME } }, ...SEARCH_PROPS },
    },
    responses: searchResponses,
    async handler(ctx) {
      const { knowledge: names, ...input } = ctx.state.body;
      ctx.body = show(await knowledge.search(project(ctx), names, input));
    },
  };

  return [create, list, searchMany, get, remove, addDocument, listDocuments, getDocument, deleteDocument, reprocess, search] as unknown as Array<RouteSpec<never, never>>;
}
