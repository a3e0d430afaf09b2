import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { OtelSettings } from '../lib/config.js';
import { setTracing } from '../lib/tracing.js';

/** The SDK of this process and how many runtimes use it (an API and a worker may share a process). */
let sdk: { provider: TracerProvider; users: number } | null = null;

/**
 * Starts the OpenTelemetry SDK for this process: spans batched and exported over OTLP/HTTP,
 * the W3C trace context read from requests and carried by jobs. The SDK is global, so runtimes
 * of one process share it; the returned function ends this runtime's use, and the last one
 * flushes what is left and turns tracing off.
 */
export function startTelemetry(settings: OtelSettings): () => Promise<void> {
  if (sdk === null) {
    const options = { url: settings.tracesUrl, headers: settings.headers };
    const exporter = settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    setTracing(true);
    sdk = { provider, users: 0 };
  }
  const running = sdk;
  running.users += 1;
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    running.users -= 1;
    if (running.users > 0) return;
    sdk = null;
    setTracing(false);
    await running.provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  };
}
