import { Type } from '@sinclair/typebox';
import { WEBHOOK_EVENTS } from '../../core/webhooks/webhooks.js';
import { PlainName, StringEnum } from './common.js';

const NAME = PlainName(255);
const URL_FIELD = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "http(s) URL to POST events to; held to the agents' tools' address rules (no private, loopback or metadata address unless TOOL_ALLOW_PRIVATE_HOSTS allows it) when saved and on every delivery.",
});
const EVENT_TYPES = Type.Array(StringEnum(WEBHOOK_EVENTS), { minItems: 1, maxItems: WEBHOOK_EVENTS.length, description: `Which memory events to receive: ${WEBHOOK_EVENTS.join(', ')}.` });

/** `POST /api/v1/webhooks/projects/{project_id}`: mem0's create. */
export const CREATE_WEBHOOK = Type.Object({ name: NAME, url: URL_FIELD, event_types: EVENT_TYPES }, { additionalProperties: false });

/** `PUT /api/v1/webhooks/{webhook_id}`: any of the fields; `{}` changes nothing. */
export const UPDATE_WEBHOOK = Type.Object(
  { name: Type.Optional(NAME), url: Type.Optional(URL_FIELD), event_types: Type.Optional(EVENT_TYPES) },
  { additionalProperties: false },
);

// Responses

export const WEBHOOK_VIEW = {
  type: 'object',
  properties: {
    webhook_id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string' },
    project: { type: 'string', description: "The project's id (as /v1/ping/ gives it)" },
    event_types: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENTS] } },
    is_active: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const DELIVERY_VIEW = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    event: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    memory_id: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: 'pending while it is being sent or retried; failed after the last attempt' },
    attempts: { type: 'integer' },
    status_code: { type: ['integer', 'null'], description: "The receiver's last HTTP status; null when it could not be reached" },
    last_error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    delivered_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
