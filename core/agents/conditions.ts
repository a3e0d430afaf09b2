import { Environment } from '@marcbachmann/cel-js';
import { badRequest } from '../../lib/errors.js';

/**
 * CEL conditions of rules and of flow `condition` nodes. Rules see the turn's input; flow
 * conditions also see what earlier nodes produced.
 *
 * - `message` (string): the latest user message; `messages` (list of {role, content});
 *   `turn` (int, 1 for a conversation's first turn); `user_id` (string, '' when not sent);
 *   `metadata` (map, the chat request's metadata).
 * - flows only: `retrieved` (list of {text, score, filename, document_id}), `tools` (map of
 *   tool name → {status, result}), `answer` (string, the last model answer), `extracted`
 *   (map: {stored, missing}).
 */
export type ConditionScope = 'rule' | 'flow';

/** What a condition is evaluated against. */
export interface ConditionInput {
  message: string;
  messages: Array<{ role: string; content: string }>;
  turn: number;
  user_id: string;
  metadata: Record<string, unknown>;
  retrieved?: Array<Record<string, unknown>>;
  tools?: Record<string, { status: string; result: string }>;
  answer?: string;
  extracted?: Record<string, unknown>;
}

const LIMITS = { maxAstNodes: 2_000, maxDepth: 50, maxListElements: 200, maxMapEntries: 200, maxCallArguments: 8 };

function environment(scope: ConditionScope): Environment {
  const env = new Environment({ homogeneousAggregateLiterals: false, limits: LIMITS })
    .registerVariable('message', 'string')
    .registerVariable('messages', 'list')
    .registerVariable('turn', 'int')
    .registerVariable('user_id', 'string')
    .registerVariable('metadata', 'map');
  if (scope === 'flow') {
    env.registerVariable('retrieved', 'list').registerVariable('tools', 'map').registerVariable('answer', 'string').registerVariable('extracted', 'map');
  }
  return env;
}

const ENVIRONMENTS: Record<ConditionScope, Environment> = { rule: environment('rule'), flow: environment('flow') };

/** A compiled flow argument: its value for an input, as JSON; throws when evaluation fails. */
export type ValueExpression = (input: ConditionInput) => unknown;

/** A compiled condition: true or false for an input; throws when evaluation fails. */
export type Condition = (input: ConditionInput) => boolean;

const compiled = new Map<string, Condition>();
const MAX_CACHED = 5_000;

/** First line of a cel-js error, without its source excerpt. */
const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

/**
 * Compiles a CEL condition, checking its syntax, its variables and that it yields a bool.
 * Throws 400 `invalid_condition` naming `where` (e.g. `/condition`) and what is wrong.
 */
export function compileCondition(expression: string, scope: ConditionScope, where: string): Condition {
  const key = `${scope}\u0000${expression}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const { program, type } = checked(expression, scope, where, 'condition');
  if (type !== 'bool' && type !== 'dyn') throw invalid('condition', where, `it yields ${type}, and a condition must yield bool`);
  const condition: Condition = (input) => {
    const value: unknown = program({ ...input, turn: BigInt(input.turn) });
    if (typeof value !== 'boolean') throw new Error(`the condition yielded ${typeof value}, not a bool`);
    return value;
  };
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(key, condition);
  return condition;
}

/** Compiles a CEL expression of any type (a flow tool argument); 400 `invalid_condition` as above. */
export function compileValue(expression: string, where: string): ValueExpression {
  const { program } = checked(expression, 'flow', where, 'expression');
  return (input) => plain(program({ ...input, turn: BigInt(input.turn) }));
}

const invalid = (what: string, where: string, why: string) =>
  badRequest('invalid_condition', `The ${what} at ${where} is not a valid CEL expression: ${why}.`, [{ path: where, message: why }]);

function checked(expression: string, scope: ConditionScope, where: string, what: string) {
  let program: ReturnType<Environment['parse']>;
  try {
    program = ENVIRONMENTS[scope].parse(expression);
  } catch (err) {
    throw invalid(what, where, reason(err));
  }
  const check = program.check();
  if (!check.valid) throw invalid(what, where, reason(check.error));
  return { program, type: String(check.type) };
}

/** A CEL value as JSON: integers (bigint) become numbers, maps objects. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}
