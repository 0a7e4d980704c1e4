import type { IncomingMessage } from 'node:http';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
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

/** Probes and scrapes: a span each every few seconds would bury the traces of real work. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/**
 * Starts the tracer provider (W3C trace context, AsyncLocalStorage context) and the instrumentations this service
 * needs, nothing else: incoming and outgoing HTTP (the API's requests, axios' calls to Meta), Express (the route in
 * the server span's name; no span per middleware), PostgreSQL and Redis statements (only inside a traced request or
 * job: the worker's idle polling of its queues makes no traces). The queue jobs carry the trace context themselves
 * (job-trace.ts). Must run before the application's modules are imported (register.ts).
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
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.test(req.url ?? ''),
        requireParentforOutgoingSpans: true,
      }),
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER],
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  // Spans still buffered are sent before the process ends (the processes' shutdowns call flushTraces before process.exit).
  const flush = () => void provider.forceFlush().catch(() => undefined);
  process.once('beforeExit', flush);
  markTracingStarted(() => provider.forceFlush());
}

function processorOf(settings: TracingSettings): (kind: TracingSettings['exporters'][number]) => SpanProcessor {
  return (kind) => {
    if (kind === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter());
    const exporter = settings.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter();
    return new BatchSpanProcessor(exporter);
  };
}
