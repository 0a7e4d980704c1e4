import {
  ROOT_CONTEXT,
  context,
  SpanKind,
  SpanStatusCode,
  propagation,
  trace,
  type Context,
  type Link,
} from '@opentelemetry/api';
import { tracingStarted } from './tracing-state.js';
import { isSampled, withUnsampled } from './unsampled.js';

function contextOf(traceparent: string): Context {
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/**
 * Runs a queue job inside a consumer span `process <queue>`. The job carries the trace context of what queued it
 * (`traces`, W3C traceparents): the span is a child of the first sampled one (else of the first), so a request and the
 * job it queued make one trace; a job that carries several requests' work (a webhook batch) is also linked to the
 * other sampled ones. A job that carries none (the sweeper's, the scheduled tasks') starts a trace of its own. When
 * the sampler leaves the job out (its request was left out), it runs with no span, as the request did
 * (server-spans.ts): its statements cost the instrumentations nothing. Tracing off: `run` only.
 */
export function inJobSpan<T>(
  queue: string,
  jobId: string | undefined,
  traces: readonly string[] | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (!tracingStarted()) return run();
  const sampled = (traces ?? []).filter(isSampled);
  const first = sampled[0] ?? traces?.[0];
  const parent = first ? contextOf(first) : ROOT_CONTEXT;
  const links = sampled
    .filter((tp) => tp !== first)
    .flatMap((tp): Link[] => {
      const spanContext = trace.getSpanContext(contextOf(tp));
      return spanContext ? [{ context: spanContext }] : [];
    });
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'process',
    'messaging.destination.name': queue,
    ...(jobId ? { 'messaging.message.id': jobId } : {}),
  };
  const tracer = trace.getTracer('bmapi-queue');
  const span = tracer.startSpan(`process ${queue}`, { kind: SpanKind.CONSUMER, links, attributes }, parent);
  if (!span.isRecording()) return context.with(withUnsampled(ROOT_CONTEXT, span), run);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await run();
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
