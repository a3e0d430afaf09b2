import type { JsonSchema } from '../lib/validation.js';

/** A tool as a language model is offered it: name, what it does, and its arguments' JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  /** `{type: 'object', properties, required}`. */
  parameters: JsonSchema;
}

/** One call the model asked for. `id` pairs it with its result in the next request. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** The arguments as the model gave them (parsed JSON object; `{}` when unparsable). */
  arguments: Record<string, unknown>;
}

/** A passage the model may answer from and cite (a retrieved knowledge chunk). */
export interface Passage {
  /** Stable id within the turn (the chunk id), echoed back in `ModelReply.citations`. */
  id: string;
  text: string;
  document_id: string;
  filename: string;
  score: number;
}

/** A message of the conversation as the model sees it. */
export type ModelMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCallRequest[] }
  | { role: 'tool'; tool_call_id: string; name: string; content: string };

/** Everything one model call gets. */
export interface ModelRequest {
  /** The agent's instructions (system prompt); may be empty. */
  instructions: string;
  /** Earlier turns of the conversation, this turn's user messages, then any tool calls and results of this turn. */
  messages: ModelMessage[];
  /** Retrieved passages to ground the answer; may be empty. */
  documents: Passage[];
  /** Tools the model may call; empty means it must answer. */
  tools: ToolSpec[];
  /** What to answer when the model has nothing grounded to say (used by `local`). */
  fallback: string;
}

/** What one model call returns: either tool calls to run, or the answer. */
export interface ModelReply {
  /** The answer text; '' when the model only asked for tools. */
  text: string;
  /** Calls the model asked for; empty when `text` is the answer. */
  toolCalls: ToolCallRequest[];
  /** Ids (`Passage.id`) of the passages the answer draws on. */
  citations: string[];
  usage: { tokens_in: number; tokens_out: number };
}

/** Options of one call. */
export interface ChatOptions {
  /**
   * Called with pieces of the answer text as they are produced (server-sent events). A model
   * that cannot stream calls it once with the whole text. Never called for tool-call replies.
   */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

/**
 * A chat model with tool calling, named `provider/model` (`local`, `cohere/<model>`,
 * `openai/<model>`). Provider failures throw Cairn errors: unreachable, timeout, 429/5xx and a
 * rejected key → 503; another 4xx → 400 `model_input_rejected`.
 */
export interface LanguageModel {
  readonly model: string;
  chat(request: ModelRequest, options?: ChatOptions): Promise<ModelReply>;
}
