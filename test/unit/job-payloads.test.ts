import { expect } from 'chai';
import { ADD_MEMORIES } from '../../api/schemas/mem0.js';
import { IDEMPOTENCY_HEADERS } from '../../api/schemas/common.js';
import { JOB_NAMES, JOBS, MAX_INDEX_GROUP, type JobEnvelope, type JobName, type JobOf } from '../../contracts/jobs/catalogue.js';
import { PoisonJobError, runJob, type JobHandlers } from '../../contracts/jobs/handlers.js';
import type { QueueDriver } from '../../contracts/jobs/queue.js';
import { MAX_CATEGORY_DESCRIPTION, MAX_CATEGORY_NAME } from '../../contracts/memory-categories.js';
import { MemoryInference } from '../../core/memory/inference.js';
import { mem0Add } from '../../api/mem0/add-body.js';
import { createLogger } from '../../lib/logger.js';
import { ajv } from '../../lib/validation.js';
import type { Extractors } from '../../providers/registry.js';

/** What both request jobs carry: the request, the model it asked for, and whose memories or record. */
const REQUEST = { requestId: 'r1', projectId: 'p1', model: 'local', user_id: 'alice', metadata: { source: 'chat' } };

/** A payload of every job as its producer writes it, its optional fields given where it has some. */
const VALID: { [N in JobName]: JobOf<N> } = {
  'probe.touch': { projectId: 'p1', probeId: 'probe-1' },
  'memory.index': { projectId: 'p1', memoryId: 'm1', revision: 1, more: [{ memoryId: 'm2', revision: 1 }] },
  'retention.sweep': { projectId: 'p1' },
  'record.extract': { ...REQUEST, schema: 'contact', messages: [{ role: 'user', content: 'I am Ada, ada@example.com' }] },
  'document.process': { projectId: 'p1', documentId: 'd1', revision: 3 },
  'knowledge.purge': { projectId: 'p1', embedModel: 'local/all-MiniLM-L6-v2', kbId: 'kb1' },
  'memory.infer': {
    ...REQUEST,
    messages: [{ role: 'user', content: 'I moved to Lisbon.' }],
    expiration_date: null,
    eventTime: 1_700_000_000_000,
    categories: [{ name: 'travel', description: 'Trips and places' }],
    instructions: 'Remember where people live.',
    structured: { schema: { type: 'object', properties: { city: { type: 'string' } } }, fields: ['city'] },
    idempotencyKey: 'key-1',
  },
  'index.reconcile': {},
  'webhook.deliver': { projectId: 'p1', deliveryId: 'w1' },
  'memory.reembed': { projectId: 'p1', migrationId: 'mig1' },
  'memory.export': { projectId: 'p1', exportId: 'e1' },
};

const ctx = { attempt: 1, worker: 'test', log: createLogger('silent') };
/** Every handler answers `ran`: a job that reaches its handler passed validation. */
const handlers = Object.fromEntries(JOB_NAMES.map((n) => [n, async () => 'ran'])) as unknown as JobHandlers;

/** True when a worker would run `payload` as job `name`; false when it drops it as poison. */
async function runs(name: JobName, payload: unknown): Promise<boolean> {
  try {
    expect(await runJob(handlers, name, payload, ctx)).to.equal('ran');
    return true;
  } catch (err) {
    if (err instanceof PoisonJobError) return false;
    throw err;
  }
}

