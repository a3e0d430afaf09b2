import type { AppError } from '../../lib/errors.js';
import { RemoteExtractor } from '../extraction.js';
import type { OpenAIApi } from './client.js';

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
export class OpenAIExtractor extends RemoteExtractor {
  constructor(
    name: string,
    private readonly api: OpenAIApi,
  ) {
    super('openai', name, 'The language model server (OPENAI_BASE_URL)');
  }

  /** One chat completion with a JSON schema response format. */
  protected async answer(system: string, user: string, name: string, schema: Record<string, unknown>): Promise<string> {
    try {
      const completion = await this.api.client.chat.completions.create({
        model: this.name,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        response_format: { type: 'json_schema', json_schema: { name, schema, strict: false } },
        temperature: 0,
      });
      const content: unknown = completion.choices?.[0]?.message?.content;
      return typeof content === 'string' ? content : '';
    } catch (err) {
      throw this.failure(err);
    }
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: this.where, model: this.name, rejectedCode: 'extract_input_rejected', rejectedWhat: 'the extraction request' });
  }
}
