import type OpenAI from 'openai';
import type { AppError } from '../../lib/errors.js';
import { unavailable } from '../../lib/errors.js';
import type { OpenAIApi } from './client.js';
import type { ChatOptions, LanguageModel, ModelReply, ModelRequest, Passage, ToolCallRequest } from '../language-model.js';
import { functionTools, parseArguments } from '../function-tools.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

/** What the system message says about the passages when there are any. */
const GROUNDING =
  'Answer from the numbered passages below when they hold the answer, and cite every passage you use with its marker in square brackets, e.g. [1] or [1][3]. ' +
  'If the passages do not hold the answer, say so instead of guessing.';

/**
 * Any OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, vLLM, Ollama, llama.cpp
 * server, LiteLLM, …) with function tools. Chat completions have no documents, so the passages
 * go into the system message as a numbered list (`[1] (filename) text`) after the instructions,
 * with the request to cite them as `[n]`; the reply's citations are the passages whose marker
 * appears in the answer, in order of first appearance. The markers stay in the text (clients may
 * render them as links); markers outside the list are ignored.
 *
 * Earlier tool calls go back as assistant `tool_calls` (arguments as JSON strings) and their
 * results as `tool` messages. No temperature is sent: some models accept only their default.
 * With `onText` the answer streams (`stream: true`, `stream_options.include_usage`): content
 * deltas are passed on as they come, tool-call deltas are joined by index. A server that writes
 * text before its tool calls streams that text too, though the reply (tool calls) has no text.
 *
 * Failures: unreachable, timed out, 408, 409, 429 or 5xx, a rejected OPENAI_API_KEY and an answer
 * without a choice → 503; another 4xx (unknown model, context too long, tools unsupported) → 400
 * `model_input_rejected` with the server's reason.
 */
export class OpenAILanguageModel implements LanguageModel {
  readonly model: string;

  constructor(
    private readonly name: string,
    private readonly api: OpenAIApi,
  ) {
    this.model = `openai/${name}`;
  }

  async chat(request: ModelRequest, options: ChatOptions = {}): Promise<ModelReply> {
    const body: ChatRequest = {
      model: this.name,
      messages: openaiMessages(request),
      ...(request.tools.length > 0 ? { tools: functionTools(request.tools) } : {}),
    };
    try {
      return options.onText === undefined ? await this.complete(body, request.documents, options.signal) : await this.stream(body, request.documents, options.onText, options.signal);
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async complete(body: ChatRequest, documents: readonly Passage[], signal: AbortSignal | undefined): Promise<ModelReply> {
    const completion = await this.api.client.chat.completions.create(body, { signal });
    const message = completion.choices?.[0]?.message;
    if (message === undefined) throw unavailable(`The language model server (OPENAI_BASE_URL) answered without a choice (model ${this.name}); retry later.`);
    const toolCalls = (message.tool_calls ?? []).flatMap((call, i) => (call.type === 'function' ? [toolCall(call.id, call.function.name, call.function.arguments, i)] : []));
    return reply(typeof message.content === 'string' ? message.content : '', toolCalls, documents, completion.usage);
  }

  private async stream(body: ChatRequest, documents: readonly Passage[], onText: (delta: string) => void, signal: AbortSignal | undefined): Promise<ModelReply> {
    const chunks = await this.api.client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal });
    let text = '';
    let chosen = false;
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of chunks) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (choice === undefined) continue;
      chosen = true;
      const delta = choice.delta;
      if (typeof delta?.content === 'string' && delta.content !== '') {
        text += delta.content;
        if (calls.length === 0) onText(delta.content);
      }
      for (const part of delta?.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name = part.function.name;
        call.arguments += part.function?.arguments ?? '';
      }
    }
    if (!chosen) throw unavailable(`The language model server (OPENAI_BASE_URL) streamed no answer (model ${this.name}); retry later.`);
    const toolCalls = calls.filter((c) => c !== undefined).map((c, i) => toolCall(c.id, c.name, c.arguments, i));
    return reply(text, toolCalls, documents, usage);
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, {
      where: 'The language model server (OPENAI_BASE_URL)',
      model: this.name,
      rejectedCode: 'model_input_rejected',
      rejectedWhat: 'the chat request',
    });
  }
}

/** The system message: the instructions, then the passages as a numbered list to cite. */
function openaiSystemPrompt(instructions: string, documents: readonly Passage[]): string {
  const parts = instructions.trim() === '' ? [] : [instructions.trim()];
  if (documents.length > 0) {
    parts.push(`${GROUNDING}\n\n${documents.map((p, i) => `[${i + 1}] (${p.filename}) ${p.text.trim()}`).join('\n\n')}`);
  }
  return parts.join('\n\n');
}

/** The conversation in the chat completions message format. */
function openaiMessages(request: ModelRequest): ChatMessage[] {
  const system = openaiSystemPrompt(request.instructions, request.documents);
  const messages: ChatMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        messages.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        messages.push(
          message.tool_calls !== undefined && message.tool_calls.length > 0
            ? {
                role: 'assistant',
                content: message.content === '' ? null : message.content,
                tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
              }
            : { role: 'assistant', content: message.content },
        );
        break;
      case 'tool':
        messages.push({ role: 'tool', tool_call_id: message.tool_call_id, content: message.content });
        break;
    }
  }
  return messages;
}

function toolCall(id: string, name: string, args: string, index: number): ToolCallRequest {
  return { id: id !== '' ? id : `call_${index + 1}`, name, arguments: parseArguments(args) };
}

function reply(text: string, toolCalls: ToolCallRequest[], documents: readonly Passage[], usage: OpenAI.CompletionUsage | null | undefined): ModelReply {
  return {
    text: toolCalls.length > 0 ? '' : text,
    toolCalls,
    citations: toolCalls.length > 0 ? [] : citedMarkers(text, documents),
    usage: { tokens_in: usage?.prompt_tokens ?? 0, tokens_out: usage?.completion_tokens ?? 0 },
  };
}

/** The passages whose `[n]` marker the text holds (`[2]`, `[1, 3]`, `[1][3]`), in order of first appearance. */
function citedMarkers(text: string, documents: readonly Passage[]): string[] {
  const ids = new Set<string>();
  for (const m of text.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g)) {
    for (const n of (m[1] as string).split(',')) {
      const passage = documents[Number(n.trim()) - 1];
      if (passage !== undefined) ids.add(passage.id);
    }
  }
  return [...ids];
}