describe('job payloads', () => {
  for (const name of JOB_NAMES) {
    it(`${name}: runs a payload of its producer, refuses one with an unknown field or without a required one`, async () => {
      const payload = VALID[name] as Record<string, unknown>;
      expect(await runs(name, payload), 'the valid payload').to.equal(true);
      expect(await runs(name, { ...payload, unexpected: 1 }), 'an unknown field').to.equal(false);
      for (const field of (JOBS[name].schema.required ?? []) as string[]) {
        const without = { ...payload };
        delete without[field];
        expect(await runs(name, without), `without ${field}`).to.equal(false);
      }
    });
  }

  it('memory.index: a job indexes one memory or up to MAX_INDEX_GROUP that one write added, each at a revision', async () => {
    const one = { projectId: 'p1', memoryId: 'm0', revision: 1 };
    const others = (n: number) => Array.from({ length: n }, (_, i) => ({ memoryId: `m${i + 1}`, revision: 1 }));
    expect(await runs('memory.index', one)).to.equal(true);
    expect(await runs('memory.index', { ...one, more: others(MAX_INDEX_GROUP - 1) })).to.equal(true);
    expect(await runs('memory.index', { ...one, more: others(MAX_INDEX_GROUP) }), 'over the bound').to.equal(false);
    expect(await runs('memory.index', { ...one, more: [] }), 'an empty list').to.equal(false);
    expect(await runs('memory.index', { ...one, more: [{ memoryId: 'm1', revision: 0 }] }), 'no revision 0').to.equal(false);
    expect(await runs('memory.index', { ...one, more: [{ memoryId: 'm1', revision: 1, text: 'x' }] }), 'an unknown field').to.equal(false);
  });

  it('memory.infer: an expiration date is a calendar date or null', async () => {
    const payload = VALID['memory.infer'];
    expect(await runs('memory.infer', { ...payload, expiration_date: '2030-12-31' })).to.equal(true);
    expect(await runs('memory.infer', { ...payload, expiration_date: '2030-02-30' })).to.equal(false);
    expect(await runs('memory.infer', { ...payload, expiration_date: 'tomorrow' })).to.equal(false);
  });

  it('memory.infer: a mem0 add at every bound its request schema allows is queued as a payload the worker runs', async () => {
    const { properties } = ADD_MEMORIES;
    const at = (max: number | undefined, fill: string): string => fill.repeat(max as number);
    const messages = Array.from({ length: properties.messages.maxItems as number }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: at(properties.messages.items.properties.content.maxLength, 'm'),
    }));
    const custom_categories = Array.from({ length: properties.custom_categories.maxItems as number }, (_, i) => ({
      [`c${i}`.padEnd(MAX_CATEGORY_NAME, 'x')]: at(MAX_CATEGORY_DESCRIPTION, 'd'),
    }));
    const body = {
      messages,
      user_id: at(properties.user_id.maxLength, 'u'),
      agent_id: at(properties.agent_id.maxLength, 'a'),
      custom_categories,
      custom_instructions: at(properties.custom_instructions.maxLength, 'i'),
      agent_custom_instructions: at(properties.agent_custom_instructions.maxLength, 'j'),
      expiration_date: '9999-12-31',
      timestamp: properties.timestamp.maximum,
    };
    expect(ajv.validate(ADD_MEMORIES, body), 'the request schema accepts the body').to.equal(true);
    const key = at(IDEMPOTENCY_HEADERS.properties['Idempotency-Key'].maxLength, 'k');
    expect(ajv.validate(IDEMPOTENCY_HEADERS, { 'Idempotency-Key': key }), 'the header schema accepts the key').to.equal(true);

    let queued: JobEnvelope | undefined;
    const queue = {
      request: async (job: JobEnvelope) => {
        queued = job;
        expect(await runs(job.name, job.payload), 'the worker runs the queued payload').to.equal(true);
        return { results: [] };
      },
    } as unknown as QueueDriver;
    const extractors = { validate: (model: string) => model } as unknown as Extractors;
    const none = undefined as never;
    const inference = new MemoryInference(none, extractors, queue, 1_000, none, none);
    await inference.addMemories('p1', mem0Add(body), 'local', { projectId: 'p1', key, requestId: 'r1' });

    // the add reached the job with every bound it was sent at
    const payload = queued?.payload as JobOf<'memory.infer'>;
    expect(queued?.name).to.equal('memory.infer');
    expect(payload.messages).to.have.length(messages.length);
    expect(payload.categories).to.have.length(custom_categories.length);
    expect(payload.instructions).to.have.length(body.custom_instructions.length + 1 + body.agent_custom_instructions.length);
    expect(payload.idempotencyKey).to.equal(key);
  });
});
