import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Forbidden, Malformed, TemporarilyUnavailable, Unauthenticated } from '../../core/errors/domain-errors.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { logContext } from '../../core/logging/log-context.js';
import { currentTraceparent } from '../../core/tracing/current-trace.js';
import { Metrics } from '../../core/metrics/metrics.js';
import { WebhookDeliveriesRepository, type IncomingDelivery } from '../deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import { GroupCommit } from '../../core/async/group-commit.js';
import { InFlight } from './in-flight.js';
import { JobWindow } from './job-window.js';
import { isValidSignature, isWellFormedSignature, secretsEqual } from './webhook-signature.js';

export const INVALID_SIGNATURE = 'Invalid or missing X-Hub-Signature-256';

/**
 * The refusal of a POST whose signature header is missing or malformed, given before its body is read (a body
 * of up to WEBHOOK_BODY_LIMIT_BYTES is not worth reading when it can never be accepted); undefined otherwise.
 */
export function signatureHeaderRefusal(header: unknown): Unauthenticated | undefined {
  return isWellFormedSignature(header) ? undefined : new Unauthenticated(INVALID_SIGNATURE);
}
export const VERIFICATION_FAILED = 'Webhook verification failed';

/**
 * One request's deliveries (one per business account, see splitByAccount), stored together, with its request id and
 * its trace context: both carried by the queue job, so the worker's lines name the requests that brought their
 * deliveries and the worker's span joins their traces.
 */
interface ReceivedRequest {
  parts: IncomingDelivery[];
  reqId?: string;
  trace?: string;
}

/** Enqueueing must not pile up while Redis is slow: past this the sweeper picks the batch up instead. */
const ENQUEUE_TIMEOUT_MS = 1000;

/**
 * The hot path for Meta's POSTs: verify, store the raw bytes durably, answer. Concurrent deliveries are
 * stored by one INSERT per short window (group commit, WEBHOOK_BATCH_WINDOW_MS / WEBHOOK_BATCH_MAX_ROWS):
 * each request is acknowledged only after the commit that holds its row, and every request of a batch
 * whose INSERT failed is refused with TemporarilyUnavailable (503 at the edge; nothing of it is stored). The
 * deliveries stored during one WEBHOOK_JOB_WINDOW_MS make one queue job (JobWindow); when Redis is down they
 * stay `received` and the worker's sweeper enqueues them under the same job id. Refusals are domain errors
 * (Unauthenticated, Forbidden, Malformed, TemporarilyUnavailable); the controllers answer them.
 */
@Injectable()
export class WebhookReceiverService implements OnModuleDestroy {
  /** An item is one request. */
  private readonly batches: GroupCommit<ReceivedRequest, number[]>;
  private readonly jobs: JobWindow;
  /** Enqueues under way (awaited at shutdown). */
  private readonly pending = new Set<Promise<void>>();
  /** Requests verified and waiting for the commit that holds their rows (ReceiverPressure reads it every tick). */
  readonly waiting = new InFlight();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly queue: DeliveryQueue,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {
    this.batches = new GroupCommit((requests) => this.store(requests), {
      windowMs: config.webhookBatchWindowMs,
      maxItems: config.webhookBatchMaxRows,
    });
    this.jobs = new JobWindow(config.webhookJobWindowMs, (key, ids, reqIds, traces) =>
      this.enqueue(key, ids, reqIds, traces),
    );
  }

  /** Meta's subscription handshake: the challenge when mode and token match, else Forbidden. */
  verifySubscription(query: URLSearchParams): string {
    const mode = query.get('hub.mode');
    const token = query.get('hub.verify_token');
    const challenge = query.get('hub.challenge');
    if (
      mode !== 'subscribe' ||
      token === null ||
      challenge === null ||
      !secretsEqual(token, this.config.whatsappVerifyToken)
    ) {
      throw new Forbidden(VERIFICATION_FAILED);
    }
    return challenge;
  }

