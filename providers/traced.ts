import { inSpan, SpanKind, type Span } from '../lib/tracing.js';
import type { Embedder } from './embedder.js';
import type { Extractor } from './extractor.js';
import type { LanguageModel } from './language-model.js';
import type { Capability, CapabilityModels } from './provider.js';
import type { Reranker } from './reranker.js';

/** The GenAI semantic conventions' operation of each capability (rerank has none of its own). */
const OPERATIONS: Readonly<Record<Capability, string>> = { embed: 'embeddings', extract: 'chat', chat: 'chat', rerank: 'rerank' };

/**
 * Runs one model call in a client span named and described as the OpenTelemetry GenAI semantic
 * conventions say (`chat gpt-4o-mini`: operation, provider, requested model), so a tracing
 * backend shows it as a model call. `more` names what the call adds (a Cairn method, token usage).
 */
function modelCall<T>(capability: Capability, name: string, method: string, call: () => Promise<T>, more?: (result: T, span: Span) => void): Promise<T> {
  const slash = name.indexOf('/');
  const provider = slash === -1 ? name : name.slice(0, slash);
  const model = slash === -1 ? name : name.slice(slash + 1);
  const operation = OPERATIONS[capability];
  const attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': provider,
    // the attribute's name before the conventions renamed it, still what many backends read
    'gen_ai.system': provider,
    'gen_ai.request.model': model,
    'cairn.model.method': method,
  };
  return inSpan(`${operation} ${model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const result = await call();
    more?.(result, span);
    return result;
  });
}

const embedder = (inner: Embedder, name: string): Embedder => ({
  model: inner.model,
  maxBatch: inner.maxBatch,
  dimension: () => inner.dimension(),
  embed: (texts, inputType) => modelCall('embed', name, 'embed', () => inner.embed(texts, inputType)),
});

const extractor = (inner: Extractor, name: string): Extractor => ({
  model: inner.model,
  extract: (schema, input) => modelCall('extract', name, 'extract', () => inner.extract(schema, input)),
  facts: (messages, instructions) => modelCall('extract', name, 'facts', () => inner.facts(messages, instructions)),
  decide: (facts) => modelCall('extract', name, 'decide', () => inner.decide(facts)),
});

const languageModel = (inner: LanguageModel, name: string): LanguageModel => ({
  model: inner.model,
  chat: (request, options) =>
    modelCall('chat', name, 'chat', () => inner.chat(request, options), (reply, span) => {
      span.setAttributes({
        'gen_ai.usage.input_tokens': reply.usage.tokens_in,
        'gen_ai.usage.output_tokens': reply.usage.tokens_out,
        'gen_ai.response.finish_reasons': [reply.toolCalls.length > 0 ? 'tool_calls' : 'stop'],
      });
    }),
});

const reranker = (inner: Reranker, name: string): Reranker => ({
  model: inner.model,
  rerank: (query, documents, topN) => modelCall('rerank', name, 'rerank', () => inner.rerank(query, documents, topN)),
});

const WRAPPERS: { readonly [C in Capability]: (inner: CapabilityModels[C], name: string) => CapabilityModels[C] } = {
  embed: embedder,
  extract: extractor,
  chat: languageModel,
  rerank: reranker,
};

/** `model` with each of its calls in a GenAI client span (for the registry to hand out while tracing is on). */
export function tracedModel<C extends Capability>(capability: C, name: string, model: CapabilityModels[C]): CapabilityModels[C] {
  return (WRAPPERS[capability] as (inner: CapabilityModels[C], name: string) => CapabilityModels[C])(model, name);
}
