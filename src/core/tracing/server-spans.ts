import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import { tracingStarted } from './tracing-state.js';
import { withUnsampled } from './unsampled.js';

/** Probes and scrapes: a span each every few seconds would bury the traces of real work. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

const ROUTE = Symbol('bmapi traced route');

/** The route of a request answered outside Express (the receiver's fast path), for its span's name. */
export function setTracedRoute(req: IncomingMessage, route: string): void {
  (req as IncomingMessage & { [ROUTE]?: string })[ROUTE] = route;
}

/**
 * `callback` bound to the trace context running now when tracing is on (a request the sampler left out keeps its trace
 * id through the stream events that call it back); `callback` itself when tracing is off, at no cost. The OTel context
 * only: Node 20's AsyncResource.bind, which would carry every store, builds two deprecation wrappers per call (~20 µs a
 * request in the receiver's profile).
 */
export function tracingContinues<A extends unknown[], R>(callback: (...args: A) => R): (...args: A) => R {
  return tracingStarted() ? context.bind(context.active(), callback) : callback;
}

/**
 * The server span of every request the API answers (Express's routes and the webhook receiver's node:http fast path
 * alike), in place of the HTTP instrumentation's: the sampler decides first, and a request it leaves out runs with no
 * span at all, so the PostgreSQL, Redis and outgoing HTTP instrumentations (which need a parent span) skip its
 * statements and its call to Meta at the cost of a look at the context. The HTTP instrumentation computed every
 * request's attributes, bound its streams and wrapped its statements whether sampled or not: with 1 request in 10
 * sampled, the receiver's CPU per delivery still rose 80 % (bench/history/2026-12-02-issue-39-topology.md). A webhook
 * left out still carries its trace id to the job it queues (unsampled.ts), so that the job follows its decision.
 *
 * The span is named `METHOD route` once the route is known (Express's matched pattern, or the fast path's), and
 * `url.path` is the path the request log shows (a credential in a path, the inbound media links' token, is never
 * written: the caller's `loggedPath`). No-op unless tracing runs in this process.
 */
export function traceServerRequests(
  server: Server,
  /** The path as the request log shows it (core/http/request-context.ts loggedPath), given by the caller. */
  loggedPath: (url: string | undefined, pattern: unknown) => string,
): void {
  if (!tracingStarted()) return;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  const tracer = trace.getTracer('bmapi-http');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const handle = () => {
      for (const listener of listeners) listener.call(server, req, res);
    };
    if (UNTRACED_PATHS.test(req.url ?? '')) return context.with(ROOT_CONTEXT, handle);
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = req.method ?? 'GET';
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) {
      // Left out: no span in the context at all (not even the caller's remote one, which the instrumentations would
      // take for a parent), only the trace id, for the synchronous part of the request; a handler that wants it past
      // the body's stream events binds its own callback (the receiver's fast path does: tracingContinues).
      context.with(withUnsampled(ROOT_CONTEXT, span), handle);
      return;
    }
    const ctx = trace.setSpan(parent, span);
    endWithResponse(span, req, res, loggedPath);
    // The request's stream events fire in the connection's context: bound, so that the handlers they call (the body
    // parsers, the receiver's commit) run in the request's span.
    context.bind(ctx, req);
    context.bind(ctx, res);
    context.with(ctx, handle);
  });
}

function endWithResponse(
  span: Span,
  req: IncomingMessage,
  res: ServerResponse,
  loggedPath: (url: string | undefined, pattern: unknown) => string,
): void {
  span.setAttributes({
    'http.request.method': req.method ?? 'GET',
    'url.scheme': 'http',
    'network.protocol.version': req.httpVersion,
    ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
    ...(req.socket.remoteAddress ? { 'client.address': req.socket.remoteAddress } : {}),
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    // Express's matched route (typed `any` by Express); the fast path answers before Express sees the request.
    const matched = (req as { route?: { path?: unknown } }).route?.path;
    const route =
      typeof matched === 'string'
        ? `${(req as { baseUrl?: string }).baseUrl ?? ''}${matched}`
        : (req as IncomingMessage & { [ROUTE]?: string })[ROUTE];
    const status = res.statusCode;
    span.setAttributes({
      'url.path': loggedPath(req.url, matched),
      'http.response.status_code': status,
      ...(route ? { 'http.route': route } : {}),
    });
    // Without a route (a 404), the method alone: a raw path would make a span name per message id.
    span.updateName(route ? `${req.method ?? 'GET'} ${route}` : (req.method ?? 'GET'));
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
}
