import type { AddressInfo } from 'node:net';
import { newProject, token, type TestRuntime } from './helpers.js';

/**
 * mem0's official JavaScript client (npm mem0ai, typed by the caller as `C`) talking to a test
 * runtime served on a local port; `close()` stops serving.
 */
export async function mem0Client<C>(t: TestRuntime, key: string): Promise<{ client: C; close(): Promise<void> }> {
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  // read once when the module loads: no telemetry to mem0's analytics from tests
  process.env.MEM0_TELEMETRY = 'false';
  const { MemoryClient } = (await import('mem0ai')) as unknown as { MemoryClient: new (o: { apiKey: string; host: string }) => C };
  return {
    client: new MemoryClient({ apiKey: key, host: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A new project of the test runtime with mem0's client on its key: the `Authorization` value, the client, and `close()`. */
export async function mem0Tenant<C>(t: TestRuntime): Promise<{ key: string; projectId: string; auth: string; client: C; close(): Promise<void> }> {
  const { key, projectId } = await newProject(t);
  return { key, projectId, auth: token(key), ...(await mem0Client<C>(t, key)) };
}

/** What a call of mem0's client that is expected to fail threw (the client's own error). */
export async function failure(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail');
}
