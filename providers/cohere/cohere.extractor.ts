import type { AppError } from '../../lib/errors.js';
import { RemoteExtractor } from '../extraction.js';
import type { CohereApi } from './client.js';

/**
 * Cohere's v2 chat API (`POST /v2/chat`) in JSON mode: `response_format` `json_object` with the
 * record schema (required relaxed) as `json_schema`, temperature 0, and a system prompt that
 * asks for explicitly stated values only (facts: `{"facts": [string]}` and their own prompt). The answer is parsed and sanitised
 * (`sanitizeExtraction`): keys outside the schema and values of the wrong type are dropped.
 *
 * Failures: unreachable, timed out, 408, 429 or 5xx, a rejected COHERE_API_KEY, and an answer
 * that holds no JSON object throw 503 `service_unavailable`; any other 4xx means Cohere refused
 * this input or model and throws 400 `extract_input_rejected` with Cohere's reason.
 */
export class CohereExtractor extends RemoteExtractor {
  constructor(
    name: string,
    private readonly api: CohereApi,
  ) {
    super('cohere', name, 'Cohere');
  }

  /** One chat call in JSON mode (Cohere takes no schema name). */
  protected async answer(system: string, user: string, _name: string, jsonSchema: Record<string, unknown>): Promise<string> {
    try {
      const response = await this.api.client.chat({
        model: this.name,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        responseFormat: { type: 'json_object', jsonSchema },
        temperature: 0,
      });
      return (response.message?.content ?? []).map((item) => (item.type === 'text' && typeof item.text === 'string' ? item.text : '')).join('');
    } catch (err) {
      throw this.failure(err);
    }
  }

  private failure(err: unknown): AppError {
    return this.api.failure(err, { where: this.where, model: this.name, rejectedCode: 'extract_input_rejected', rejectedWhat: 'the extraction request' });
  }
}
