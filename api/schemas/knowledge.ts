import { Type } from '@sinclair/typebox';
import { CHUNKING } from '../../core/knowledge/knowledge.js';
import { TEXT_SOURCE_TYPES } from '../../core/knowledge/documents.js';
import { AnyObject, StringEnum } from './common.js';

/** Knowledge base names, as agents refer to them. */
export const KNOWLEDGE_NAME = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$';

/** Knowledge base fields on create (and in project specs). */
export const KNOWLEDGE_FIELDS = {
  name: Type.String({ pattern: KNOWLEDGE_NAME }),
  instructions: Type.Optional(Type.String({ maxLength: 16_384 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'local (default), cohere/<model> or openai/<model>.' })),
  embed_model: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Default local/all-MiniLM-L6-v2.' })),
  chunk_size: Type.Optional(
    Type.Integer({ minimum: CHUNKING.minSize, maximum: CHUNKING.maxSize, description: `Characters; default ${CHUNKING.size}.` }),
  ),
  chunk_overlap: Type.Optional(Type.Integer({ minimum: 0, maximum: CHUNKING.maxSize / 2, description: `Characters; default ${CHUNKING.overlap}.` })),
};

/** `POST /v1/knowledge`. */
export const CREATE_KNOWLEDGE = Type.Object(KNOWLEDGE_FIELDS, { additionalProperties: false });

const METADATA = AnyObject({ maxProperties: 32, description: 'Flat values to filter on (metadata.<key>).' });
const FILENAME = Type.String({ minLength: 1, maxLength: 255 });

/** `POST /v1/knowledge/{name}/documents` as JSON. */
export const ADD_DOCUMENT = Type.Object(
  {
    filename: FILENAME,
    content: Type.String({ minLength: 1 }),
    source_type: Type.Optional(StringEnum(TEXT_SOURCE_TYPES, { default: 'text' })),
    metadata: Type.Optional(METADATA),
  },
  { additionalProperties: false },
);

/** The other fields of a document upload (multipart/form-data). */
export const DOCUMENT_UPLOAD_FIELDS = Type.Object(
  {
    filename: Type.Optional(FILENAME),
    source_type: Type.Optional(StringEnum([...TEXT_SOURCE_TYPES, 'pdf', 'docx'])),
    metadata: Type.Optional(METADATA),
  },
  { additionalProperties: false },
);

const SEARCH_FIELDS = {
  query: Type.String({ minLength: 1, maxLength: 4096 }),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 5 })),
  filter: Type.Optional(
    AnyObject({
      description:
        'Shared filter language over document_id, filename, source_type and metadata.<key>: {"source_type": "pdf"}, {"metadata.team": {"in": ["a", "b"]}}, AND/OR/NOT.',
    }),
  ),
  mode: Type.Optional(StringEnum(['hybrid', 'dense', 'keyword'], { default: 'hybrid' })),
  rerank: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        "Rerank the candidates with the server's reranker (RERANK_MODEL: cohere/<model> or http/<model> at RERANK_BASE_URL); when it fails or is late (RERANK_TIMEOUT_MS) the search's own order is kept and the answer's rerank says so.",
    }),
  ),
};

/** `POST /v1/knowledge/{name}/search`. */
export const SEARCH_KNOWLEDGE = Type.Object(SEARCH_FIELDS, { additionalProperties: false });

/** `POST /v1/knowledge/search`: the same across several bases. */
export const SEARCH_KNOWLEDGE_BASES = {
  // `required` in the order it has always been reported in
  ...Type.Object(
    { knowledge: Type.Array(Type.String({ pattern: KNOWLEDGE_NAME }), { minItems: 1, maxItems: 20 }), ...SEARCH_FIELDS },
    { additionalProperties: false },
  ),
  required: ['query', 'knowledge'],
};

// Responses

/** A knowledge base as the API shows it. */
export const BASE_VIEW = {
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

/** A document as the API shows it. */
export const DOCUMENT_VIEW = {
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

/** What a search asked to rerank says of its reranking. */
export const RERANK_REPORT = {
  type: 'object',
  description: 'Present when the search asked to rerank.',
  properties: {
    model: { type: ['string', 'null'], description: 'The reranking model; null when the server has none.' },
    applied: { type: 'boolean', description: "true: the results are in the reranker's order and scores; false: in the search's own order." },
    reason: { type: 'string', description: "Why the search's own order was kept." },
  },
  required: ['model', 'applied'],
} as const;

/** A retrieved passage. */
export const CITATION = {
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
    found_by: {
      type: 'array',
      items: { type: 'string', enum: ['dense', 'keyword'] },
      description: "The signals whose candidates held the passage (hybrid: either or both; dense or keyword mode: that one): 'dense' (its vector near the query's), 'keyword' (BM25 on its words).",
    },
  },
} as const;

/** A chunk of a document. */
export const CHUNK_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The chunk_id of the citations that quote it.' },
    document_id: { type: 'string' },
    ordinal: { type: 'integer', description: 'Its place in the document, from 0.' },
    text: { type: 'string' },
    start: { type: 'integer', description: "Offset of the chunk in the document's extracted text." },
    end: { type: 'integer' },
    heading: { type: ['string', 'null'], description: 'The heading path of the section (Markdown documents).' },
  },
} as const;
