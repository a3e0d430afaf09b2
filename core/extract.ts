import type { ExtractPayload, InferPayload, JobOf, JobResult, JobResults } from '../contracts/jobs/catalogue.js';
import { envelope } from '../contracts/jobs/catalogue.js';
import { AppError, badRequest, unavailable } from '../lib/errors.js';
import { newId } from '../lib/time.js';
import { checkMetadataSize } from '../contracts/vector-store.js';
import type { QueueDriver } from '../contracts/jobs/queue.js';
import type { ExtractionSchema } from '../providers/extractor.js';
import type { Extractors } from '../providers/registry.js';
import type { Idempotency, IdempotencyClaim } from './idempotency.js';
import { everyField } from './memory/export-schema.js';
import { mem0AddAnswer } from './memory/mem0-add.js';
import type { AddMemoriesInput, Memories } from './memory/memories.js';
import type { RecordView, Records } from './memory/records.js';
import { ENTITY_IDS, requireEntity, type EntityIds, type MemoryOwner } from './memory/rows.js';
import type { AddedMemory, MemoryDecisions } from './memory-decisions.js';
import { validateRecord, type Schemas } from './schemas.js';

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

type JobAnswer = JobResults['record.extract'];
type ClientError = { error: { status: number; code: string; detail: string } };

/**
 * What language models do with memory, run on the extraction queue so that API processes never
 * wait on a model themselves: the API side queues a job and waits for its answer (at most
 * `timeoutMs`), the worker side calls the model.
 *
 * - Typed records (`record.extract`): the model is asked for explicitly stated values (required
 *   relaxed); they are validated and the record stored when complete, metered like a write. An
 *   incomplete result is a normal answer (`stored: false`), not an error.
 * - Free-form memories (`memory.infer`, mem0 add with `infer: true`): the model picks the facts
 *   worth remembering out of the conversation, and each is added, or updates, deletes or
 *   matches (NOOP) a memory the entity has (`MemoryDecisions`), written by the worker.
 */
export class RecordExtraction {
  constructor(
    private readonly schemas: Schemas,
    private readonly records: Records,
    private readonly memories: Memories,
    private readonly extractors: Extractors,
    private readonly queue: QueueDriver,
    private readonly timeoutMs: number,
    private readonly decisions: MemoryDecisions,
    private readonly idempotency: Idempotency,
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
    return (await this.ask('record.extract', payload, 'The extraction')) as ExtractOutcome;
  }

  /**
   * mem0 add. With `infer: false` each message's content is stored as given (every one an ADD);
   * otherwise (mem0's default) `model` picks the facts worth remembering out of the conversation
   * and decides what each does to the entity's memories: ADD, UPDATE, DELETE or NOOP. With a
   * `claim` (an `Idempotency-Key`) the job is the claim's: it records its answer under the key
   * itself, so a request that gave up waiting (503) leaves an answer for the client's retry.
   */
  async addMemories(projectId: string, input: AddMemoriesInput, model: string, claim?: IdempotencyClaim): Promise<AddedMemory[]> {
    requireEntity(input);
    const eventTime = input.timestamp === undefined ? undefined : Math.round(input.timestamp * 1000);
    if (input.infer === false && input.structuredSchema === undefined) return this.storeAsGiven(projectId, input, input.messages, eventTime);
    // refused here rather than after a model call in the worker
    checkMetadataSize(input.metadata, 'the memory');
    const payload: InferPayload = { requestId: claim?.requestId ?? newId(), projectId, model: this.extractors.validate(model), messages: input.messages };
    if (claim !== undefined) payload.idempotencyKey = claim.key;
    for (const key of [...ENTITY_IDS, 'metadata', 'instructions', 'expiration_date'] as const) {
      if (input[key] !== undefined) Object.assign(payload, { [key]: input[key] });
    }
    if (input.categories !== undefined) payload.categories = [...input.categories];
    if (eventTime !== undefined) payload.eventTime = eventTime;
    if (input.infer === false) payload.asGiven = true;
    if (input.structuredSchema !== undefined) {
      payload.structured = { schema: input.structuredSchema.extraction as unknown as Record<string, unknown>, fields: input.structuredSchema.fields };
    }
    const { results } = await this.ask('memory.infer', payload, 'Adding memories from the messages');
    return results as unknown as AddedMemory[];
  }

