import { context, INVALID_SPAN_CONTEXT, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/**
 * Cairn's spans, through the OpenTelemetry API alone: the SDK (and its exporter) is started, once
 * per process, by the runtime when OTEL_EXPORTER_OTLP_ENDPOINT is set. Until then every helper
 * here calls straight through, so a process without tracing pays one boolean test per operation.
 */

let enabled = false;

/** Turns the helpers on or off; called by the runtime as it starts or stops the SDK. */
export function setTracing(on: boolean): void {
  enabled = on;
}

/** True while an OTLP exporter is running in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** The W3C trace context of a span (`traceparent`, `tracestate`), as it travels with a job. */
export type TraceCarrier = Record<string, string>;

const tracer = () => trace.getTracer('cairn');
/** What `work` gets without tracing: a span whose every method does nothing. */
const NOT_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** What a span is for: its kind, its attributes at start, and the context it starts in (default: the active one). */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  parent?: Context;
}

/**
 * Runs `work` in a span named `name`, active for everything `work` calls; the span ends with
 * `work`, marked as an error when it throws. Without tracing, `work` gets a span that records nothing.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  if (!enabled) return work(NOT_RECORDING);
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span its caller ends (one that outlives the code it wraps, such as a request whose
 * response is written after the middleware returns); `run` runs work with the span active.
 */
export function openSpan(name: string, options: SpanOptions): { span: Span; run: <T>(work: () => Promise<T>) => Promise<T> } {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, parent);
  const active = trace.setSpan(parent, span);
  return { span, run: (work) => context.with(active, work) };
}

/** Marks a span failed with the error's message. */
export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  if (err instanceof Error) span.recordException(err);
}

/**
 * Records a message sent to be handled elsewhere (a job queued): a producer span that ends at once,
 * whose context is returned for the consumer to continue from; undefined without tracing.
 */
export function producerSpan(name: string, attributes: Attributes): TraceCarrier | undefined {
  if (!enabled) return undefined;
  const span = tracer().startSpan(name, { kind: SpanKind.PRODUCER, attributes });
  const carrier: TraceCarrier = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  span.end();
  return carrier;
}

/**
 * The context a consumer's span starts in: the producer's when a carrier came with the message,
 * otherwise a new trace (never the context that happens to be active where the consumer runs).
 */
export function consumerParent(carrier: TraceCarrier | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

/** The context of an incoming request's `traceparent`/`tracestate` headers (the active one when it has none). */
export function remoteParent(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

export { SpanKind, SpanStatusCode, type Span };
