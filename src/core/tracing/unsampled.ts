import { createContextKey, type Context, type Span } from '@opentelemetry/api';

/**
 * The trace a request or job belongs to when the sampler left it out. Such work runs with no span in its context, so
 * that the instrumentations, which need a parent span, skip its statements and calls: only this id travels, to the
 * jobs it queues (current-trace.ts), whose own spans then follow the same decision (job-trace.ts).
 */
const UNSAMPLED = createContextKey('bmapi unsampled traceparent');

/** `parent` plus the W3C traceparent (flags 00) of `span`, a span the sampler did not record. */
export function withUnsampled(parent: Context, span: Span): Context {
  const { traceId, spanId } = span.spanContext();
  return parent.setValue(UNSAMPLED, `00-${traceId}-${spanId}-00`);
}

export function unsampledTraceparent(ctx: Context): string | undefined {
  return ctx.getValue(UNSAMPLED) as string | undefined;
}

/** Whether a W3C traceparent says its trace is sampled (the flags' last bit). */
export function isSampled(traceparent: string): boolean {
  const flags = Number.parseInt(traceparent.slice(-2), 16);
  return Number.isInteger(flags) && (flags & 1) === 1;
}