  /**
   * The `memory.infer` job: the values `structured_data_schema` asks for out of the messages, then
   * the messages stored as given (`asGiven`), or the facts out of them with their decisions, written.
   */
  async runInfer(payload: InferPayload): Promise<JobResults['memory.infer']> {
    const claim = payload.idempotencyKey === undefined ? null : { projectId: payload.projectId, key: payload.idempotencyKey, requestId: payload.requestId };
    if (claim !== null) {
      const start = await this.idempotency.startJob(claim);
      // run again after it answered (a stalled job), or its key taken over by a retry before it
      // started: doing the work would store it twice; the key's answer is the client's
      if (start !== 'run') {
        return { error: { status: 409, code: 'idempotency_key_superseded', detail: `The work of the Idempotency-Key "${claim.key}" is done by another request; retry with the same key to get its answer.` } };
      }
    }
    try {
      const answer = await this.infer(payload);
      if (claim !== null) await this.idempotency.answer(claim, { status: 200, body: mem0AddAnswer(answer.results as unknown as AddedMemory[]) });
      return answer;
    } catch (err) {
      if (claim !== null) {
        // a client error is the answer; after any other failure the job ends without one (it is
        // not retried), so the key is released for the client's retry to run afresh
        if (err instanceof AppError && err.status < 500) await this.idempotency.failed(claim, err);
        else await this.idempotency.release(claim);
      }
      return clientError(err);
    }
  }

  /** The work of the `memory.infer` job. */
  private async infer(payload: InferPayload): Promise<{ results: Array<Record<string, unknown>> }> {
    const extractor = this.extractors.get(payload.model);
    const { user_id, agent_id, run_id, app_id, metadata, categories, expiration_date, eventTime, structured } = payload;
    const owner: MemoryOwner = { user_id, agent_id, run_id, app_id, metadata, categories, expiration_date };
    if (structured) {
      const schema = structured.schema as unknown as ExtractionSchema;
      owner.structured_data = everyField(schema, structured.fields, await extractor.extract(schema, { messages: payload.messages }));
    }
    const results = payload.asGiven
      ? await this.storeAsGiven(payload.projectId, owner, payload.messages, eventTime)
      : await this.decisions.remember(payload.projectId, owner, await extractor.facts(payload.messages, payload.instructions), extractor, eventTime);
    return { results: results as unknown as Array<Record<string, unknown>> };
  }

  /** mem0's `infer: false`: each message's content stored as given, every one an ADD. */
  private async storeAsGiven(projectId: string, owner: MemoryOwner, messages: InferPayload['messages'], eventTime: number | undefined): Promise<AddedMemory[]> {
    return (await this.memories.add(projectId, owner, messages.map((m) => m.content), { eventTime, messages: true })).map((m) => ({ ...m, event: 'ADD' }));
  }

  /** Queues a request job and waits for its answer; a client-facing failure is rethrown as such. */
  private async ask<N extends 'record.extract' | 'memory.infer'>(job: N, payload: JobOf<N>, what: string): Promise<Exclude<JobResults[N], ClientError>> {
    let answer: JobResult<N>;
    try {
      answer = await this.queue.request(envelope(job, payload), this.timeoutMs);
    } catch (err) {
      // bounded by timeoutMs on both drivers, whatever is down (the queue, the worker, the model)
      throw unavailable(`${what} did not complete within its ${this.timeoutMs / 1000} s limit (${err instanceof Error ? err.message : String(err)}); retry later.`);
    }
    if ('error' in answer) {
      const { error } = answer as ClientError;
      throw new AppError(error.status, error.code, error.detail);
    }
    return answer as unknown as Exclude<JobResults[N], ClientError>;
  }

  /** The `record.extract` job. Client-facing failures come back as `{error}` for the waiting request. */
  async run(payload: ExtractPayload): Promise<JobAnswer> {
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

/** A 4xx AppError as a job answer for the waiting request; anything else is rethrown (the job fails and may retry). */
function clientError(err: unknown): ClientError {
  if (err instanceof AppError && err.status < 500) return { error: { status: err.status, code: err.code, detail: err.detail } };
  throw err;
}
