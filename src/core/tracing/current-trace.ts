import { context, propagation, trace } from '@opentelemetry/api';
import { tracingStarted } from './tracing-state.js';
import { unsampledTraceparent } from './unsampled.js';

/**
 * The W3C `traceparent` of the span running now (a request, a job), to be carried by the queue jobs it starts;
 * the trace id alone (flags 00) when the sampler left this work out; undefined when tracing is off or nothing is traced
 * here.
 */
export function currentTraceparent(): string | undefined {
  if (!tracingStarted()) return undefined;
  const active = context.active();
  const carrier: { traceparent?: string } = {};
  propagation.inject(active, carrier);
  return carrier.traceparent ?? unsampledTraceparent(active);
}

/** The ids of the span running now, for log lines (empty when tracing is off or nothing is traced). */
export function currentTraceIds(): { traceId?: string; spanId?: string } {
  if (!tracingStarted()) return {};
  const spanContext = trace.getSpanContext(context.active());
  return spanContext ? { traceId: spanContext.traceId, spanId: spanContext.spanId } : {};
}
