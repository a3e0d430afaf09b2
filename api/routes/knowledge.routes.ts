import type { DocumentView, Knowledge, KnowledgeBaseView } from '../../core/knowledge/knowledge.js';
import { DOCUMENT_LIMITS, sourceTypeOf } from '../../core/knowledge/documents.js';
import { badRequest } from '../../lib/errors.js';
import { iso } from '../../lib/time.js';
import { errorResponses, route, type RouteSpec } from '../route.js';
import { searchAnswer } from '../search-answer.js';
import { PAGING_QUERY } from '../schemas/common.js';
import {
  ADD_DOCUMENT,
  BASE_VIEW,
  CHUNK_VIEW,
  CITATION,
  RERANK_REPORT,
  CREATE_KNOWLEDGE,
  DOCUMENT_UPLOAD_FIELDS,
  DOCUMENT_VIEW,
  SEARCH_KNOWLEDGE,
  SEARCH_KNOWLEDGE_BASES,
} from '../schemas/knowledge.js';

const TAG = 'Knowledge';

const showBase = (v: KnowledgeBaseView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });
const showDocument = (v: DocumentView) => ({ ...v, created_at: iso(v.created_at), updated_at: iso(v.updated_at) });

const errors = (extra: Record<number, string> = {}) => errorResponses('No such knowledge base or document in this project', extra);

