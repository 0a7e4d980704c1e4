import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  propagation,
  trace,
  type Context,
  type Link,
} from '@opentelemetry/api';
import { tracingStarted } from './tracing-state.js';

function contextOf(traceparent: string): Context {
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/**
 * Runs a queue job inside a consumer span `process <queue>`. The job carries the trace context of what queued it
 * (`traces`, W3C traceparents): the span is a child of the first, so a request and the job it queued make one trace;
 * a job that carries several requests' work (a webhook batch) is also linked to the others. A job that carries none
 * (the sweeper's, the scheduled tasks') starts a trace of its own. Tracing off: `run` only.
 */
export function inJobSpan<T>(
  queue: string,
  jobId: string | undefined,
  traces: readonly string[] | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (!tracingStarted()) return run();
  const [first, ...others] = traces ?? [];
  const parent = first ? contextOf(first) : ROOT_CONTEXT;
  const links = others.flatMap((tp): Link[] => {
    const spanContext = trace.getSpanContext(contextOf(tp));
    return spanContext ? [{ context: spanContext }] : [];
  });
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'process',
    'messaging.destination.name': queue,
    ...(jobId ? { 'messaging.message.id': jobId } : {}),
  };
  return trace
    .getTracer('bmapi-queue')
    .startActiveSpan(`process ${queue}`, { kind: SpanKind.CONSUMER, links, attributes }, parent, async (span) => {
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
