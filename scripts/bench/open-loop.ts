import { Pool } from 'undici';

/** Latency figures of an open-loop run, in milliseconds. */
export interface OpenLoopFigures {
  rate: number;
  sent: number;
  completed: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Sends requests at an even `rate` per second for `seconds`, whatever the server's pace (open
 * loop), and measures each latency from the moment the request was due. A server that falls
 * behind therefore shows its queueing delay, instead of a closed-loop generator politely waiting
 * (coordinated omission) or a rate limiter firing each second's requests in one burst.
 */
export async function openLoop(options: {
  origin: string;
  path: string;
  headers: Record<string, string>;
  rate: number;
  seconds: number;
  connections: number;
}): Promise<OpenLoopFigures> {
  const pool = new Pool(options.origin, { connections: options.connections, pipelining: 1 });
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  let sent = 0;
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();

  const fire = (due: number): void => {
    const request = pool
      .request({ path: options.path, method: 'GET', headers: options.headers })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode < 200 || res.statusCode > 299) non2xx += 1;
        latencies.push(performance.now() - due);
        completed += 1;
      })
      .catch(() => {
        errors += 1;
      });
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  };

  while (sent < total) {
    const now = performance.now();
    const dueCount = Math.min(total, Math.floor(((now - start) / 1000) * options.rate) + 1);
    while (sent < dueCount) {
      fire(start + (sent / options.rate) * 1000);
      sent += 1;
    }
    // Yield to the event loop so responses are read; ~1 ms granularity keeps the pacing even.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  await pool.close();

  const measured = latencies.sort((a, b) => a - b);
  const at = (q: number): number => measured[Math.min(measured.length - 1, Math.floor(q * measured.length))] ?? NaN;
  return { rate: options.rate, sent, completed, non2xx, errors, p50: at(0.5), p99: at(0.99), max: measured[measured.length - 1] ?? NaN };
}
