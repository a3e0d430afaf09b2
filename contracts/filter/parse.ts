import { badRequest, type AppError } from '../../lib/errors.js';
import type { ColumnType, FilterNode, FilterOp, FilterScope, FilterTarget, Scalar } from './ast.js';

// Only type imports from filter.ts: it re-exports this module, and a value import back would be
// a cycle evaluated before its bindings exist.

/** Filters may nest AND/OR/NOT this many levels deep. */
export const MAX_FILTER_DEPTH = 8;
/** At most this many comparisons in one filter. */
export const MAX_FILTER_COMPARISONS = 200;
/** At most this many values in one `in` list. */
export const MAX_IN_VALUES = 1000;
/** What a metadata key may look like (a filter naming another key is rejected). */
export const METADATA_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const LOGICAL: Record<string, 'and' | 'or' | 'not'> = {
  AND: 'and',
  OR: 'or',
  NOT: 'not',
  $and: 'and',
  $or: 'or',
  $not: 'not',
};

/** Operator spellings: mem0 v3 (`eq`) and Pinecone (`$eq`); `nin` is not(in). */
const OPERATORS: Record<string, FilterOp | 'nin'> = {
  eq: 'eq',
  ne: 'ne',
  in: 'in',
  nin: 'nin',
  gt: 'gt',
  gte: 'gte',
  lt: 'lt',
  lte: 'lte',
  contains: 'contains',
  $eq: 'eq',
  $ne: 'ne',
  $in: 'in',
  $nin: 'nin',
  $gt: 'gt',
  $gte: 'gte',
  $lt: 'lt',
  $lte: 'lte',
};
const OPERATOR_LIST = 'eq, ne, in, nin, gt, gte, lt, lte, contains (or $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte)';
const RANGE_OPS = new Set<FilterOp>(['gt', 'gte', 'lt', 'lte']);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2}))?$/;
const MAX_EPOCH_MS = 8.64e15;

/**
 * Parses and validates a filter in mem0's v3 language (also accepting Pinecone's `$`-spellings)
 * into a `FilterNode`; `null`, `undefined` and `{}` mean no filter (`null`).
 *
 * - `{"AND": [f, …]}`, `{"OR": [f, …]}`, `{"NOT": f}` (`NOT: [f, …]` is not(and)), and `$and`,
 *   `$or`, `$not`; an object with several keys is an implicit AND.
 * - `field: scalar` is `eq`; `field: {op: value, …}` with several operators is their AND.
 *   Operators: `eq ne in gt gte lt lte contains`, `$`-prefixed, and `nin`/`$nin` = not(in).
 * - Fields are the scope's columns; metadata keys (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`) are reached
 *   per `scope.metadata`: `root` — any other top-level key; `field` — `metadata: {key: cond}` or
 *   `"metadata.key": cond`; `none` — not at all.
 * - Values: `eq`/`ne` take a string, finite number or boolean (a column's own type); range
 *   operators take a number (a `date` column: an ISO-8601 string with a time zone, a `YYYY-MM-DD`
 *   date meaning UTC midnight, or integer epoch ms — stored as epoch ms); `in` takes 1–1000
 *   values of one type; `contains` takes a string and applies to metadata keys only.
 *
 * Throws `invalid_filter` (400) naming the offending key or operator and its JSON pointer.
 */
export function parseFilter(input: unknown, scope: FilterScope, at = '/filter'): FilterNode | null {
  if (input === null || input === undefined) return null;
  if (isPlainObject(input) && Object.keys(input).length === 0) return null;
  return new Parser(scope).object(input, at, 0);
}

class Parser {
  private comparisons = 0;

  constructor(private readonly scope: FilterScope) {}

  /** A filter object; `depth` counts the AND/OR/NOT levels around it. */
  object(value: unknown, path: string, depth: number): FilterNode {
    if (!isPlainObject(value)) throw fail(`The filter at ${path} must be an object, got ${describe(value)}`, path);
    if (depth > MAX_FILTER_DEPTH) {
      throw fail(`The filter at ${path} is nested deeper than ${MAX_FILTER_DEPTH} levels of AND/OR/NOT`, path);
    }
    const keys = Object.keys(value);
    if (keys.length === 0) throw fail(`Empty filter object at ${path}; give at least one condition`, path);
    return all(keys.flatMap((key) => this.entry(key, value[key], `${path}/${pointerToken(key)}`, depth)));
  }

