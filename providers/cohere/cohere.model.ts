import type { Cohere } from 'cohere-ai';
import type { AppError } from '../../lib/errors.js';
import { unavailable } from '../../lib/errors.js';
import type { CohereApi } from './client.js';
import type { ChatOptions, LanguageModel, ModelReply, ModelRequest, ToolCallRequest } from '../language-model.js';
import { functionTools, parseArguments } from '../function-tools.js';

/**
 * Cohere's v2 chat API (`POST /v2/chat`) with tool use and grounded generation: the
 * instructions as the system message, the passages as `documents` (`{id, data: {title, text}}`)
 * so Cohere's own citations name the passages, tools in v2 function format, earlier tool calls
 * as assistant `tool_calls` and their results as `tool` messages holding one document each
 * (a JSON object as is, anything else as `{result}`). With `onText` the answer streams
 * (`stream: true`), and its content deltas are passed on as they come.
 *
 * Citations are the distinct document sources of the reply's citations that are passages of
 * the request. Usage prefers `tokens` over `billed_units`. Failures: unreachable, timed out,
 * 408, 429 or 5xx and a rejected COHERE_API_KEY → 503; another 4xx → 400 `model_input_rejected`
 * with Cohere's reason.
 */
export class CohereLanguageModel implements LanguageModel {
  readonly model: string;

  constructor(
    private readonly name: string,
    private readonly api: CohereApi,
  ) {
    this.model = `cohere/${name}`;
  }

  async chat(request: ModelRequest, options: ChatOptions = {}): Promise<ModelReply> {
    const body: Cohere.V2ChatRequest = {
      model: this.name,
      messages: cohereMessages(request),
      ...(request.documents.length > 0 ? { documents: request.documents.map((p) => ({ id: p.id, data: { title: p.filename, text: p.text } })) } : {}),
      ...(request.tools.length > 0 ? { tools: functionTools(request.tools) } : {}),
    };
    const passages = new Set(request.documents.map((p) => p.id));
    try {
      return options.onText === undefined ? await this.complete(body, passages, options.signal) : await this.stream(body, passages, options.onText, options.signal);
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async complete(body: Cohere.V2ChatRequest, passages: ReadonlySet<string>, signal: AbortSignal | undefined): Promise<ModelReply> {
    const response = await this.api.client.chat(body, { abortSignal: signal });
    const message = response.message;
    const toolCalls = (message?.toolCalls ?? []).map((call, i) => toolCall(call.id, call.function?.name, call.function?.arguments, i));
    const text = (message?.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join('');
    return {
      text: toolCalls.length > 0 ? '' : text,
      toolCalls,
      citations: toolCalls.length > 0 ? [] : citedPassages(message?.citations ?? [], passages),
      usage: usageOf(response.usage),
    };
  }

  private async stream(body: Cohere.V2ChatRequest, passages: ReadonlySet<string>, onText: (delta: string) => void, signal: AbortSignal | undefined): Promise<ModelReply> {
    const events = await this.api.client.chatStream(body, { abortSignal: signal });
    let text = '';
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    const citations: Cohere.Citation[] = [];
    let usage: Cohere.Usage | undefined;
    for await (const event of events) {
      switch (event.type) {
        case 'content-delta': {
          const delta = event.delta?.message?.content?.text ?? '';
          if (delta !== '') {
            text += delta;
            onText(delta);
          }
          break;
        }
        case 'tool-call-start': {
          const call = event.delta?.message?.toolCalls;
          calls[event.index ?? calls.length] = { id: call?.id ?? '', name: call?.function?.name ?? '', arguments: call?.function?.arguments ?? '' };
          break;
        }
        case 'tool-call-delta': {
          const call = calls[event.index ?? calls.length - 1];
          if (call !== undefined) call.arguments += event.delta?.message?.toolCalls?.function?.arguments ?? '';
          break;
        }
        case 'citation-start': {
          const citation = event.delta?.message?.citations;
          if (citation !== undefined) citations.push(citation);
          break;
        }
        case 'message-end':
          if (event.delta?.error) throw unavailable(`Cohere stopped the answer with an error (model ${this.name}: ${event.delta.error.slice(0, 300)}); retry later.`);
          usage = event.delta?.usage;
          break;
        default:
          break;
      }
    }
    const toolCalls = calls.filter((c) => c !== undefined).map((c, i) => toolCall(c.id, c.name, c.arguments, i));
    return {
      text: toolCalls.length > 0 ? '' : text,
      toolCalls,
      citations: toolCalls.length > 0 ? [] : citedPassages(citations, passages),
      usage: usageOf(usage),
    };
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: 'Cohere', model: this.name, rejectedCode: 'model_input_rejected', rejectedWhat: 'the chat request' });
  }
}

/** The conversation in Cohere's v2 message format. */
function cohereMessages(request: ModelRequest): Cohere.ChatMessageV2[] {
  const messages: Cohere.ChatMessageV2[] = [];
  if (request.instructions.trim() !== '') messages.push({ role: 'system', content: request.instructions });
  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        messages.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
          messages.push({
            role: 'assistant',
            // Cohere takes an assistant message's text next to its tool calls as the tool plan
            ...(message.content.trim() !== '' ? { toolPlan: message.content } : {}),
            toolCalls: message.tool_calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
          });
        } else {
          messages.push({ role: 'assistant', content: message.content });
        }
        break;
      case 'tool':
        messages.push({ role: 'tool', toolCallId: message.tool_call_id, content: [{ type: 'document', document: { data: toolData(message.content) } }] });
        break;
    }
  }
  return messages;
}

/** A tool result as a Cohere document: a JSON object as is, anything else under `result`. */
function toolData(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return { result: parsed };
  } catch {
    return { result: content };
  }
}

function toolCall(id: string | undefined, name: string | undefined, args: string | undefined, index: number): ToolCallRequest {
  return { id: id !== undefined && id !== '' ? id : `call_${index + 1}`, name: name ?? '', arguments: parseArguments(args) };
}

/** The passages a reply's citations point at, in order of first citation, without repeats. */
function citedPassages(citations: readonly Cohere.Citation[], passages: ReadonlySet<string>): string[] {
  const ids = new Set<string>();
  for (const citation of citations) {
    for (const source of citation.sources ?? []) {
      if (source.type === 'document' && source.id !== undefined && passages.has(source.id)) ids.add(source.id);
    }
  }
  return [...ids];
}

function usageOf(usage: Cohere.Usage | undefined): ModelReply['usage'] {
  return {
    tokens_in: usage?.tokens?.inputTokens ?? usage?.billedUnits?.inputTokens ?? 0,
    tokens_out: usage?.tokens?.outputTokens ?? usage?.billedUnits?.outputTokens ?? 0,
  };
}
