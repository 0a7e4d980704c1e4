import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { markTracingStarted } from './tracing-state.js';
import type { TracingSettings } from './tracing-settings.js';

/**
 * Starts the tracer provider (W3C trace context, AsyncLocalStorage context) and the instrumentations this service
 * needs, nothing else: outgoing HTTP (axios' calls to Meta), PostgreSQL and Redis statements, each only inside a
 * sampled request or job (the worker's idle polling of its queues makes no traces). The API's requests get their server
 * spans from server-spans.ts and the queue jobs theirs from job-trace.ts, both sampler first. Must run before the application's modules are imported (register.ts).
 */
export function startTracing(settings: TracingSettings): void {
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: settings.exporters.map(processorOf(settings)) });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Outgoing calls only (axios' to Meta): the API opens its requests' server spans itself, sampler first
      // (server-spans.ts). A call outside a recorded span is left alone at once: with only requireParentforOutgoingSpans
      // the instrumentation still computed its attributes, injected headers and bound the request's callbacks and
      // emitters for every call (+14 % of the API's CPU per send at 1 % sampling, bench/tracing.ts).
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: true,
        requireParentforOutgoingSpans: true,
        ignoreOutgoingRequestHook: () => !inRecordedSpan(),
      }),
      // The statements, not the pool's checkouts: a sampled webhook job or send checks a connection out per
      // transaction, and a `pg-pool.connect` span each said nothing the statement spans under it do not.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  // Spans still buffered are sent before the process ends (the processes' shutdowns call flushTraces before process.exit).
  const flush = () => void provider.forceFlush().catch(() => undefined);
  process.once('beforeExit', flush);
  markTracingStarted(() => provider.forceFlush());
}

/** Whether the code running now is part of a sampled trace (a request or job the sampler left out runs with no span). */
function inRecordedSpan(): boolean {
  return trace.getSpan(context.active())?.isRecording() === true;
}

function processorOf(settings: TracingSettings): (kind: TracingSettings['exporters'][number]) => SpanProcessor {
  return (kind) => {
    if (kind === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter());
    const exporter = settings.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter();
    return new BatchSpanProcessor(exporter);
  };
}
