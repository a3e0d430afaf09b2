import { Type } from '@sinclair/typebox';
import { PlainName } from './common.js';

/** `POST /v1/api-keys`. */
export const CREATE_API_KEY = Type.Object(
  { name: Type.Optional(PlainName(128, { description: 'A label for the key.' })) },
  { additionalProperties: false },
);

// Responses

/** A key as the API lists it (never the key itself). */
export const KEY_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    prefix: { type: 'string', description: 'The first characters of the key, to recognise it.' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;
