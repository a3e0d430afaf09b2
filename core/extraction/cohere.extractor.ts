import type { CohereClientV2 } from 'cohere-ai';
import { AppError, unavailable } from '../../lib/errors.js';
import { cohereClient, cohereFailure } from '../../providers/cohere/client.js';
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

/** How to reach Cohere. */
export interface CohereExtractorOptions {
  apiKey: string;
  /** API root (COHERE_BASE_URL); null for https://api.cohere.com. */
  baseUrl: string | null;
  /** Retries of a 408/429/5xx answer inside one call, with the SDK's backoff (default 2). */
  maxRetries?: number;
  timeoutMs?: number;
}

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
export class CohereExtractor implements Extractor {
  readonly model: string;
  private readonly client: CohereClientV2;
  private readonly timeoutMs: number;

  constructor(
    private readonly name: string,
    options: CohereExtractorOptions,
  ) {
    this.model = `cohere/${name}`;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.client = cohereClient({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRetries: options.maxRetries ?? 2, timeoutMs: this.timeoutMs });
  }

  async extract(schema: ExtractionSchema, input: ExtractionInput): Promise<Record<string, unknown>> {
    return sanitizeExtraction(schema, await this.json(EXTRACTION_SYSTEM_PROMPT, extractionPrompt(schema, input), relaxedSchema(schema)));
  }

  async facts(messages: readonly ExtractionMessage[]): Promise<string[]> {
    return sanitizeFacts(await this.json(FACTS_SYSTEM_PROMPT, factsPrompt(messages), FACTS_SCHEMA));
  }

  /** mem0's decision step: one call for all facts, the answer checked by `decideByModel`. */
  decide(facts: readonly FactCandidates[]): Promise<Decision[]> {
    return decideByModel(facts, (system, user) => this.json(system, user, DECISIONS_SCHEMA));
  }

  /** One chat call in JSON mode; the JSON object of the answer. */
  private async json(system: string, user: string, jsonSchema: Record<string, unknown>): Promise<Record<string, unknown>> {
    let text: string;
    try {
      const response = await this.client.chat({
        model: this.name,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        responseFormat: { type: 'json_object', jsonSchema },
        temperature: 0,
      });
      text = (response.message?.content ?? [])
        .map((item) => (item.type === 'text' && typeof item.text === 'string' ? item.text : ''))
        .join('');
    } catch (err) {
      throw this.failure(err);
    }
    const parsed = parseModelJson(text);
    if (parsed === null) {
      throw unavailable(`Cohere answered without a JSON object (model ${this.name}); retry later.`);
    }
    return parsed;
  }

  private failure(err: unknown): AppError {
    return cohereFailure(err, { where: 'Cohere', model: this.name, timeoutMs: this.timeoutMs, rejectedCode: 'extract_input_rejected', rejectedWhat: 'the extraction request' });
  }

}

