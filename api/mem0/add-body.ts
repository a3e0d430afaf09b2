import { badRequest } from '../../lib/errors.js';
import { parseCustomCategories } from '../../core/memory/categories.js';
import { readExportSchema } from '../../core/memory/export-schema.js';
import type { AddMemoriesInput } from '../../core/memory/memories.js';
import { ENTITY_IDS, type EntityIds } from '../../core/memory/rows.js';

/** A mem0 add as its clients send it: `AddMemoriesInput`, the entity ids perhaps under `filters`, and mem0's add options. */
export type Mem0AddBody = AddMemoriesInput & { filters?: EntityIds } & Record<string, unknown>;

/**
 * The add Cairn performs for a mem0 add body: entity ids from `filters` (mem0's v3 clients put
 * them there) joined with the top-level ones, which may repeat them but not contradict them;
 * `custom_categories` as the memories' catalogue; `custom_instructions` (and, for an agent's
 * memories, `agent_custom_instructions`) as the instructions of the model picking the facts;
 * `structured_data_schema` read as the values to extract onto the memories (400 `invalid_schema`).
 */
export function mem0Add(body: Mem0AddBody): AddMemoriesInput {
  const { messages, metadata, timestamp, infer, expiration_date, filters = {} } = body;
  const input: AddMemoriesInput = { messages, ...mem0Owner(body, filters) };
  if (metadata !== undefined) input.metadata = metadata;
  if (body.custom_categories !== undefined) input.categories = parseCustomCategories(body.custom_categories);
  if (body.structured_data_schema !== undefined) input.structuredSchema = readExportSchema(body.structured_data_schema);
  if (expiration_date !== undefined) input.expiration_date = expiration_date;
  if (timestamp !== undefined) input.timestamp = timestamp;
  if (infer !== undefined) input.infer = infer;
  const instructions = [body.custom_instructions, input.agent_id !== undefined ? body.agent_custom_instructions : undefined]
    .filter((text): text is string => typeof text === 'string' && text.trim() !== '')
    .join('\n');
  if (instructions !== '') input.instructions = instructions;
  return input;
}

/** The entity ids of a mem0 request: the top-level ones joined with those under `filters`, which may repeat them but not contradict them. */
export function mem0Owner(top: EntityIds, filters: EntityIds): EntityIds {
  const owner: EntityIds = {};
  for (const key of ENTITY_IDS) {
    const given = top[key];
    const filtered = filters[key];
    if (given !== undefined && filtered !== undefined && given !== filtered) {
      throw badRequest('validation_failed', `${key} is "${given}" but filters.${key} is "${filtered}"; name the owner once, or the same in both.`);
    }
    const value = given ?? filtered;
    if (value !== undefined) owner[key] = value;
  }
  return owner;
}
