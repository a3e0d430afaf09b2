/** The filter language's face: its syntax tree (`ast.ts`), the parser, and the two compilations. */
export type { ColumnType, FilterNode, FilterOp, FilterRow, FilterScope, FilterTarget, Scalar } from './ast.js';
export { FILTER_OPS } from './ast.js';
export { MAX_FILTER_COMPARISONS, MAX_FILTER_DEPTH, MAX_IN_VALUES, METADATA_KEY_PATTERN, parseFilter } from './parse.js';
export { toPredicate } from './predicate.js';
export { toMilvusExpr } from './milvus-expr.js';
