import { Type } from '@sinclair/typebox';
import { MAX_SECRET_LENGTH } from '../../core/secrets.js';

/** `PUT /v1/secrets/{name}`. */
export const PUT_SECRET = Type.Object({ value: Type.String({ minLength: 1, maxLength: MAX_SECRET_LENGTH }) }, { additionalProperties: false });

// Responses

/** A secret as the API shows it: never its value. */
export const SECRET_VIEW = {
  type: 'object',
  properties: { name: { type: 'string' }, created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' } },
  description: 'A secret’s name and dates; its value is never returned.',
} as const;
