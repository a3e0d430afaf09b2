import type { ChatOptions, LanguageModel, ModelMessage, ModelReply, ModelRequest, Passage, ToolCallRequest, ToolSpec } from '../language-model.js';
import { contentStems, sentences, wordCount } from './text-stems.js';
import { routeTool } from './tool-routing.js';

/** Sentences an extractive answer quotes at most, and the passages they may come from. */
const MAX_SENTENCES = 3;
const MAX_PASSAGES = 2;
/** A quoted sentence longer than this is cut at a word boundary. */
const MAX_SENTENCE_CHARS = 400;
/** How much of one tool result the answer repeats. */
const MAX_RESULT_CHARS = 300;
const MAX_RESULT_FIELDS = 8;
/** Words per `onText` piece. */
const WORDS_PER_PIECE = 6;

type ToolMessage = Extract<ModelMessage, { role: 'tool' }>;

/**
 * The offline language model `local`: deterministic (the same request gives the same reply) and
 * fast, with no model files.
 *
 * - After this turn's tool results (the request ends with `tool` messages): states each result
 *   in a sentence (a JSON object as its top-level `key: value` pairs), adds what the passages
 *   say about the question when they share at least two of its words, and never calls a tool
 *   again.
 * - Else, when the latest user message clearly asks for an offered tool and every required
 *   argument can be read from it (`routeTool`), asks for that one call (`call_<n>`).
 * - Else answers extractively: the one to three sentences of at most two passages that share the
 *   most content words with the question (a second passage only with a sentence as strong as the
 *   best one, sharing two words or more), quoted verbatim in reading order, citing those passages; the request's
 *   `fallback` when no sentence shares a word or there are no passages.
 *
 * Usage counts whitespace-separated words. `onText` gets the answer in pieces of a few words.
 */
export class LocalLanguageModel implements LanguageModel {
  readonly model = 'local';

  async chat(request: ModelRequest, options: ChatOptions = {}): Promise<ModelReply> {
    options.signal?.throwIfAborted();
    const reply = localReply(request);
    if (reply.toolCalls.length === 0 && options.onText !== undefined) {
      for (const piece of textPieces(reply.text)) options.onText(piece);
    }
    return reply;
  }
}

/** The local model's reply to a request (what `LocalLanguageModel.chat` returns). */
function localReply(request: ModelRequest): ModelReply {
  const question = latestUserText(request.messages);
  const results = toolResultsOfThisTurn(request.messages);
  const usage = (out: number): ModelReply['usage'] => ({ tokens_in: tokensIn(request), tokens_out: out });

  if (results.length > 0) {
    const stated = results.map((r) => describeToolResult(r.name, r.content));
    const grounded = extractiveAnswer(question, request.documents, 2);
    const text = [...stated, ...(grounded === null ? [] : [grounded.text])].join(' ');
    return { text, toolCalls: [], citations: grounded?.citations ?? [], usage: usage(wordCount(text)) };
  }

  if (request.tools.length > 0 && question !== '') {
    const routed = routeTool(question, request.tools);
    if (routed !== null) {
      const call: ToolCallRequest = { id: `call_${earlierCallCount(request.messages) + 1}`, name: routed.name, arguments: routed.arguments };
      return { text: '', toolCalls: [call], citations: [], usage: usage(callWords(call)) };
    }
  }

  const answer = extractiveAnswer(question, request.documents, 1);
  const text = answer?.text ?? request.fallback;
  return { text, toolCalls: [], citations: answer?.citations ?? [], usage: usage(wordCount(text)) };
}

function latestUserText(messages: readonly ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i] as ModelMessage;
    if (message.role === 'user') return message.content;
  }
  return '';
}

/** The `tool` messages the request ends with (this turn's results). */
function toolResultsOfThisTurn(messages: readonly ModelMessage[]): ToolMessage[] {
  const results: ToolMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i] as ModelMessage;
    if (message.role !== 'tool') break;
    results.unshift(message);
  }
  return results;
}

function earlierCallCount(messages: readonly ModelMessage[]): number {
  return messages.reduce((n, m) => n + (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0), 0);
}

function tokensIn(request: ModelRequest): number {
  const tool = (t: ToolSpec): number => wordCount(`${t.name} ${t.description}`);
  return (
    wordCount(request.instructions) +
    request.messages.reduce((n, m) => n + wordCount(m.content), 0) +
    request.documents.reduce((n, p) => n + wordCount(p.text), 0) +
    request.tools.reduce((n, t) => n + tool(t), 0)
  );
}