  private entry(key: string, value: unknown, path: string, depth: number): FilterNode[] {
    const logical = Object.hasOwn(LOGICAL, key) ? LOGICAL[key] : undefined;
    if (logical === 'not') {
      if (Array.isArray(value)) return [{ kind: 'not', node: all(this.list(key, value, path, depth)) }];
      if (!isPlainObject(value)) throw fail(`"${key}" at ${path} must be a filter object or a non-empty array of filters, got ${describe(value)}`, path);
      return [{ kind: 'not', node: this.object(value, path, depth + 1) }];
    }
    if (logical) {
      const nodes = this.list(key, value, path, depth);
      return [all(nodes, logical)];
    }
    if (key.startsWith('$')) {
      throw fail(`Unknown filter operator "${key}" at ${path}; logical operators are AND, OR, NOT ($and, $or, $not)`, path);
    }
    const set = this.scope.sets && Object.hasOwn(this.scope.sets, key) ? this.scope.sets[key] : undefined;
    if (set) return [this.membership(set, key, value, path)];
    const column = Object.hasOwn(this.scope.columns, key) ? this.scope.columns[key] : undefined;
    if (column) return [this.condition({ kind: 'column', name: key, type: column }, key, value, path)];
    if (this.scope.metadata === 'field') {
      if (key === 'metadata') return this.metadataObject(value, path);
      if (key.startsWith('metadata.')) return [this.metadata(key.slice('metadata.'.length), value, path)];
    }
    if (this.scope.metadata === 'root') return [this.metadata(key, value, path)];
    throw fail(`Unknown filter field "${key}" at ${path}; filters may name ${this.allowedFields()}`, path);
  }

  private list(key: string, value: unknown, path: string, depth: number): FilterNode[] {
    if (!Array.isArray(value) || value.length === 0) {
      throw fail(`"${key}" at ${path} must be a non-empty array of filters, got ${describe(value)}`, path);
    }
    return value.map((item, i) => this.object(item, `${path}/${i}`, depth + 1));
  }

  private metadataObject(value: unknown, path: string): FilterNode[] {
    if (!isPlainObject(value) || Object.keys(value).length === 0) {
      throw fail(`"metadata" at ${path} must be an object of metadata keys and conditions, got ${describe(value)}`, path);
    }
    return Object.keys(value).map((key) => this.metadata(key, value[key], `${path}/${pointerToken(key)}`));
  }

