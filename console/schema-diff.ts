import type { JsonSchema } from './api';

/** One difference between two versions of a record schema: a property added, removed or changed, or the schema's own keywords. */
export interface FieldDiff {
  /** The property's name; "(schema)" for the schema's own keywords (title, description, additionalProperties). */
  field: string;
  kind: 'added' | 'removed' | 'changed';
  /** What differs, each as it reads in the older and the newer version ("—" when absent). */
  aspects: Array<{ aspect: string; before: string; after: string }>;
}

export const SCHEMA_ITSELF = '(schema)';
const ABSENT = '—';
const OWN_KEYWORDS = new Set(['type', 'properties', 'required']);

type Definition = Record<string, unknown>;

const show = (value: unknown): string => (value === undefined ? ABSENT : typeof value === 'string' ? value : JSON.stringify(value));

/** The aspects in which two objects differ, key by key. */
function aspects(before: Definition, after: Definition): FieldDiff['aspects'] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((aspect) => ({ aspect, before: show(before[aspect]), after: show(after[aspect]) }));
}

/**
 * The field-by-field difference from `before` to `after`: each property added, removed or
 * changed (its type, enum, items, description, or whether it is required), in the order of the
 * newer version's properties, then the removed ones; then the schema's own keywords.
 */
export function diffSchemas(before: JsonSchema, after: JsonSchema): FieldDiff[] {
  const oldProps = (before.properties ?? {}) as Record<string, Definition>;
  const newProps = (after.properties ?? {}) as Record<string, Definition>;
  const oldRequired = new Set(before.required ?? []);
  const newRequired = new Set(after.required ?? []);
  // whether a property is required is an aspect only where either version requires it
  const withRequired = (definition: Definition | undefined, field: string, required: Set<string>): Definition =>
    definition === undefined ? {} : oldRequired.has(field) || newRequired.has(field) ? { ...definition, required: required.has(field) ? 'yes' : 'no' } : definition;

  const names = [...Object.keys(newProps), ...Object.keys(oldProps).filter((n) => !(n in newProps))];
  const diffs: FieldDiff[] = [];
  for (const field of names) {
    const was = oldProps[field];
    const is = newProps[field];
    const changes = aspects(withRequired(was, field, oldRequired), withRequired(is, field, newRequired));
    if (changes.length === 0) continue;
    diffs.push({ field, kind: was === undefined ? 'added' : is === undefined ? 'removed' : 'changed', aspects: changes });
  }
  const own = (schema: JsonSchema): Definition => Object.fromEntries(Object.entries(schema).filter(([k]) => !OWN_KEYWORDS.has(k)));
  const itself = aspects(own(before), own(after));
  if (itself.length > 0) diffs.push({ field: SCHEMA_ITSELF, kind: 'changed', aspects: itself });
  return diffs;
}

/** A property's type as a person reads it: "string", "one of a, b", "list of string". */
export function typeOf(definition: Definition | undefined): string {
  if (!definition) return ABSENT;
  if (Array.isArray(definition.enum)) return `one of ${definition.enum.map(String).join(', ')}`;
  const items = definition.items as Definition | undefined;
  if (definition.type === 'array') return `list of ${show(items?.type)}`;
  return show(definition.type);
}
