import { MilvusClient } from '@zilliz/milvus2-sdk-node';

export type { MilvusClient };

/** Connects to Milvus (or Milvus Lite) at `address`. */
export function createMilvus(address: string, token: string | null): MilvusClient {
  return new MilvusClient({ address, token: token ?? undefined, timeout: 10_000 });
}

/** Throws unless Milvus answers its health check as healthy. */
export async function pingMilvus(client: MilvusClient): Promise<void> {
  const health = await client.checkHealth();
  if (!health.isHealthy) throw new Error(`Milvus unhealthy: ${health.reasons.join('; ') || 'no reason given'}`);
}
