import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { MemoryRow } from '../../db/repositories/memories.repository.js';
import type { WebhookDeliveryRow, WebhookRow, WebhooksRepository } from '../../db/repositories/webhooks.repository.js';
import type { OutboxTransaction } from '../../db/transactional-outbox.js';
import type { MemoryWriteEvent, MemoryWriteSubscriber } from '../memory/events.js';
import { envelope } from '../../contracts/jobs/catalogue.js';
import type { JobContext } from '../../contracts/jobs/handlers.js';
import type { PrivateHostAllowance } from '../../lib/config.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { iso, newId, nowMs } from '../../lib/time.js';
import { normalizeHost } from '../outbound/address-guard.js';
import { Outbound, urlFormRefusal } from '../outbound/outbound.js';

/** mem0's webhook event types that Cairn produces. */
export const WEBHOOK_EVENTS = ['memory_add', 'memory_update', 'memory_delete'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** mem0's word for each event in `event_details.event`. */
const MEM0_EVENT: Record<WebhookEvent, 'ADD' | 'UPDATE' | 'DELETE'> = { memory_add: 'ADD', memory_update: 'UPDATE', memory_delete: 'DELETE' };

/**
 * Attempts per delivery before it is marked failed: with the queue's backoff (1 s doubling to a
 * 60 s cap) about 95 minutes, so a receiver down for that long still gets every event.
 */
export const WEBHOOK_ATTEMPTS = 100;

/** Settled deliveries deleted per statement when the log is pruned. */
const PRUNE_BATCH = 1_000;

/** The headers a delivery carries besides its JSON body. */
export const SIGNATURE_HEADER = 'x-cairn-signature';
export const TIMESTAMP_HEADER = 'x-cairn-timestamp';

/** A webhook as mem0's endpoints show it; the secret is shown once, when it is created. */
export interface WebhookView {
  webhook_id: string;
  name: string;
  url: string;
  project: string;
  event_types: WebhookEvent[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
  secret?: string;
}

/** One entry of a webhook's delivery log. */
export interface DeliveryView {
  id: string;
  event: string;
  memory_id: string;
  status: WebhookDeliveryRow['status'];
  attempts: number;
  status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface WebhookInput {
  name?: string;
  url?: string;
  event_types?: string[];
}

/** A memory change to report: the memory as written (as it was, for a delete), and its text before an update. */
export interface MemoryEvent {
  row: MemoryRow;
  previous?: string;
}

export interface WebhookOptions {
  /** Non-public hosts and networks the operator allows (the agents' tools' rule, TOOL_ALLOW_PRIVATE_HOSTS). */
  privateHosts: PrivateHostAllowance;
  timeoutMs: number;
}

/**
 * mem0's webhooks: a project's endpoints for memory events. Each memory change records one
 * delivery per subscribed webhook in the transaction that writes it (with its `webhook.deliver`
 * job), so no event is lost between the write and the send; the job POSTs the body signed with
 * the webhook's secret, and the queue retries it with backoff while the receiver fails. URLs are
 * held to the agents' tools' address rules when saved and again on every send.
 */
export class Webhooks implements MemoryWriteSubscriber {
  /** The agents' tools' address rule, and the dispatcher deliveries are sent with (the rule checked on every DNS answer). */
  private readonly outbound: Outbound;
  /** Webhooks read per transaction and project (`hooksOf`), gone with the transaction. */
  private readonly readIn = new WeakMap<OutboxTransaction, Map<string, Promise<WebhookRow[]>>>();

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly options: WebhookOptions,
  ) {
    this.outbound = new Outbound(options.privateHosts, options.timeoutMs);
  }

  async create(projectId: string, input: Required<WebhookInput>): Promise<WebhookView> {
    const url = await this.checkUrl(input.url);
    const now = nowMs();
    const row: WebhookRow = {
      id: newId(),
      project_id: projectId,
      name: input.name,
      url,
      event_types: JSON.stringify(checkEvents(input.event_types)),
      secret: `whsec_${randomBytes(32).toString('base64url')}`,
      is_active: true,
      created_at: now,
      updated_at: now,
    };
    await this.repository.insert(row);
    return { ...view(row), secret: row.secret };
  }

  async list(projectId: string): Promise<WebhookView[]> {
    return (await this.repository.list(projectId)).map(view);
  }

  async get(projectId: string, id: string): Promise<WebhookView> {
    return view(await this.row(projectId, id));
  }

  /** Changes name, url and/or event types; `{}` changes nothing. */
  async update(projectId: string, id: string, input: WebhookInput): Promise<WebhookView> {
    await this.row(projectId, id);
    const change: Parameters<WebhooksRepository['update']>[2] = {};
    if (input.name !== undefined) change.name = input.name;
    if (input.url !== undefined) change.url = await this.checkUrl(input.url);
    if (input.event_types !== undefined) change.event_types = JSON.stringify(checkEvents(input.event_types));
    if (Object.keys(change).length > 0) await this.repository.update(projectId, id, { ...change, updated_at: nowMs() });
    return this.get(projectId, id);
  }

  /** Deletes a webhook and its delivery log; deliveries not yet sent are dropped. */
  async delete(projectId: string, id: string): Promise<void> {
    if ((await this.repository.delete(projectId, id)) === 0) throw missing(id);
  }

  /**
   * Keeps the delivery log bounded: deletes settled deliveries (delivered, or failed after their
   * attempts) recorded more than `keepDays` before `now`, in batches; pending ones stay whatever
   * their age. Returns how many it deleted.
   */
  async pruneLog(keepDays: number, now = nowMs()): Promise<number> {
    const before = now - keepDays * 24 * 3600 * 1000;
    let pruned = 0;
    for (;;) {
      const deleted = await this.repository.pruneDeliveries(before, PRUNE_BATCH);
      pruned += deleted;
      if (deleted < PRUNE_BATCH) return pruned;
    }
  }

  /** A webhook's deliveries, newest first. */
  async deliveries(projectId: string, id: string, limit: number, offset: number): Promise<DeliveryView[]> {
    await this.row(projectId, id);
    return (await this.repository.deliveries(projectId, id, limit, offset)).map(deliveryView);
  }

  /**
   * The project's webhooks as this transaction read them first: a transaction writing many
   * memories one by one (a batch update, a delete of all an entity's memories) reads them once.
   */
  private hooksOf(tx: OutboxTransaction, projectId: string): Promise<WebhookRow[]> {
    let read = this.readIn.get(tx);
    if (read === undefined) {
      read = new Map();
      this.readIn.set(tx, read);
    }
    let hooks = read.get(projectId);
    if (hooks === undefined) {
      hooks = this.repository.list(projectId, tx.trx);
      read.set(projectId, hooks);
    }
    return hooks;
  }

  /** mem0's webhook events for each memory write, recorded in its transaction (the memory-write event seam). */
  async onMemoryWrite(tx: OutboxTransaction, event: MemoryWriteEvent): Promise<void> {
    // versions are their memory's past, not memories of their own: mem0's events do not name them
    if (event.kind === 'added') await this.record(tx, event.projectId, 'memory_add', event.rows.map((row) => ({ row })));
    else if (event.kind === 'updated') await this.record(tx, event.projectId, 'memory_update', [{ row: event.row, previous: event.previous.memory }]);
    else if (event.kind === 'ended') await this.record(tx, event.projectId, 'memory_delete', [{ row: event.row }]);
    else if (event.kind === 'deleted') await this.record(tx, event.projectId, 'memory_delete', event.rows.map((row) => ({ row })));
  }

  /**
   * Records, in the transaction writing them, a delivery of each memory change to every active
   * webhook of the project subscribed to `event`, with its job. One read of the project's
   * webhooks however many changes.
   */
  async record(tx: OutboxTransaction, projectId: string, event: WebhookEvent, changes: MemoryEvent[]): Promise<void> {
    if (changes.length === 0) return;
    const hooks = (await this.hooksOf(tx, projectId)).filter((h) => Boolean(h.is_active) && parseEvents(h.event_types).includes(event));
    if (hooks.length === 0) return;
    const now = nowMs();
    const rows: WebhookDeliveryRow[] = [];
    for (const hook of hooks) {
      for (const change of changes) {
        const id = newId();
        rows.push({
          id,
          project_id: projectId,
          webhook_id: hook.id,
          event,
          memory_id: change.row.id,
          body: JSON.stringify(payload(event, change, { delivery: id, webhook: hook.id, at: now })),
          status: 'pending',
          attempts: 0,
          status_code: null,
          last_error: null,
          created_at: now,
          updated_at: now,
          delivered_at: null,
        });
      }
    }
    await this.repository.addDeliveries(tx.trx, rows);
    for (const row of rows) await tx.add(projectId, envelope('webhook.deliver', { projectId, deliveryId: row.id }));
  }

  /**
   * The `webhook.deliver` job: sends a pending delivery and logs how it went. A failure throws,
   * so the queue tries again after its backoff, until `WEBHOOK_ATTEMPTS` mark it failed. A
   * delivery already settled, or whose webhook is gone, is skipped.
   */
  async deliver(projectId: string, deliveryId: string, ctx: JobContext): Promise<void> {
    const delivery = await this.repository.delivery(projectId, deliveryId);
    if (!delivery || delivery.status !== 'pending') return;
    const hook = await this.repository.get(projectId, delivery.webhook_id);
    if (!hook) return;
    const attempts = delivery.attempts + 1;
    const sent = await this.send(hook, delivery);
    const now = nowMs();
    if (sent.ok) {
      await this.repository.recordAttempt(delivery.id, { status: 'delivered', attempts, status_code: sent.statusCode, last_error: null, updated_at: now, delivered_at: now });
      return;
    }
    const last = attempts >= WEBHOOK_ATTEMPTS;
    await this.repository.recordAttempt(delivery.id, { status: last ? 'failed' : 'pending', attempts, status_code: sent.statusCode, last_error: sent.error, updated_at: now, delivered_at: null });
    if (last) {
      ctx.log.warn({ webhookId: hook.id, deliveryId, attempts, error: sent.error }, 'webhook delivery failed for good');
      return;
    }
    throw new Error(`webhook ${hook.id} delivery ${deliveryId} attempt ${attempts}: ${sent.error}`);
  }

  /** Closes the delivery connection pool. */
  close(): Promise<void> {
    return this.outbound.close();
  }

  private async send(hook: WebhookRow, delivery: WebhookDeliveryRow): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
    const url = new URL(hook.url);
    const refused = this.literalRefusal(url);
    if (refused) return { ok: false, statusCode: null, error: refused };
    try {
      const response = await request(url, {
        dispatcher: this.outbound.dispatcher,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Cairn-Webhook/1',
          [SIGNATURE_HEADER]: `sha256=${sign(hook.secret, delivery.body)}`,
          [TIMESTAMP_HEADER]: String(Math.floor(Date.now() / 1000)),
          'x-cairn-event': delivery.event,
          'x-cairn-delivery': delivery.id,
        },
        body: delivery.body,
        maxRedirections: 0,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      const text = (await response.body.text()).slice(0, 500);
      if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, statusCode: response.statusCode, error: null };
      return { ok: false, statusCode: response.statusCode, error: `HTTP ${response.statusCode}${text ? `: ${text}` : ''}` };
    } catch (err) {
      return { ok: false, statusCode: null, error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Scheme, port 0, a metadata host name, or a literal address the rules refuse (names are checked on their DNS answer when connecting). */
  private literalRefusal(url: URL): string | null {
    return urlFormRefusal(url, 'receive webhooks') ?? this.outbound.guard.hostRefusal(url.hostname);
  }

  /** A URL a webhook may be saved with: well formed, http(s), and every address it resolves to allowed. */
  private async checkUrl(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw badRequest('invalid_url', `url "${raw}" is not an absolute URL; send one such as https://example.com/hooks/mem0.`, [{ path: '/url', message: 'not an absolute URL' }]);
    }
    const refuse = (why: string) => badRequest('url_not_allowed', `url is not allowed: ${why}.`, [{ path: '/url', message: why }]);
    const refused = this.literalRefusal(url);
    if (refused) throw refuse(refused);
    const host = normalizeHost(url.hostname);
    const why = await this.outbound.refusal(host).catch(() => `host ${host} does not resolve`);
    if (why) throw refuse(why);
    return raw;
  }

  private async row(projectId: string, id: string): Promise<WebhookRow> {
    const row = await this.repository.get(projectId, id);
    if (!row) throw missing(id);
    return row;
  }
}

/** HMAC-SHA256 of the raw body with the webhook's secret, hex: what `X-Cairn-Signature` carries after `sha256=`. */
export function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The body of a delivery: mem0's `event_details` (`id`, `data.memory`, `event` ADD/UPDATE/DELETE),
 * with the memory's owner and metadata in `data`, plus the event type, ids and time.
 */
function payload(event: WebhookEvent, change: MemoryEvent, ids: { delivery: string; webhook: string; at: number }): Record<string, unknown> {
  const { row } = change;
  return {
    event_details: {
      id: row.id,
      data: {
        memory: row.memory,
        ...(change.previous !== undefined ? { previous_memory: change.previous } : {}),
        user_id: row.user_id,
        agent_id: row.agent_id,
        run_id: row.run_id,
        app_id: row.app_id,
        metadata: parseObject(row.metadata),
      },
      event: MEM0_EVENT[event],
    },
    event,
    webhook_id: ids.webhook,
    delivery_id: ids.delivery,
    created_at: iso(ids.at),
  };
}

function checkEvents(types: string[]): WebhookEvent[] {
  const unknown = types.filter((t) => !(WEBHOOK_EVENTS as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw badRequest('invalid_event_type', `Unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}; use ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  return [...new Set(types)] as WebhookEvent[];
}

const parseEvents = (text: string): string[] => JSON.parse(text) as string[];

function parseObject(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const missing = (id: string) => notFound(`There is no webhook with id "${id}" in this project.`, 'webhook_not_found');

function view(row: WebhookRow): WebhookView {
  return {
    webhook_id: row.id,
    name: row.name,
    url: row.url,
    project: row.project_id,
    event_types: parseEvents(row.event_types) as WebhookEvent[],
    is_active: Boolean(row.is_active),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function deliveryView(row: WebhookDeliveryRow): DeliveryView {
  return {
    id: row.id,
    event: row.event,
    memory_id: row.memory_id,
    status: row.status,
    attempts: row.attempts,
    status_code: row.status_code,
    last_error: row.last_error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    delivered_at: row.delivered_at === null ? null : iso(row.delivered_at),
  };
}
