import { Type } from '@sinclair/typebox';
import { MAX_BATCH } from '../../core/memory/rows.js';
import { AnyObject } from './common.js';

const MEMORY_ID = Type.String({ minLength: 1, maxLength: 255, description: 'The id of a memory of this project' });

/** `GET /v1/entities`: its page; without one, every entity (what mem0's clients delete everything by). */
export const ENTITY_PAGE = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

/** `PUT /v1/batch`: mem0's batch update. */
export const UPDATE_MEMORIES_BATCH = Type.Object(
  {
    memories: Type.Array(
      Type.Object(
        { memory_id: MEMORY_ID, text: Type.Optional(Type.String({ minLength: 1, maxLength: 32_768 })), metadata: Type.Optional(AnyObject()) },
        { additionalProperties: false, minProperties: 2, description: 'A memory and its new text and/or metadata' },
      ),
      { minItems: 1, maxItems: MAX_BATCH, description: `At most ${MAX_BATCH}. Changed in one transaction, or (any of them invalid) none.` },
    ),
  },
  { additionalProperties: false },
);

/** `DELETE /v1/batch`: mem0's batch delete. */
export const DELETE_MEMORIES_BATCH = Type.Object(
  {
    memories: Type.Array(Type.Object({ memory_id: MEMORY_ID }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_BATCH,
      description: `At most ${MAX_BATCH}. Deleted in one transaction, or (any of them invalid) none.`,
    }),
  },
  { additionalProperties: false },
);

// Responses

/** An entity as mem0's `GET /v1/entities/` shows it. */
export const ENTITY_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['user', 'agent', 'app', 'run'] },
    total_memories: { type: 'integer', description: 'Its memories valid now (not the versions updates superseded)' },
    pending_memories: {
      type: 'integer',
      description: 'Its memories not searchable yet, waiting to be indexed: every row, versions included, as GET /v3/memories/status/ counts them',
    },
    failed_memories: { type: 'integer', description: 'Its memories that failed indexing (every row, versions included)' },
    owner: { type: 'string', description: 'The project' },
    metadata: { type: 'null' },
    created_at: { type: 'string', format: 'date-time', description: 'When its earliest memory happened' },
    updated_at: { type: 'string', format: 'date-time', description: "Its memories' last write" },
  },
} as const;

/** mem0's answer to a change: a sentence. */
export const MESSAGE = { type: 'object', properties: { message: { type: 'string' } } } as const;
