import { Type } from '@sinclair/typebox';

/** A UTC day. */
export const DAY = Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD (a real date).' });

/** `GET /v1/usage`. */
export const USAGE_QUERY = Type.Object({ from: Type.Optional(DAY), to: Type.Optional(DAY) }, { additionalProperties: false });
