/**
 * Cairn's one filter language (mem0 v3 style), shared by memory search, knowledge search and
 * index queries. A filter is parsed and validated once into a `FilterNode`; the node is then
 * compiled to a Milvus boolean expression (`milvus-expr.ts`) or to an in-memory predicate
 * (`predicate.ts`). Both compilations give the same answer on the same data.
 *
 * Semantics (two-valued; no SQL NULL anywhere):
 * - A comparison reads its target: a column value, or the metadata object's own key. `null`,
 *   `undefined` and a missing key are *absent*. A value's type is string, number (finite),
 *   boolean, array, or other (objects; never matched). `date` columns hold epoch ms numbers.
 * - `eq v` / `ne v`: the target is present, has v's type, and equals / differs from v. So `ne`
 *   is false on an absent target or one of another type (`{"n": {"ne": 5}}` does not match
 *   `n: "5"`, `n: true` or a row without `n`). Booleans and numbers are distinct types.
 * - `in [v…]`: present, of the values' (single) type, and equal to one of them.
 * - `gt gte lt lte n`: present number (number or date column) compared with n.
 * - `contains s`: the metadata value is an array with an element equal to s. Array membership
 *   only, never a substring test (Milvus Lite's LIKE has no escape for `%` and `_`, so a
 *   substring could not be matched the same way everywhere); not allowed on columns.
 * - `not f` is the plain negation of f's result, so `{"NOT": {"k": "v"}}` matches rows without
 *   `k`; `nin`/`$nin` is not(in) and matches them too. `and`/`or` are the usual ones.
 */

/** Comparison operators. */
export const FILTER_OPS = ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte', 'contains'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export type Scalar = string | number | boolean;

/**
 * How a scalar column is typed. `date` columns hold epoch milliseconds; filters may give an ISO
 * 8601 string or a number, and the parser turns either into milliseconds.
 */
export type ColumnType = 'string' | 'number' | 'boolean' | 'date';

/**
 * What a filter may name in one use.
 * - `columns`: fixed scalar fields (e.g. user_id, schema, created_at), by name.
 * - `metadata`: where free-form metadata keys are allowed:
 *   `root`  — any other top-level key is a metadata key (index queries, Pinecone style);
 *   `field` — metadata keys are reached through `metadata: {key: …}` or `"metadata.key"`;
 *   `none`  — no metadata keys.
 */
export interface FilterScope {
  columns: Record<string, ColumnType>;
  metadata: 'root' | 'field' | 'none';
  /**
   * Fields holding a set of names (a memory's `categories`), each kept under a reserved metadata
   * key (one no filter can name, e.g. `$categories`): `eq`/`contains` a name tests membership,
   * `in` any of several, `ne`/`nin` their negation.
   */
  sets?: Record<string, string>;
}

/** What a comparison reads: a scalar column, or one top-level key of the metadata object. */
export type FilterTarget = { kind: 'column'; name: string; type: ColumnType } | { kind: 'metadata'; key: string };

/** A parsed, validated filter. */
export type FilterNode =
  | { kind: 'and'; nodes: FilterNode[] }
  | { kind: 'or'; nodes: FilterNode[] }
  | { kind: 'not'; node: FilterNode }
  | { kind: 'cmp'; target: FilterTarget; op: FilterOp; value: Scalar | Scalar[] };

/**
 * The row a predicate is evaluated against: column values by name (`date` columns as epoch ms;
 * an ISO-8601 string is also read), and the metadata object. Metadata values are strings,
 * finite numbers, booleans, or arrays of strings.
 */
export interface FilterRow {
  columns: Record<string, Scalar | null | undefined>;
  metadata: Record<string, unknown>;
}
