import type { InferPayload, JobResults } from '../../contracts/jobs/catalogue.js';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { AppError } from '../../lib/errors.js';
import { iso, newId } from '../../lib/time.js';
import { checkMetadataSize } from '../../contracts/vector-store.js';
import type { ExtractionSchema } from '../../providers/extractor.js';
import type { Extractors } from '../../providers/registry.js';
import type { Idempotency, IdempotencyClaim } from '../idempotency.js';
import { everyField } from './export-schema.js';
import type { AddMemoriesInput, Memories } from './memories.js';
import { ENTITY_IDS, requireEntity, type MemoryOwner } from './rows.js';
import type { AddedMemory, MemoryDecisions } from './decisions.js';
import { askModel, clientError } from './model-job.js';
import { showValidity } from './validity.js';

/**
 * Memory inference, mem0's add: the API side queues a `memory.infer` job and waits for its answer
 * (at most `timeoutMs`), so that API processes never wait on a model themselves; the worker picks
 * the facts worth remembering out of the conversation, and each is added, or updates, deletes or
 * matches (NOOP) a memory the entity has (`MemoryDecisions`). An add with `infer: false` and no
 * `structured_data_schema` needs no model and is stored at once.
 */
export class MemoryInference {
  constructor(
    private readonly memories: Memories,
    private readonly extractors: Extractors,
    private readonly queue: QueueDriver,
    private readonly timeoutMs: number,
    private readonly decisions: MemoryDecisions,
    private readonly idempotency: Idempotency,
  ) {}

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
    const { results } = await askModel(this.queue, this.timeoutMs, 'memory.infer', payload, 'Adding memories from the messages');
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
}

/** The body a mem0 add answers (200): the memories it touched, their times as ISO 8601. */
export function mem0AddAnswer(added: AddedMemory[]): { results: Array<Record<string, unknown>> } {
  return { results: added.map((m) => ({ ...m, ...showValidity(m), created_at: iso(m.created_at), updated_at: iso(m.updated_at) })) };
}
