import { Type } from '@sinclair/typebox';
import { MEMORY_FEEDBACK, type MemoryFeedback } from '../../core/memory/memories.js';
import { AnyObject, Nullable } from './common.js';

/** Longest feedback reason kept. */
const MAX_REASON = 2_000;

/** `POST /v1/feedback`: mem0's feedback on one memory; null (or leaving a field out) withdraws it. */
export const MEMORY_FEEDBACK_BODY = Type.Object(
  {
    memory_id: Type.String({ minLength: 1, maxLength: 64, description: 'The memory the feedback is about.' }),
    feedback: Type.Optional(
      Type.Unsafe<MemoryFeedback | null>({
        type: ['string', 'null'],
        enum: [...MEMORY_FEEDBACK, null],
        description: 'POSITIVE (useful), NEGATIVE (not useful), VERY_NEGATIVE (not useful at all), or null to withdraw it.',
      }),
    ),
    feedback_reason: Type.Optional(Nullable(Type.String({ maxLength: MAX_REASON, description: `Why, in at most ${MAX_REASON} characters.` }))),
  },
  { additionalProperties: false },
);

/** `POST /v1/summary`: whose memories to summarise, in the filter language of memory lists. */
export const MEMORY_SUMMARY_BODY = Type.Object(
  { filters: Type.Optional(AnyObject({ description: 'Must name an entity (user_id, agent_id, app_id or run_id), as a memory list does.' })) },
  { additionalProperties: false },
);

/** What feedback on a memory answers. */
export const FEEDBACK_VIEW = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    id: { type: 'string', description: 'The memory' },
    feedback: { type: ['string', 'null'], enum: [...MEMORY_FEEDBACK, null] },
    feedback_reason: { type: ['string', 'null'] },
  },
} as const;

/** What a summary answers. */
export const SUMMARY_VIEW = {
  type: 'object',
  properties: {
    summary: { type: 'string', description: "The memories' statements, newest first; empty when there are none" },
    memory_count: { type: 'integer', description: 'How many memories it covers' },
  },
} as const;
