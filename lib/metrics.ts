import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one process. Each runtime owns its registry, so tests never collide. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly queueJobs: Gauge<'queue' | 'state'>;
  readonly outboxPending: Gauge;
  readonly chatTurns: Histogram<'status'>;
  readonly toolCalls: Counter<'status'>;
  readonly modelTokens: Counter<'direction'>;

  private readonly httpChildren = new Map<string, { observe(value: number): void }>();

  /** Records one request's latency; label children are cached, so the hot path hashes no labels. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.httpDuration.labels(method, route, String(status));
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** Records one chat turn: its outcome, server time, tool calls and model tokens. */
  observeTurn(turn: { status: string; seconds: number; toolCalls: readonly string[]; tokensIn: number; tokensOut: number }): void {
    this.chatTurns.labels(turn.status).observe(turn.seconds);
    for (const status of turn.toolCalls) this.toolCalls.labels(status).inc();
    if (turn.tokensIn > 0) this.modelTokens.labels('in').inc(turn.tokensIn);
    if (turn.tokensOut > 0) this.modelTokens.labels('out').inc(turn.tokensOut);
  }

  constructor(collect: { queueDepths: () => Promise<Array<Record<string, number | string>>>; outbox: () => Promise<number> }) {
    collectDefaultMetrics({ register: this.registry, prefix: 'cairn_' });
    this.httpDuration = new Histogram({
      name: 'cairn_http_request_duration_seconds',
      help: 'HTTP request latency by route template and status (its _count is the request count)',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.chatTurns = new Histogram({
      name: 'cairn_chat_turn_duration_seconds',
      help: 'Server time of agent chat turns by outcome (ok, escalated, blocked, failed)',
      labelNames: ['status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.toolCalls = new Counter({
      name: 'cairn_tool_calls_total',
      help: 'Agent tool calls by status (ok, error, timeout, denied, rate_limited, limit_exceeded)',
      labelNames: ['status'],
      registers: [this.registry],
    });
    this.modelTokens = new Counter({
      name: 'cairn_model_tokens_total',
      help: 'Language-model tokens of chat turns, in and out',
      labelNames: ['direction'],
      registers: [this.registry],
    });
    this.queueJobs = new Gauge({
      name: 'cairn_queue_jobs',
      help: 'Jobs per queue and state, read when scraped',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const depth of await collect.queueDepths()) {
            for (const [state, count] of Object.entries(depth)) {
              if (state !== 'queue' && typeof count === 'number') this.set({ queue: String(depth.queue), state }, count);
            }
          }
        } catch {
          // Queue backend unreachable: /readyz says so; the gauge just stays empty.
        }
      },
    });
    this.outboxPending = new Gauge({
      name: 'cairn_outbox_pending',
      help: 'Outbox entries not yet handed to the queue',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await collect.outbox());
        } catch {
          // Database unreachable: reported by /readyz.
        }
      },
    });
  }
}
