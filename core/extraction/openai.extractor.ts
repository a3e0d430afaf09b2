import type OpenAI from 'openai';
import { AppError, unavailable } from '../../lib/errors.js';
import { openaiClient, openaiFailure } from '../../providers/openai/client.js';
import { DECISIONS_SCHEMA, decideByModel, type Decision, type FactCandidates } from './decisions.js';
import {
  EXTRACTION_SYSTEM_PROMPT,
  extractionPrompt,
  FACTS_SCHEMA,
  FACTS_SYSTEM_PROMPT,
  factsPrompt,
  sanitizeFacts,
  parseModelJson,
  relaxedSchema,
  sanitizeExtraction,
  type ExtractionInput,
  type ExtractionMessage,
  type ExtractionSchema,
  type Extractor,
} from './extractor.js';

/** How to reach an OpenAI-compatible server. */
export interface OpenAIExtractorOptions {
  /** OPENAI_BASE_URL, the root that `/chat/completions` hangs off (e.g. https://api.openai.com/v1). */
  baseUrl: string;
  /** OPENAI_API_KEY; servers that need none get the placeholder `unused`. */
  apiKey: string | null;
  /** Retries of a 408/409/429/5xx answer inside one call, with the SDK's backoff (default 2). */
  maxRetries?: number;
  timeoutMs?: number;
}

/** The `json_schema.name` OpenAI accepts: `^[a-zA-Z0-9_-]{1,64}$`, from the schema's title. */
function schemaName(schema: ExtractionSchema): string {
  const name = (schema.title ?? '').replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return name === '' ? 'record' : name;
}

/**
 * Any OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, vLLM, Ollama, llama.cpp
 * server, LiteLLM, …) with `response_format` `json_schema` (the record schema, required
 * relaxed, `strict: false` since strict mode would demand every property), temperature 0, and
 * the same system prompt as every extractor. A Markdown fence around the JSON (servers that
 * ignore the response format) is tolerated; the result is sanitised like every model's.
 *
 * Failures: unreachable, timed out, 408, 409, 429 or 5xx, a rejected OPENAI_API_KEY, and an
 * answer without a JSON object throw 503 `service_unavailable`; any other 4xx (unknown model,
 * context too long, response format unsupported) throws 400 `extract_input_rejected`.
 */
export class OpenAIExtractor implements Extractor {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(
    private readonly name: string,
    options: OpenAIExtractorOptions,
  ) {
    this.model = `openai/${name}`;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.client = openaiClient({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRetries: options.maxRetries ?? 2, timeoutMs: this.timeoutMs });
  }

  async extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>> {
    return sanitizeExtraction(schema, await this.json(EXTRACTION_SYSTEM_PROMPT, extractionPrompt(schema, input), schemaName(schema), relaxedSchema(schema)));
  }

  async facts(messages: readonly ExtractionMessage[]): Promise<string[]> {
    return sanitizeFacts(await this.json(FACTS_SYSTEM_PROMPT, factsPrompt(messages), 'facts', FACTS_SCHEMA));
  }

  /** mem0's decision step: one call for all facts, the answer checked by `decideByModel`. */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]> {
    return decideByModel(facts, (system, user) => this.json(system, user, 'memory_events', DECISIONS_SCHEMA));
  }

  /** One chat completion with a JSON schema response format; the JSON object of the answer. */
  private async json(system: string, user: string, name: string, schema: Record<string, unknown>): Promise<Record<string, unknown>> {
    let text: string;
    try {
      const completion = await this.client.chat.completions.create({
        model: this.name,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        response_format: { type: 'json_schema', json_schema: { name, schema, strict: false } },
        temperature: 0,
      });
      const content: unknown = completion.choices?.[0]?.message?.content;
      text = typeof content === 'string' ? content : '';
    } catch (err) {
      throw this.failure(err);
    }
    const parsed = parseModelJson(text);
    if (parsed === null) {
      throw unavailable(`The language model server (OPENAI_BASE_URL) answered without a JSON object (model ${this.name}); retry later.`);
    }
    return parsed;
  }

  private failure(err: unknown): AppError {
    return openaiFailure(err, { where: 'The language model server (OPENAI_BASE_URL)', model: this.name, timeoutMs: this.timeoutMs, rejectedCode: 'extract_input_rejected', rejectedWhat: 'the extraction request' });
  }

}

