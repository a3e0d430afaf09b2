import net from 'node:net';

/** Host and port of `host:port`, `scheme://host:port` or a URL without a port (`fallbackPort`). */
export function hostPort(address: string, fallbackPort: number): { host: string; port: number } {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  return { host: url.hostname, port: url.port === '' ? fallbackPort : Number(url.port) };
}

/** True when something accepts a TCP connection at `address` within `timeoutMs`. */
export function reachable(address: string, fallbackPort: number, timeoutMs = 1_500): Promise<boolean> {
  const { host, port } = hostPort(address, fallbackPort);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
