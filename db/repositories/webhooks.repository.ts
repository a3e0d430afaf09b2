import type { Knex } from 'knex';

export interface WebhookRow {
  id: string;
  project_id: string;
  name: string;
  url: string;
  /** JSON array of mem0 event types. */
  event_types: string;
  secret: string;
  is_active: boolean | number;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveryRow {
  id: string;
  project_id: string;
  webhook_id: string;
  event: string;
  memory_id: string;
  /** The exact JSON body sent (and signed). */
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** Webhooks and their deliveries, every read scoped by project. */
export class WebhooksRepository {
  constructor(private readonly db: Knex) {}

  async insert(row: WebhookRow): Promise<void> {
    await this.db('webhooks').insert(row);
  }

  async get(projectId: string, id: string, db: Knex = this.db): Promise<WebhookRow | undefined> {
    return (await db<WebhookRow>('webhooks').where({ project_id: projectId, id }).first()) as WebhookRow | undefined;
  }

  /** A project's webhooks, newest first. */
  async list(projectId: string, db: Knex = this.db): Promise<WebhookRow[]> {
    return (await db<WebhookRow>('webhooks').where({ project_id: projectId }).orderBy('created_at', 'desc').orderBy('id', 'desc')) as WebhookRow[];
  }

  async update(projectId: string, id: string, change: Partial<Pick<WebhookRow, 'name' | 'url' | 'event_types' | 'updated_at'>>): Promise<number> {
    return this.db('webhooks').where({ project_id: projectId, id }).update(change);
  }

  /** Deletes a webhook with its delivery log; 0 when it was not there. */
  async delete(projectId: string, id: string): Promise<number> {
    return this.db.transaction(async (trx): Promise<number> => {
      await trx('webhook_deliveries').where({ project_id: projectId, webhook_id: id }).delete();
      return trx('webhooks').where({ project_id: projectId, id }).delete();
    });
  }

  async addDeliveries(trx: Knex.Transaction, rows: WebhookDeliveryRow[]): Promise<void> {
    if (rows.length > 0) await trx.batchInsert('webhook_deliveries', rows, 200);
  }

  async delivery(projectId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
    return (await this.db<WebhookDeliveryRow>('webhook_deliveries').where({ project_id: projectId, id }).first()) as WebhookDeliveryRow | undefined;
  }

  /** Records how an attempt went, unless the delivery was settled meanwhile. */
  async recordAttempt(id: string, change: Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'status_code' | 'last_error' | 'updated_at' | 'delivered_at'>): Promise<void> {
    await this.db('webhook_deliveries').where({ id, status: 'pending' }).update(change);
  }

  /**
   * Deletes up to `limit` settled deliveries (delivered or failed; never one still pending)
   * recorded before `before` (epoch ms); returns how many it deleted.
   */
  async pruneDeliveries(before: number, limit: number): Promise<number> {
    const old = (await this.db('webhook_deliveries').where('created_at', '<', before).whereNot('status', 'pending').orderBy('created_at').limit(limit).select('id')) as Array<{ id: string }>;
    if (old.length === 0) return 0;
    return this.db('webhook_deliveries')
      .whereIn(
        'id',
        old.map((d) => d.id),
      )
      .whereNot('status', 'pending')
      .delete();
  }

  /** A webhook's deliveries, newest first. */
  async deliveries(projectId: string, webhookId: string, limit: number, offset: number): Promise<WebhookDeliveryRow[]> {
    return (await this.db<WebhookDeliveryRow>('webhook_deliveries')
      .where({ project_id: projectId, webhook_id: webhookId })
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)) as WebhookDeliveryRow[];
  }
}
