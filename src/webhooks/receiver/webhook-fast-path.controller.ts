import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { envelope, SUCCESS } from '../../core/http/envelope.js';
import { tooLargeMessage } from '../../core/http/body-parsers.js';
import { httpAnswerOf, type HttpErrorAnswer } from '../../core/http/error-mapper.js';
import { requestIdOf, trackRequest } from '../../core/http/request-context.js';
import { logContext } from '../../core/logging/log-context.js';
import { setTracedRoute, tracingContinues } from '../../core/tracing/server-spans.js';
import type { Metrics } from '../../core/metrics/metrics.js';
import { signatureHeaderRefusal, type WebhookReceiverService } from './webhook-receiver.service.js';

const RECEIVER_PATH = '/webhooks/whatsapp';

interface FastPathDeps {
  receiver: WebhookReceiverService;
  logger: Logger;
  metrics: Metrics;
  limitBytes: number;
  /** The same security headers as every other answer, name and value in turn (plainHttpSecurityHeaders). */
  securityHeaders: readonly string[];
}

/**
 * Meta's POSTs to the receiver answered on node:http, in front of Express and Nest: the route is the hottest
 * of the service and has no guard, pipe or DTO to run, while Nest on Express costs several times node:http's
 * CPU per request. Everything a client sees is kept: the same WebhookReceiverService (signature over the raw
 * bytes, group commit, 200 only after the commit), the envelope and its error answers (the receiver's domain
 * errors through the one error mapper, as the exception filter answers them: 400, 401, 503; 413 for the body
 * limit; 500 masked), the x-request-id echo, the security headers and the one log line per request, the body
 * limit (WEBHOOK_BODY_LIMIT_BYTES). The Nest controller stays as the route's Swagger entry and answers whatever
 * the fast path leaves to it: other methods, and bodies with a Content-Encoding (Express inflates those). This is
 * the receiver's controller at the level of node:http: HTTP in, one call to the service, HTTP out.
 */
export function installWebhookFastPath(server: Server, deps: FastPathDeps): void {
  const others = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && isReceiverPath(req.url) && !encoded(req)) {
      handle(req, res, deps);
      return;
    }
    for (const listener of others) listener.call(server, req, res);
  });
}

/** The exact path, with any query string; other spellings go to Express, which answers them as before. */
function isReceiverPath(url: string | undefined): boolean {
  if (!url?.startsWith(RECEIVER_PATH)) return false;
  return url.length === RECEIVER_PATH.length || url[RECEIVER_PATH.length] === '?';
}

function encoded(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return encoding !== undefined && encoding.toLowerCase() !== 'identity';
}

function handle(req: IncomingMessage, res: ServerResponse, deps: FastPathDeps): void {
  const startedAt = process.hrtime.bigint();
  const id = requestIdOf(req.headers['x-request-id']);
  // The request id and the security headers go out with the answer (answerOf), in one writeHead.
  trackRequest(deps.logger, deps.metrics, req, res, id, startedAt, { route: RECEIVER_PATH, echoed: true });
  setTracedRoute(req, RECEIVER_PATH);
  const answer = answerOf(res, id, deps.securityHeaders);

  const signature = req.headers['x-hub-signature-256'];
  const refusal = signatureHeaderRefusal(Array.isArray(signature) ? signature.join(', ') : signature);
  if (refusal) {
    // Answered before the body is read, and the connection closed rather than drained.
    res.setHeader('connection', 'close');
    return sendError(answer, res, httpAnswerOf(refusal)!);
  }
  const tooLarge = () => {
    // What is left of the body is read and dropped, so that the connection stays usable.
    req.resume();
    answer(
      413,
      envelope(413, tooLargeMessage(deps.limitBytes), {
        errors: [{ field: 'body', message: `must be at most ${deps.limitBytes} bytes` }],
      }),
    );
  };
  if (Number(req.headers['content-length']) > deps.limitBytes) return tooLarge();

  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > deps.limitBytes) {
      refused = true;
      chunks.length = 0;
      tooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => res.destroy());
  req.on(
    'end',
    tracingContinues(() => {
      if (refused) return;
      // Entered here, once the body is in: the stream's events run in the connection's context, not the caller's (the
      // trace context, when tracing runs, is bound to this callback).
      logContext
        .run({ reqId: id }, () =>
          deps.receiver.receive(
            chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size),
            Array.isArray(signature) ? signature.join(', ') : signature,
          ),
        )
        .then(
          (data) => answer(200, envelope(200, SUCCESS, { data })),
          (err: unknown) => {
            const known = httpAnswerOf(err);
            if (known) return sendError(answer, res, known);
            deps.logger.error({ reqId: id, method: req.method, path: RECEIVER_PATH, err }, 'unhandled error');
            answer(500, envelope(500, 'Internal server error'));
          },
        );
    }),
  );
}

/** A domain error's answer (core/http/error-mapper.ts), as the exception filter gives it on the Nest route. */
function sendError(answer: Answer, res: ServerResponse, error: HttpErrorAnswer): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  answer(error.statusCode, envelope(error.statusCode, error.message, { errors: error.errors }));
}

type Answer = (status: number, body: unknown) => void;

/**
 * Answers with one writeHead: the security headers, the request id, the JSON body's type and length (headers set
 * before, as an error's Retry-After, are kept: Node merges them). At most one answer per request.
 */
function answerOf(res: ServerResponse, id: string, securityHeaders: readonly string[]): Answer {
  return (status, body) => {
    if (res.headersSent) return;
    const json = JSON.stringify(body);
    res.writeHead(status, [
      ...securityHeaders,
      'x-request-id',
      id,
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(json)),
    ]);
    res.end(json);
  };
}
