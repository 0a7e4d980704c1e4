import { AsyncLocalStorage } from 'node:async_hooks';
import { currentTraceIds } from '../tracing/current-trace.js';

/**
 * What every log line written while serving one request or running one job carries (merged into the line by the
 * logger's mixin, see logger.ts): the request's id, or the worker job's id and the deliveries it carries.
 */
export interface LogContext {
  readonly reqId?: string;
  readonly jobId?: string;
  readonly deliveryIds?: readonly number[];
  /** A webhook job: the requests that stored its deliveries (their reqId). */
  readonly reqIds?: readonly string[];
  /** A scheduled task's run (core/scheduling): which task. */
  readonly task?: string;
  /** A campaign run (campaigns/campaigns.worker.ts): which campaign. */
  readonly campaignId?: number;
}

const storage = new AsyncLocalStorage<LogContext>();

/**
 * The log context of the code running now, carried across awaits, timers and callbacks by AsyncLocalStorage
 * (what nestjs-pino does with pino-http, without a second logger or a middleware the webhook fast path would
 * have to imitate). Entered once per request (core/http/request-context.ts, the webhook fast path) and once per
 * worker job.
 */
export const logContext = {
  /** Runs `fn` (and everything it starts) with `context`. */
  run<T>(context: LogContext, fn: () => T): T {
    return storage.run(context, fn);
  },

  /**
   * Runs `fn` outside of any request or job: for work shared by several of them (a group commit's flush, a queue
   * job emitted for many requests' deliveries), whose lines would otherwise carry the id of whichever request
   * happened to start it. Each caller logs its own outcome in its own context.
   */
  detached<T>(fn: () => T): T {
    return storage.exit(fn);
  },

  current(): LogContext | undefined {
    return storage.getStore();
  },
};

/**
 * pino's mixin: the current context's fields, first on the line (the call's own fields win on a clash), and with
 * tracing on the ids of the span running now (`traceId`, `spanId`), so a line leads to its trace.
 */
export function logContextMixin(): object {
  const context = storage.getStore();
  return { ...context, ...currentTraceIds() };
}
