import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import type { Logger } from '../lib/logger.js';

export type { MilvusClient };

/**
 * The SDK pings every 10 s even on an idle connection. A gRPC server with the library's default
 * policy (Milvus Lite's) accepts a ping without data only every 5 minutes and, after two too early,
 * closes the connection (GOAWAY, "excess pings"): a call in flight then fails with
 * RESOURCE_EXHAUSTED "Bandwidth exhausted". Pinging only while calls are in flight keeps the
 * dead-connection check where it matters (a call waiting on a peer that is gone) and never upsets
 * such a server; Milvus itself accepts either.
 */
const CHANNEL_OPTIONS = { 'grpc.keepalive_permit_without_calls': 0 };

/**
 * The Milvus connection of a process. The SDK connects as soon as a client is made and keeps a
 * failed first connection as a rejected promise that every later call awaits; so a client whose
 * connection failed is dropped here and the next use connects afresh. Milvus being down at
 * start-up then delays vector work instead of crashing the process.
 */
export class MilvusConnection {
  private client: MilvusClient | null = null;

  constructor(
    private readonly address: string,
    private readonly token: string | null,
    private readonly log: Logger,
    private readonly timeoutMs = 10_000,
  ) {}

  /** A connected client; throws when Milvus cannot be reached (try again later). */
  async get(): Promise<MilvusClient> {
    const client = this.client ?? this.open();
    await client.connectPromise;
    return client;
  }

  /** Throws unless Milvus answers its health check as healthy. */
  async ping(): Promise<void> {
    const health = await (await this.get()).checkHealth();
    if (!health.isHealthy) throw new Error(`Milvus unhealthy: ${health.reasons.join('; ') || 'no reason given'}`);
  }

  /**
   * Makes the client at start-up rather than at the first vector call: the SDK loads its gRPC
   * definitions as a client is made, a few hundred ms of the event loop that the first search
   * (and every request waiting behind it) would otherwise pay. A Milvus that does not answer yet
   * is only logged; the next use connects afresh.
   */
  prepare(): void {
    if (this.client === null) this.open();
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await client.closeConnection().catch(() => undefined);
  }

  private open(): MilvusClient {
    const client = new MilvusClient({ address: this.address, token: this.token ?? undefined, timeout: this.timeoutMs, channelOptions: CHANNEL_OPTIONS });
    this.client = client;
    client.connectPromise.catch((err: unknown) => {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), address: this.address }, 'Milvus unreachable; will reconnect on next use');
      if (this.client === client) this.client = null;
      void client.closeConnection().catch(() => undefined);
    });
    return client;
  }
}
