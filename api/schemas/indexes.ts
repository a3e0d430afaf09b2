import { Type } from '@sinclair/typebox';
import { METADATA_KEY_PATTERN } from '../../contracts/filter/filter.js';
import { METRICS } from '../../contracts/vector-store.js';
import { INDEX_LIMITS, INDEX_NAME, type DeletionProtection } from '../../core/indexes.js';
import { AnyObject, Dictionary, StringEnum } from './common.js';

/** `deletion_protection` in requests. */
export const PROTECTION = Type.Unsafe<DeletionProtection | boolean>({
  enum: ['enabled', 'disabled', true, false],
  description: '"enabled" (or true) refuses DELETE of the index.',
});

/** Index tags in requests. */
export const TAGS = Dictionary(Type.String({ maxLength: 120 }), {
  maxProperties: INDEX_LIMITS.maxTags,
  propertyNames: { minLength: 1, maxLength: 80 },
  description: 'String labels. On PATCH they merge into the existing tags; a tag set to "" is removed.',
});

const VALUES = Type.Array(Type.Number(), { minItems: 1, maxItems: INDEX_LIMITS.maxDimension });
const VECTOR_ID = Type.String({ minLength: 1, maxLength: INDEX_LIMITS.maxIdLength });
const IDS = Type.Array(VECTOR_ID, { minItems: 1, maxItems: INDEX_LIMITS.batch });
const FILTER = AnyObject({
  description:
    'Metadata filter: {"genre": "drama"}, {"year": {"gte": 2020}}, {"AND": [...]}, {"OR": [...]}, {"NOT": {...}}; operators eq ne in gt gte lt lte contains (Pinecone $-spellings accepted).',
});
const METADATA = AnyObject({
  description: `Flat metadata: keys ${METADATA_KEY_PATTERN.source}, values strings, numbers, booleans or arrays of strings; at most ${INDEX_LIMITS.metadataBytes} bytes as JSON.`,
});

/** `POST /v1/indexes`. */
export const CREATE_INDEX = Type.Object(
  {
    name: Type.String({ pattern: INDEX_NAME, description: 'Lowercase letters, digits and hyphens; at most 45 characters.' }),
    dimension: Type.Optional(Type.Integer({ minimum: 1, maximum: INDEX_LIMITS.maxDimension })),
    metric: Type.Optional(StringEnum(METRICS, { default: 'cosine' })),
    embed: Type.Optional(
      Type.Object(
        {
          model: Type.String({ minLength: 1, maxLength: 128, description: 'provider/model, e.g. local, cohere/embed-v4.0.' }),
          field_map: Type.Optional(
            Type.Object(
              { text: Type.String({ pattern: METADATA_KEY_PATTERN.source, description: 'The record field holding the text; default "text".' }) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    embed_model: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    deletion_protection: Type.Optional(PROTECTION),
    tags: Type.Optional(TAGS),
  },
  { additionalProperties: false },
);

/** `PATCH /v1/indexes/{name}`. */
export const CONFIGURE_INDEX = Type.Object(
  { deletion_protection: Type.Optional(PROTECTION), tags: Type.Optional(TAGS) },
  { additionalProperties: false },
);

/** `POST /v1/indexes/{name}/vectors/upsert`. */
export const UPSERT_VECTORS = Type.Object(
  {
    vectors: Type.Array(Type.Object({ id: VECTOR_ID, values: VALUES, metadata: Type.Optional(METADATA) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: INDEX_LIMITS.batch,
    }),
  },
  { additionalProperties: false },
);

/** `POST /v1/indexes/{name}/records/upsert`. */
export const UPSERT_RECORDS = Type.Object(
  { records: Type.Array(AnyObject(), { minItems: 1, maxItems: INDEX_LIMITS.batch }) },
  { additionalProperties: false },
);

/** `POST /v1/indexes/{name}/query`. */
export const QUERY_INDEX = Type.Object(
  {
    vector: Type.Optional(VALUES),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
    id: Type.Optional(VECTOR_ID),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: INDEX_LIMITS.maxTopK, default: 10 })),
    filter: Type.Optional(FILTER),
    include_values: Type.Optional(Type.Boolean({ default: false })),
    include_metadata: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

/** `POST /v1/indexes/{name}/vectors/fetch`. */
export const FETCH_VECTORS = Type.Object({ ids: IDS }, { additionalProperties: false });

/** `POST /v1/indexes/{name}/vectors/delete`. */
export const DELETE_VECTORS = Type.Object(
  { ids: Type.Optional(IDS), filter: Type.Optional(FILTER), delete_all: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

// Responses

/** An index as the API shows it. */
export const INDEX_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    dimension: { type: 'integer' },
    metric: { type: 'string', enum: [...METRICS] },
    embed_model: { type: ['string', 'null'], description: 'provider/model of a managed index; null for raw vectors.' },
    managed: { type: 'boolean', description: 'Whether text is embedded server-side.' },
    field_map: { type: ['object', 'null'], properties: { text: { type: 'string' } } },
    deletion_protection: { type: 'string', enum: ['enabled', 'disabled'] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