  async receive(rawBody: Buffer | undefined, signature: string | undefined): Promise<{ received: true }> {
    const body = rawBody ?? Buffer.alloc(0);
    if (!isValidSignature(body, signature, this.config.whatsappAppSecret)) throw new Unauthenticated(INVALID_SIGNATURE);
    const parts = splitByAccount(body, signature!, parsePayload(body));
    this.waiting.enter();
    try {
      await this.batches.add({ parts, reqId: logContext.current()?.reqId, trace: currentTraceparent() });
      this.metrics.deliveriesReceived.inc(parts.length);
    } catch (err) {
      // Never 200 without the payload being durable: Meta retries anything else.
      this.logger.error({ err }, 'webhook delivery could not be stored');
      throw new TemporarilyUnavailable('Service Unavailable: the delivery could not be stored, retry later');
    } finally {
      this.waiting.leave();
    }
    return { received: true };
  }

  /** One INSERT for every delivery of these requests; each request gets its own ids back. */
  private async store(requests: ReceivedRequest[]): Promise<number[][]> {
    const reqIds = requests.flatMap((r) => (r.reqId ? [r.reqId] : []));
    const traces = requests.flatMap((r) => (r.trace ? [r.trace] : []));
    const ids = await this.jobs.write(
      (key) =>
        this.deliveries.storeBatch(
          key,
          requests.flatMap((r) => r.parts),
        ),
      reqIds,
      traces,
    );
    let at = 0;
    return requests.map((r) => ids.slice(at, (at += r.parts.length)));
  }

  /** Acknowledged deliveries are committed already; this waits for the batches being written and enqueues their jobs. */
  async onModuleDestroy(): Promise<void> {
    await this.batches.drain();
    this.jobs.flush();
    await Promise.allSettled([...this.pending]);
  }

  /** Not awaited by the requests: their deliveries are durable, and the sweeper covers a lost enqueue. */
  private enqueue(key: string, deliveryIds: number[], reqIds: string[], traces: string[]): void {
    const data = { deliveryIds, reqIds, ...(traces.length > 0 ? { traces } : {}) };
    const done: Promise<void> = this.queue
      .enqueue(data, deliveryJobIds.batch(key), { timeoutMs: ENQUEUE_TIMEOUT_MS })
      .catch((err: unknown) =>
        this.logger.warn(
          { err, deliveryIds },
          'webhook deliveries stored but not enqueued; the sweeper will enqueue them',
        ),
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }
}

function parsePayload(body: Buffer): WebhookPayload {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw new Malformed('Malformed JSON body');
  }
  const p = payload as { object?: unknown; entry?: unknown } | null;
  if (typeof p !== 'object' || p === null || p.object !== 'whatsapp_business_account') {
    throw new Malformed('Unsupported webhook object: expected whatsapp_business_account');
  }
  if (!Array.isArray(p.entry)) throw new Malformed('Webhook payload has no entry array');
  return p as WebhookPayload;
}

type WebhookPayload = { object: string; entry: unknown[] } & Record<string, unknown>;

/**
 * One stored delivery per business account (entry[].id). Meta sends one account per delivery; one that carries
 * several is stored as one delivery per account, each holding that account's entries only, so that processing
 * state, errors and replay belong to one tenant: an item of one account can neither block, show its error to,
 * nor be replayed by another. A single-account delivery keeps its bytes as received; a split one's parts are the
 * payload re-serialised with their own entries (the stored signature is the one of the whole delivery).
 * Entries without a usable id go together in a part of no account.
 */
function splitByAccount(body: Buffer, signature: string, payload: WebhookPayload): IncomingDelivery[] {
  const byAccount = new Map<string, unknown[]>();
  for (const entry of payload.entry) {
    const id = accountIdOf(entry);
    const entries = byAccount.get(id);
    if (entries) entries.push(entry);
    else byAccount.set(id, [entry]);
  }
  const wabaIdsOf = (id: string) => (id === '' ? [] : [id]);
  if (byAccount.size <= 1) return [{ rawBody: body, signature, wabaIds: wabaIdsOf([...byAccount.keys()][0] ?? '') }];
  return [...byAccount].map(([id, entry]) => ({
    rawBody: Buffer.from(JSON.stringify({ ...payload, entry })),
    signature,
    wabaIds: wabaIdsOf(id),
  }));
}

/** entry.id, or '' when it is not a usable account id (PostgreSQL text cannot hold NUL: it would fail the whole INSERT). */
function accountIdOf(entry: unknown): string {
  const id = (entry as { id?: unknown } | null)?.id;
  return typeof id === 'string' && !id.includes('\u0000') ? id : '';
}