  private metadata(key: string, value: unknown, path: string): FilterNode {
    if (!METADATA_KEY_PATTERN.test(key)) {
      throw fail(`Invalid metadata key "${key}" at ${path}; keys match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, path);
    }
    return this.condition({ kind: 'metadata', key }, key, value, path);
  }

  /**
   * A condition on a set field (`sets`), as membership tests of the metadata key holding it:
   * `name` / `{eq|contains: name}` holds it, `{in: [names]}` holds one of them, `ne` and `nin`
   * the negations.
   */
  private membership(key: string, name: string, value: unknown, path: string): FilterNode {
    const target: FilterTarget = { kind: 'metadata', key };
    const holds = (raw: unknown, at: string, op: string): FilterNode => {
      if (typeof raw !== 'string' || raw === '' || LONE_SURROGATE.test(raw)) throw fail(`Operator "${op}" on "${name}" at ${at} needs a name (a non-empty string), got ${describe(raw)}`, at);
      this.comparisons += 1;
      if (this.comparisons > MAX_FILTER_COMPARISONS) throw fail(`The filter has more than ${MAX_FILTER_COMPARISONS} comparisons (limit reached at ${at})`, at);
      return { kind: 'cmp', target, op: 'contains', value: raw };
    };
    if (!isPlainObject(value)) return holds(value, path, 'eq');
    const ops = Object.keys(value);
    if (ops.length === 0) throw fail(`No operator given for "${name}" at ${path}; use eq, ne, in, nin or contains`, path);
    return all(
      ops.map((opKey) => {
        const op = Object.hasOwn(OPERATORS, opKey) ? OPERATORS[opKey] : undefined;
        const at = `${path}/${pointerToken(opKey)}`;
        const raw = value[opKey];
        if (op === 'eq' || op === 'contains') return holds(raw, at, opKey);
        if (op === 'ne') return { kind: 'not', node: holds(raw, at, opKey) };
        if (op === 'in' || op === 'nin') {
          if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_IN_VALUES) {
            throw fail(`Operator "${opKey}" on "${name}" at ${at} needs a non-empty array of at most ${MAX_IN_VALUES} names, got ${describe(raw)}`, at);
          }
          const any = all(raw.map((v, i) => holds(v, `${at}/${i}`, opKey)), 'or');
          return op === 'in' ? any : { kind: 'not', node: any };
        }
        throw fail(`Operator "${opKey}" does not apply to "${name}" at ${path}; use eq, ne, in, nin or contains`, at);
      }),
    );
  }

  private condition(target: FilterTarget, name: string, value: unknown, path: string): FilterNode {
    if (Array.isArray(value)) {
      throw fail(`The value of "${name}" at ${path} is an array; use {"in": [...]} to match any of several values`, path);
    }
    if (!isPlainObject(value)) return this.comparison(target, name, 'eq', value, path, 'eq');
    const ops = Object.keys(value);
    if (ops.length === 0) throw fail(`No operator given for "${name}" at ${path}; use one of ${OPERATOR_LIST}`, path);
    return all(
      ops.map((opKey) => {
        const op = Object.hasOwn(OPERATORS, opKey) ? OPERATORS[opKey] : undefined;
        const opPath = `${path}/${pointerToken(opKey)}`;
        if (!op) throw fail(`Unknown filter operator "${opKey}" at ${path}; use one of ${OPERATOR_LIST}`, opPath);
        if (op === 'nin') return { kind: 'not', node: this.comparison(target, name, 'in', value[opKey], opPath, opKey) };
        return this.comparison(target, name, op, value[opKey], opPath, opKey);
      }),
    );
  }

  private comparison(target: FilterTarget, name: string, op: FilterOp, raw: unknown, path: string, opName: string): FilterNode {
    this.comparisons += 1;
    if (this.comparisons > MAX_FILTER_COMPARISONS) {
      throw fail(`The filter has more than ${MAX_FILTER_COMPARISONS} comparisons (limit reached at ${path})`, path);
    }
    const what = target.kind === 'column' ? `"${name}"` : `metadata key "${name}"`;
    if (op === 'in') {
      if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_IN_VALUES) {
        throw fail(`Operator "${opName}" on ${what} at ${path} needs a non-empty array of at most ${MAX_IN_VALUES} values, got ${describe(raw)}`, path);
      }
      const values = raw.map((v, i) => this.scalar(target, what, 'eq', opName, v, `${path}/${i}`));
      const kind = typeof values[0];
      const odd = values.findIndex((v) => typeof v !== kind);
      if (odd >= 0) {
        throw fail(`Operator "${opName}" on ${what} at ${path} needs values of one type; ${path}/${odd} is a ${typeof values[odd]}, ${path}/0 a ${kind}`, `${path}/${odd}`);
      }
      return { kind: 'cmp', target, op, value: values };
    }
    return { kind: 'cmp', target, op, value: this.scalar(target, what, op, opName, raw, path) };
  }

  /** One validated value for `op` on `target`; `date` columns get epoch ms. */
  private scalar(target: FilterTarget, what: string, op: FilterOp, opName: string, raw: unknown, path: string): Scalar {
    const bad = (needs: string): AppError => fail(`Operator "${opName}" on ${what} at ${path} needs ${needs}, got ${describe(raw)}`, path);
    if (typeof raw === 'string' && LONE_SURROGATE.test(raw)) {
      throw fail(`The string value for ${what} at ${path} contains an unpaired UTF-16 surrogate`, path);
    }
    if (typeof raw === 'number' && !Number.isFinite(raw)) throw bad('a finite number');
    if (op === 'contains') {
      if (target.kind === 'column') {
        throw fail(`Operator "${opName}" applies to metadata keys holding arrays of strings, not to the field ${what} at ${path}`, path);
      }
      if (typeof raw !== 'string') throw bad('a string');
      return raw;
    }
    const type: ColumnType | 'metadata' = target.kind === 'column' ? target.type : 'metadata';
    if (RANGE_OPS.has(op)) {
      if (type === 'date') return epochMs(raw, bad);
      if (type !== 'number' && type !== 'metadata') {
        throw fail(`Operator "${opName}" needs a number, but ${what} at ${path} is a ${type} field`, path);
      }
      if (typeof raw !== 'number') throw bad('a number');
      return raw;
    }
    switch (type) {
      case 'date':
        return epochMs(raw, bad);
      case 'metadata':
        if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') return raw;
        throw bad('a string, number or boolean');
      default:
        if (typeof raw !== type) throw bad(`a ${type}`);
        return raw as Scalar;
    }
  }

  private allowedFields(): string {
    const fields = [...Object.keys(this.scope.columns), ...Object.keys(this.scope.sets ?? {})].map((c) => `"${c}"`);
    if (this.scope.metadata === 'field') fields.push('"metadata"');
    const list = fields.length > 0 ? fields.join(', ') : 'no fields';
    return `${list} and AND, OR, NOT`;
  }
}

/** Epoch ms from an ISO-8601 string with a zone (or a bare UTC date) or an integer number of ms. */
function epochMs(raw: unknown, bad: (needs: string) => AppError): number {
  const needs = 'an ISO-8601 date-time with a time zone (e.g. 2024-05-01T12:00:00Z), a date (2024-05-01) or integer epoch milliseconds';
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || Math.abs(raw) > MAX_EPOCH_MS) throw bad(needs);
    return raw;
  }
  if (typeof raw !== 'string') throw bad(needs);
  const m = ISO_DATE.exec(raw);
  if (!m) throw bad(needs);
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw bad(needs);
  }
  let offset = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2));
    if (hours > 23 || minutes > 59) throw bad(needs);
    offset = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime() - offset;
}

function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/** The nodes joined by `kind`; nested nodes of the same kind are flattened into it (`{AND: [{AND: [a, b]}, c]}` is a AND b AND c). */
function all(nodes: FilterNode[], kind: 'and' | 'or' = 'and'): FilterNode {
  const flat = nodes.flatMap((n) => (n.kind === kind ? n.nodes : [n]));
  return flat.length === 1 ? (flat[0] as FilterNode) : { kind, nodes: flat };
}

function fail(detail: string, path: string): AppError {
  return badRequest('invalid_filter', detail, [{ path, message: detail }]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A JSON pointer reference token (RFC 6901). */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}
