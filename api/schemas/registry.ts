import { Type } from '@sinclair/typebox';
import { MAX_VERSION_LENGTH } from '../../core/registry/registry.js';
import { AnyObject, StringEnum } from './common.js';

const MAX_TEXT = 10_000;

/** `POST /projects/{owner}/{project}/versions`. */
export const PUBLISH_VERSION = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: MAX_VERSION_LENGTH, description: 'A semantic version, e.g. 1.2.0 or 2.0.0-beta.1.' }),
    spec: AnyObject({ description: 'The project spec; returned as given (keys in canonical order) by the pull operation.' }),
    release_notes: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
  },
  { additionalProperties: false },
);

/** `POST /projects/{owner}/{project}/versions/{version}/deprecate`: the reason, under any of its three names. */
export const DEPRECATE_VERSION = Type.Object(
  {
    reason: Type.Optional(Type.String({ maxLength: MAX_TEXT, description: 'Why consumers should move off this version.' })),
    deprecation_reason: Type.Optional(Type.String({ maxLength: MAX_TEXT, description: 'Same as reason.' })),
    message: Type.Optional(Type.String({ maxLength: MAX_TEXT, description: 'Same as reason.' })),
  },
  { additionalProperties: false },
);

/** `PUT /projects/{owner}/{project}/members/{name}`. */
export const PUT_MEMBER = Type.Object(
  { access: Type.Optional(StringEnum(['write'], { description: 'The only access level a member can have.' })) },
  { additionalProperties: false },
);

// Responses

/** A published version as the API shows it. */
export const VERSION_VIEW = {
  type: 'object',
  description: 'A published version (its spec is returned by the pull operation).',
  properties: {
    id: { type: 'string' },
    project_id: { type: 'string' },
    owner: { type: 'string' },
    project: { type: 'string' },
    version: { type: 'string', description: 'Semantic version, normalised (v1.2.3 → 1.2.3; build metadata dropped).' },
    spec_digest: { type: 'string', description: 'sha256: and the hex SHA-256 of the canonical JSON of the spec (keys sorted, no whitespace).' },
    status: { type: 'string', enum: ['published'], description: 'Deprecation leaves a version published.' },
    release_notes: { type: 'string' },
    published_by: { type: 'string' },
    published_at: { type: 'string', format: 'date-time' },
    deprecated: { type: 'boolean' },
    deprecated_at: { type: ['string', 'null'], format: 'date-time' },
    deprecation_reason: { type: ['string', 'null'] },
  },
} as const;

/** A member as the API shows it. */
export const MEMBER_VIEW = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    access: { type: 'string', enum: ['write'] },
    added_by: { type: 'string' },
    added_at: { type: 'string', format: 'date-time' },
  },
} as const;