function callWords(call: ToolCallRequest): number {
  return 1 + wordCount(JSON.stringify(call.arguments).replace(/[{}[\]",:]/g, ' '));
}

/** The answer in pieces of a few words each; joined they give the text back. */
function textPieces(text: string): string[] {
  const tokens = text.match(/\s*\S+\s*/g) ?? [];
  const pieces: string[] = [];
  for (let i = 0; i < tokens.length; i += WORDS_PER_PIECE) pieces.push(tokens.slice(i, i + WORDS_PER_PIECE).join(''));
  return pieces;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
}

interface Candidate {
  text: string;
  overlap: number;
  passage: number;
  position: number;
  score: number;
}

/**
 * The sentences of the passages that best answer `question`, verbatim, with the ids of their
 * passages; null when no sentence shares `minOverlap` content stems with the question (one,
 * when the question has fewer).
 */
function extractiveAnswer(question: string, documents: readonly Passage[], minOverlap: number): { text: string; citations: string[] } | null {
  const asked = contentStems(question);
  if (asked.size === 0 || documents.length === 0) return null;
  const candidates: Candidate[] = [];
  documents.forEach((passage, p) => {
    sentences(passage.text).forEach((sentence, position) => {
      if (wordCount(sentence) < 4) return; // headings and fragments do not answer anything
      let overlap = 0;
      const stems = contentStems(sentence);
      for (const s of asked) if (stems.has(s)) overlap += 1;
      if (overlap > 0) candidates.push({ text: sentence, overlap, passage: p, position, score: passage.score });
    });
  });
  candidates.sort((a, b) => b.overlap - a.overlap || b.score - a.score || a.passage - b.passage || a.position - b.position);
  const best = candidates[0];
  if (best === undefined || best.overlap < Math.min(minOverlap, asked.size)) return null;

  const floor = Math.max(1, Math.ceil((best.overlap * 2) / 3));
  const passages: number[] = [best.passage];
  const chosen: Candidate[] = [best];
  for (const c of candidates.slice(1)) {
    if (chosen.length >= MAX_SENTENCES) break;
    if (c.overlap < floor || chosen.some((k) => k.text === c.text)) continue;
    if (!passages.includes(c.passage)) {
      // another passage joins only with a sentence as strong as the best, sharing two stems or more
      if (passages.length >= MAX_PASSAGES || c.overlap < Math.max(2, best.overlap)) continue;
      passages.push(c.passage);
    }
    chosen.push(c);
  }
  // best passage first, each passage's sentences in reading order
  chosen.sort((a, b) => passages.indexOf(a.passage) - passages.indexOf(b.passage) || a.position - b.position);
  return {
    text: chosen.map((c) => clip(c.text, MAX_SENTENCE_CHARS)).join(' '),
    citations: [...new Set(passages.map((p) => (documents[p] as Passage).id))],
  };
}

/** A sentence stating what a tool returned: a JSON object's top-level fields as `key: value`. */
function describeToolResult(name: string, content: string): string {
  const trimmed = content.trim();
  if (trimmed === '') return `${name} returned nothing.`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return `${name} returned: ${clip(trimmed.replace(/\s+/g, ' '), MAX_RESULT_CHARS)}${/[.!?…]$/.test(trimmed) ? '' : '.'}`;
  }
  let body: string;
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return `${name} returned no results.`;
    body = parsed.every((v) => typeof v !== 'object' || v === null)
      ? parsed.map(renderValue).join(', ')
      : `${parsed.length} result${parsed.length === 1 ? '' : 's'}; the first: ${renderFields(parsed[0])}`;
  } else {
    body = typeof parsed === 'object' && parsed !== null ? renderFields(parsed) : renderValue(parsed);
  }
  return `${name} returned ${clip(body, MAX_RESULT_CHARS)}.`;
}

function renderFields(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return renderValue(value);
  const entries = Object.entries(value);
  if (entries.length === 0) return 'an empty result';
  const shown = entries.slice(0, MAX_RESULT_FIELDS).map(([k, v]) => `${k}: ${renderValue(v)}`);
  if (entries.length > MAX_RESULT_FIELDS) shown.push(`and ${entries.length - MAX_RESULT_FIELDS} more fields`);
  return shown.join(', ');
}

function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return clip(value.replace(/\s+/g, ' '), 80);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
    return `[${value.slice(0, 5).map(renderValue).join(', ')}${value.length > 5 ? `, +${value.length - 5}` : ''}]`;
  }
  return clip(JSON.stringify(value), 80);
}
