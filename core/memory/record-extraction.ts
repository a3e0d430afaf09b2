import type { ExtractPayload, JobResults } from '../../contracts/jobs/catalogue.js';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { badRequest } from '../../lib/errors.js';
import { newId } from '../../lib/time.js';
import type { Extractors } from '../../providers/registry.js';
import { validateRecord, type Schemas } from '../schemas.js';
import { askModel, clientError } from './model-job.js';
import type { RecordView, Records } from './records.js';
import type { EntityIds } from './rows.js';

export interface ExtractRequest extends EntityIds {
  text?: string;
  messages?: Array<{ role: string; content: string }>;
  metadata?: Record<string, unknown>;
  /** provider/model of the language model; default `local`. */
  model?: string;
}

/** What an extraction answers: the stored record, or what was found and what is missing. */
export type ExtractOutcome =
  | { stored: true; record: RecordView }
  | { stored: false; record: Record<string, unknown> | null; missing: string[] };

/**
 * Typed-record extraction (`POST /v1/records/{schema}/extract`, an agent flow's extract node): the
 * API side queues a `record.extract` job and waits for its answer (at most `timeoutMs`); the
 * worker asks the model for the values the text states explicitly (required relaxed), validates
 * them and stores the record when complete, metered like a write. An incomplete result is a normal
 * answer (`stored: false`), not an error.
 */
export class RecordExtraction {
  constructor(
    private readonly schemas: Schemas,
    private readonly records: Records,
    private readonly extractors: Extractors,
    private readonly queue: QueueDriver,
    private readonly timeoutMs: number,
  ) {}

  async request(projectId: string, schemaName: string, input: ExtractRequest): Promise<ExtractOutcome> {
    if ((input.text === undefined) === (input.messages === undefined)) {
      throw badRequest('invalid_extract', 'Send the input as either text or messages, not both and not neither.');
    }
    await this.schemas.get(projectId, schemaName);
    const model = this.extractors.validate(input.model ?? 'local');
    const payload: ExtractPayload = { requestId: newId(), projectId, schema: schemaName, model };
    for (const key of ['text', 'messages', 'user_id', 'agent_id', 'run_id', 'app_id', 'metadata'] as const) {
      if (input[key] !== undefined) Object.assign(payload, { [key]: input[key] });
    }
    return (await askModel(this.queue, this.timeoutMs, 'record.extract', payload, 'The extraction')) as ExtractOutcome;
  }

  /** The `record.extract` job. Client-facing failures come back as `{error}` for the waiting request. */
  async run(payload: ExtractPayload): Promise<JobResults['record.extract']> {
    try {
      const version = await this.schemas.get(payload.projectId, payload.schema);
      const extractor = this.extractors.get(payload.model);
      const input = payload.messages ? { messages: payload.messages } : { text: payload.text ?? '' };
      const found = await extractor.extract(version.json_schema, input);
      const values = validateRecord(version, found, '/record', { relaxRequired: true });
      const missing = (version.json_schema.required ?? []).filter((field) => values[field] === undefined);
      if (Object.keys(values).length === 0) return { stored: false, record: null, missing };
      if (missing.length > 0) return { stored: false, record: values, missing };
      const { user_id, agent_id, run_id, app_id, metadata } = payload;
      const record = await this.records.store(payload.projectId, payload.schema, { record: values, user_id, agent_id, run_id, app_id, metadata });
      return { stored: true, record: record as unknown as Record<string, unknown> };
    } catch (err) {
      return clientError(err);
    }
  }
}
