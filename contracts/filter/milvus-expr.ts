import type { FilterNode, FilterOp, FilterTarget, Scalar } from './ast.js';
import { valueKind, type ValueKind } from './predicate.js';

export interface MilvusExprOptions {
  /** The JSON field holding the metadata object (default `metadata`). */
  metadataField?: string;
  /** The JSON field holding the metadata's type tags, `metadataTypeTags()` (default `<metadataField>_types`). */
  typesField?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'like', 'is', 'null', 'exists', 'true', 'false', 'iso', 'interval']);
const CMP: Record<Exclude<FilterOp, 'in' | 'contains'>, string> = {
  eq: '==',
  ne: '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};
const TAG: Record<Exclude<ValueKind, 'other'>, string> = { string: 's', number: 'n', boolean: 'b', array: 'a' };

/**
 * Type tags of a metadata object, `key:s|n|b|a` for each key holding a string, finite number,
 * boolean or array. Stored beside the metadata (a JSON array field) and tested with
 * `json_contains`, because Milvus's own JSON comparisons cannot tell these types apart:
 * Milvus Lite evaluates `metadata["k"] == 1` as true for `k: true` (Python's `True == 1`).
 */
export function metadataTypeTags(metadata: Record<string, unknown>): string[] {
  const tags: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    const kind = valueKind(value);
    if (kind && kind !== 'other') tags.push(`${key}:${TAG[kind]}`);
  }
  return tags;
}

/**
 * The filter as a Milvus boolean expression with the semantics documented in filter.ts; `''`
 * for no filter. Every comparison is guarded so it is two-valued — Milvus evaluates a missing
 * JSON key, a JSON null, a null column and some type mismatches as SQL NULL (three-valued), which
 * would make `not` drop rows:
 * - column: `(c is not null && c <op> v)`; `in` as `c in [...]`.
 * - metadata: `(json_contains(<types>, "k:<tag>") && metadata["k"] <op> v)` — the tag checks
 *   presence and type at once; `in` is an OR of `==` (Milvus Lite rejects `in` on JSON paths);
 *   `contains` is `json_contains(metadata["k"], v)` under the array tag.
 * String values are quoted by `milvusString`, numbers written by `milvusNumber`.
 */
export function toMilvusExpr(node: FilterNode | null, options: MilvusExprOptions = {}): string {
  if (!node) return '';
  const metadataField = options.metadataField ?? 'metadata';
  const typesField = options.typesField ?? `${metadataField}_types`;
  identifier(metadataField);
  identifier(typesField);
  const compile = (n: FilterNode): string => {
    switch (n.kind) {
      case 'and':
      case 'or':
        if (n.nodes.length === 0) throw new Error(`An empty ${n.kind} cannot be compiled`);
        return `(${n.nodes.map(compile).join(n.kind === 'and' ? ' && ' : ' || ')})`;
      case 'not':
        return `(not ${compile(n.node)})`;
      case 'cmp':
        return comparison(n.target, n.op, n.value, metadataField, typesField);
    }
  };
  return compile(node);
}

function comparison(target: FilterTarget, op: FilterOp, value: Scalar | Scalar[], metadataField: string, typesField: string): string {
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new Error('An empty "in" list cannot be compiled');
  if (target.kind === 'column') {
    const name = identifier(target.name);
    if (op === 'contains') throw new Error(`"contains" does not apply to the column "${name}"`);
    const test = op === 'in' ? `${name} in [${values.map(literal).join(', ')}]` : `${name} ${CMP[op]} ${literal(values[0] as Scalar)}`;
    return `(${name} is not null && ${test})`;
  }
  const path = `${metadataField}[${milvusString(target.key)}]`;
  const kind = op === 'contains' ? 'array' : valueKind(values[0]);
  if (kind === null || kind === 'other') throw new Error(`Cannot compare metadata with ${String(values[0])}`);
  const guard = `json_contains(${typesField}, ${milvusString(`${target.key}:${TAG[kind]}`)})`;
  let test: string;
  if (op === 'contains') test = `json_contains(${path}, ${literal(values[0] as Scalar)})`;
  else if (op === 'in') test = values.length === 1 ? `${path} == ${literal(values[0] as Scalar)}` : `(${values.map((v) => `${path} == ${literal(v)}`).join(' || ')})`;
  else test = `${path} ${CMP[op]} ${literal(values[0] as Scalar)}`;
  return `(${guard} && ${test})`;
}

function literal(value: Scalar): string {
  if (typeof value === 'string') return milvusString(value);
  if (typeof value === 'number') return milvusNumber(value);
  return value ? 'true' : 'false';
}

/**
 * A Milvus string literal: double-quoted, with `\` `"` and the line breaks and tab escaped as
 * `\\ \" \n \r \t` — the escapes both Milvus's grammar and Milvus Lite's tokenizer know (Lite
 * knows no `\u`). Every other character, control characters included, stands as itself, which
 * both accept. Throws on an unpaired surrogate, which cannot travel as UTF-8.
 */
export function milvusString(value: string): string {
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) {
    throw new Error('A string with an unpaired surrogate cannot be sent to Milvus');
  }
  return `"${value.replace(/[\\"\n\r\t]/g, (ch) => ESCAPES[ch] as string)}"`;
}
const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A Milvus number literal that reads back as the same double: safe integers as digits, other
 * integers in exponent form (digits would overflow Milvus's int64 literals), fractions in JS's
 * shortest round-trip form (`1.5`, `1e-7`); negatives through unary minus. Throws on NaN/±Infinity.
 */
export function milvusNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`${value} cannot be sent to Milvus`);
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? value.toExponential() : String(value);
}

function identifier(name: string): string {
  if (!IDENTIFIER.test(name) || KEYWORDS.has(name.toLowerCase())) throw new Error(`"${name}" is not a Milvus field name`);
  return name;
}
