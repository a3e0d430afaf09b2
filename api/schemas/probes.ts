import { Type } from '@sinclair/typebox';

/** `POST /v1/probes`. */
export const CREATE_PROBE = Type.Object(
  {
    hold_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description: 'How long the worker holds the job before finishing it (simulates slow work). Default 0.',
      }),
    ),
  },
  { additionalProperties: false },
);

// Responses

/** A probe as the API shows it. */
export const PROBE_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'done'] },
    hold_ms: { type: 'integer' },
    attempts: { type: 'integer', description: 'Times a worker started the job.' },
    processed_by: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    processed_at: { type: ['string', 'null'], format: 'date-time' },
    latency_ms: { type: ['integer', 'null'], description: 'From the write to the worker finishing.' },
  },
} as const;