/** Knowledge bases, their documents, and retrieval. */
export function knowledgeRoutes({ knowledge }: { knowledge: Knowledge }): RouteSpec[] {
  const create = route({
    method: 'post',
    path: '/v1/knowledge',
    operationId: 'createKnowledgeBase',
    summary: 'Create a knowledge base. model is the language model agents answer with from it; embed_model embeds its chunks.',
    tag: TAG,
    auth: 'token',
    body: CREATE_KNOWLEDGE,
    responses: { 201: { description: 'Created', schema: BASE_VIEW }, ...errors({ 409: 'The name is taken' }) },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = showBase(await knowledge.create(ctx.state.principal.projectId, ctx.state.body));
    },
  });

  const list = route({
    method: 'get',
    path: '/v1/knowledge',
    operationId: 'listKnowledgeBases',
    summary: 'List knowledge bases, newest first.',
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Knowledge bases', schema: { type: 'object', properties: { knowledge_bases: { type: 'array', items: BASE_VIEW } } } } },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { knowledge_bases: (await knowledge.list(ctx.state.principal.projectId, limit, offset)).map(showBase) };
    },
  });

  const get = route({
    method: 'get',
    path: '/v1/knowledge/:name',
    operationId: 'getKnowledgeBase',
    summary: 'Describe a knowledge base; document_count counts its documents in every status.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The knowledge base', schema: BASE_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showBase(await knowledge.get(ctx.state.principal.projectId, String(ctx.params.name)));
    },
  });

  const remove = route({
    method: 'delete',
    path: '/v1/knowledge/:name',
    operationId: 'deleteKnowledgeBase',
    summary: 'Delete a knowledge base with its documents and chunks; its vectors are removed in the background.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await knowledge.delete(ctx.state.principal.projectId, String(ctx.params.name));
      ctx.status = 204;
    },
  });

  const addDocument = route({
    method: 'post',
    path: '/v1/knowledge/:name/documents',
    operationId: 'addDocument',
    summary: `Add a document: JSON {filename, content, source_type: text | markdown | html} or a multipart upload (field "file": txt, md, html, pdf or docx; optional fields filename, source_type, metadata as JSON). At most ${DOCUMENT_LIMITS.maxBytes} bytes (413 over it), ${DOCUMENT_LIMITS.maxTextChars} characters of text (text or Markdown over it: 400 document_too_large; HTML, PDF or DOCX whose extracted text is over it: failed, never cut) and ${DOCUMENT_LIMITS.maxPerBase} documents per base. Answers 202 with status uploaded; a worker moves it to processing, then ready (chunk_count set) or failed (error set).`,
    tag: TAG,
    auth: 'token',
    body: ADD_DOCUMENT,
    upload: {
      fields: DOCUMENT_UPLOAD_FIELDS,
      jsonFields: ['metadata'],
      maxBytes: DOCUMENT_LIMITS.maxBytes,
    },
    responses: {
      202: { description: 'Accepted; status uploaded', schema: DOCUMENT_VIEW },
      ...errors({ 409: 'The knowledge base is full', 413: 'The document is too large', 415: 'Neither JSON nor multipart/form-data' }),
    },
    async handler(ctx) {
      let input;
      if (ctx.state.upload !== undefined) {
        const { upload, body } = ctx.state;
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
        const { body } = ctx.state;
        input = { filename: body.filename, source_type: body.source_type ?? 'text', content: Buffer.from(body.content, 'utf8'), metadata: body.metadata };
      }
      ctx.status = 202;
      ctx.body = showDocument(await knowledge.addDocument(ctx.state.principal.projectId, String(ctx.params.name), input));
    },
  });

  const listDocuments = route({
    method: 'get',
    path: '/v1/knowledge/:name/documents',
    operationId: 'listDocuments',
    summary: 'List the documents of a knowledge base, newest first.',
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Documents', schema: { type: 'object', properties: { documents: { type: 'array', items: DOCUMENT_VIEW } } } }, ...errors() },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { documents: (await knowledge.listDocuments(ctx.state.principal.projectId, String(ctx.params.name), limit, offset)).map(showDocument) };
    },
  });

  const getDocument = route({
    method: 'get',
    path: '/v1/knowledge/:name/documents/:docId',
    operationId: 'getDocument',
    summary: 'Get a document and its processing status.',
    tag: TAG,
    auth: 'token',
    responses: { 200: { description: 'The document', schema: DOCUMENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.body = showDocument(await knowledge.getDocument(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.docId)));
    },
  });

  const listChunks = route({
    method: 'get',
    path: '/v1/knowledge/:name/documents/:docId/chunks',
    operationId: 'listChunks',
    summary: "List a document's chunks in their order in the document (none until it is ready); each id is the chunk_id its citations carry.",
    tag: TAG,
    auth: 'token',
    query: PAGING_QUERY,
    responses: { 200: { description: 'Chunks', schema: { type: 'object', properties: { chunks: { type: 'array', items: CHUNK_VIEW } } } }, ...errors() },
    async handler(ctx) {
      const { limit, offset } = ctx.state.query;
      ctx.body = { chunks: await knowledge.listChunks(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.docId), limit, offset) };
    },
  });

  const deleteDocument = route({
    method: 'delete',
    path: '/v1/knowledge/:name/documents/:docId',
    operationId: 'deleteDocument',
    summary: 'Delete a document and its chunks; its vectors are removed in the background.',
    tag: TAG,
    auth: 'token',
    responses: { 204: { description: 'Deleted' }, ...errors() },
    async handler(ctx) {
      await knowledge.deleteDocument(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.docId));
      ctx.status = 204;
    },
  });

  const reprocess = route({
    method: 'post',
    path: '/v1/knowledge/:name/documents/:docId/reprocess',
    operationId: 'reprocessDocument',
    summary: "Process a document again from its stored file (with the base's current chunking); its chunks are replaced, never duplicated.",
    tag: TAG,
    auth: 'token',
    responses: { 202: { description: 'Accepted; status uploaded', schema: DOCUMENT_VIEW }, ...errors() },
    async handler(ctx) {
      ctx.status = 202;
      ctx.body = showDocument(await knowledge.reprocess(ctx.state.principal.projectId, String(ctx.params.name), String(ctx.params.docId)));
    },
  });

  const searchResponses = {
    200: { description: 'Passages, best first', schema: { type: 'object', properties: { results: { type: 'array', items: CITATION }, rerank: RERANK_REPORT } } },
    ...errors(),
  };

  const search = route({
    method: 'post',
    path: '/v1/knowledge/:name/search',
    operationId: 'searchKnowledgeBase',
    summary: 'Retrieve passages: dense and BM25 keyword search fused by reciprocal rank (mode hybrid, the default), or either alone; optionally reranked.',
    tag: TAG,
    auth: 'token',
    body: SEARCH_KNOWLEDGE,
    responses: searchResponses,
    async handler(ctx) {
      const { results, rerank } = await knowledge.searchReported(ctx.state.principal.projectId, [String(ctx.params.name)], ctx.state.body);
      ctx.body = searchAnswer(ctx, results, rerank);
    },
  });

  const searchMany = route({
    method: 'post',
    path: '/v1/knowledge/search',
    operationId: 'searchKnowledgeBases',
    summary: 'Retrieve passages across several knowledge bases at once (as an agent does), fused into one ranking.',
    tag: TAG,
    auth: 'token',
    body: SEARCH_KNOWLEDGE_BASES,
    responses: searchResponses,
    async handler(ctx) {
      const { knowledge: names, ...input } = ctx.state.body;
      const { results, rerank } = await knowledge.searchReported(ctx.state.principal.projectId, names, input);
      ctx.body = searchAnswer(ctx, results, rerank);
    },
  });

  return [create, list, searchMany, get, remove, addDocument, listDocuments, getDocument, listChunks, deleteDocument, reprocess, search];
}
