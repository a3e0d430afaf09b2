import type { Config } from '../lib/config.js';
import type { Embedder } from './embedder.js';
import type { Extractor } from './extractor.js';
import type { LanguageModel } from './language-model.js';
import type { Reranker } from './reranker.js';

/** What Cairn asks of models, and the interface a model of each capability has. */
export interface CapabilityModels {
  embed: Embedder;
  extract: Extractor;
  chat: LanguageModel;
  rerank: Reranker;
}

/** One of embed, extract, chat, rerank. */
export type Capability = keyof CapabilityModels;

/** The providers a model name may start with. */
export type ProviderName = 'local' | 'cohere' | 'openai' | 'http';

/** The settings providers read. */
export type ProviderConfig = Pick<Config, 'cohereApiKey' | 'cohereBaseUrl' | 'cohereEmbed' | 'openaiBaseUrl' | 'openaiApiKey' | 'openaiEmbed' | 'localModelDir' | 'hfEndpoint' | 'pipIndexUrl' | 'localEmbedThreads' | 'localModelDeadlineMs' | 'dataDir' | 'rerankBaseUrl' | 'rerankApiKey' | 'rerankTimeoutMs'>;

/** Tuning for the provider clients; the defaults suit production. */
export interface ProvidersOptions {
  /** Retries of a transient provider answer (408/429/5xx) within one call; default 2. */
  maxRetries?: number;
  /** Per-call timeout of a provider request; default 60 s (reranking: 30 s). */
  timeoutMs?: number;
}

/** A name's canonical form, or why it names no model (`problem: null`: it names none at all). */
export type Naming = { name: string } | { problem: string | null };

/** Why this server cannot use a model: a setting it lacks, or a sentence for the operator. */
export type Unusable = { needs: string } | { problem: string };

/** Builds a provider's model of each capability it has (by the model's name after `provider/`). */
export type ProviderModels = { readonly [C in Capability]?: (model: string) => CapabilityModels[C] };

/** A model provider as the registry uses it: its models, and what they need of this server. */
export interface Provider {
  readonly models: ProviderModels;
  /** What keeps `model` (the canonical name after `provider/`) from being used here; null when nothing does. */
  unusable(capability: Capability, model: string): Unusable | null;
}

/** `provider/model` of a remote provider, or `problem: null` when no model is named (or it holds whitespace). */
export function remoteModelName(provider: ProviderName, model: string | null): Naming {
  return model === null || model === '' || /\s/.test(model) ? { problem: null } : { name: `${provider}/${model}` };
}
