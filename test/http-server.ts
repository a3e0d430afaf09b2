import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for the HTTP APIs agents' tools call: a local server that records what it is sent.

/** One request a test server got. */
export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  /** `http://127.0.0.1:PORT` */
  base: string;
  port: number;
  requests: Seen[];
  close(): Promise<void>;
}

/** A local server on 127.0.0.1 that records every request it gets and answers with `handler`. */
export async function serve(handler: (req: Seen, res: http.ServerResponse) => void): Promise<TestServer> {
  const requests: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with a JSON body. */
export const json = (res: http.ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};
