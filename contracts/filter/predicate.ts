import type { ColumnType, FilterNode, FilterRow, FilterTarget, Scalar } from './ast.js';

/** The type of a metadata value as filters see it; `null` when absent (missing, null, undefined). */
export type ValueKind = 'string' | 'number' | 'boolean' | 'array' | 'other';

/** How filters type a value (see the semantics in filter.ts); `null` means absent. */
export function valueKind(value: unknown): ValueKind | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isFinite(value) ? 'number' : 'other';
  if (typeof value === 'boolean') return 'boolean';
  return Array.isArray(value) ? 'array' : 'other';
}

/**
 * The filter as an in-memory test of one row, with exactly the semantics documented in
 * filter.ts (and obeyed by `toMilvusExpr`). `null` accepts every row.
 */
export function toPredicate(node: FilterNode | null): (row: FilterRow) => boolean {
  if (!node) return () => true;
  return (row) => evaluate(node, row);
}

function evaluate(node: FilterNode, row: FilterRow): boolean {
  switch (node.kind) {
    case 'and':
      return node.nodes.every((n) => evaluate(n, row));
    case 'or':
      return node.nodes.some((n) => evaluate(n, row));
    case 'not':
      return !evaluate(node.node, row);
    case 'cmp': {
      const actual = read(node.target, row);
      if (actual === null) return false;
      const { op, value } = node;
      switch (op) {
        case 'eq':
          return sameKind(actual, value) && actual === value;
        case 'ne':
          return sameKind(actual, value) && actual !== value;
        case 'in':
          return Array.isArray(value) && value.some((v) => sameKind(actual, v) && actual === v);
        case 'gt':
          return typeof actual === 'number' && typeof value === 'number' && actual > value;
        case 'gte':
          return typeof actual === 'number' && typeof value === 'number' && actual >= value;
        case 'lt':
          return typeof actual === 'number' && typeof value === 'number' && actual < value;
        case 'lte':
          return typeof actual === 'number' && typeof value === 'number' && actual <= value;
        case 'contains':
          return Array.isArray(actual) && actual.some((el) => el === value);
      }
    }
  }
}

function sameKind(actual: unknown, value: Scalar | Scalar[]): boolean {
  return !Array.isArray(value) && valueKind(actual) === valueKind(value);
}

/** The target's value, or `null` when absent or not of the column's type. */
function read(target: FilterTarget, row: FilterRow): unknown {
  if (target.kind === 'metadata') {
    const value: unknown = Object.hasOwn(row.metadata, target.key) ? row.metadata[target.key] : undefined;
    const kind = valueKind(value);
    return kind === null || kind === 'other' ? null : value;
  }
  const value = Object.hasOwn(row.columns, target.name) ? row.columns[target.name] : undefined;
  return columnValue(target.type, value);
}

function columnValue(type: ColumnType, value: Scalar | null | undefined): Scalar | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'date': {
      const ms = typeof value === 'string' ? Date.parse(value) : value;
      return typeof ms === 'number' && Number.isFinite(ms) ? ms : null;
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    default:
      return typeof value === type ? value : null;
  }
}
