import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { ApiError } from '../../core/http/api-error.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { WebhookDeliveriesRepository, type IncomingDelivery } from '../deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import { GroupCommit } from './group-commit.js';
import { isValidSignature, secretsEqual } from './webhook-signature.js';

export const INVALID_SIGNATURE = 'Invalid or missing X-Hub-Signature-256';
export const VERIFICATION_FAILED = 'Webhook verification failed';

/** Enqueueing must not pile up while Redis is slow: past this the sweeper picks the batch up instead. */
const ENQUEUE_TIMEOUT_MS = 1000;

/**
 * The hot path for Meta's POSTs: verify, store the raw bytes durably, answer. Concurrent deliveries are
 * stored by one INSERT per short window (group commit, WEBHOOK_BATCH_WINDOW_MS / WEBHOOK_BATCH_MAX_ROWS):
 * each request is answered 200 only after the commit that holds its row, and every request of a batch
 * whose INSERT failed gets 503 (nothing of it is stored). Each stored batch is one queue job; when Redis
 * is down the deliveries stay `received` and the worker's sweeper enqueues them.
 */
@Injectable()
export class WebhookReceiverService implements OnModuleDestroy {
  private readonly batches: GroupCommit<IncomingDelivery, number>;
  /** Batch ids: unique across API processes (random prefix) and within one (counter). */
  private readonly batchPrefix = randomBytes(6).toString('base64url');
  private batchCounter = 0;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly queue: DeliveryQueue,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {
    this.batches = new GroupCommit((rows) => this.storeBatch(rows), { windowMs: config.webhookBatchWindowMs, maxItems: config.webhookBatchMaxRows });
  }

  /** Meta's subscription handshake: the challenge when mode and token match, else 403. */
  verifySubscription(query: URLSearchParams): string {
    const mode = query.get('hub.mode');
    const token = query.get('hub.verify_token');
    const challenge = query.get('hub.challenge');
    if (mode !== 'subscribe' || token === null || challenge === null || !secretsEqual(token, this.config.whatsappVerifyToken)) {
      throw new ApiError(403, VERIFICATION_FAILED);
    }
    return challenge;
  }

  async receive(rawBody: Buffer | undefined, signature: string | undefined): Promise<{ received: true }> {
    const body = rawBody ?? Buffer.alloc(0);
    if (!isValidSignature(body, signature, this.config.whatsappAppSecret)) throw new ApiError(401, INVALID_SIGNATURE);
    const wabaIds = wabaIdsOf(parsePayload(body));
    try {
      await this.batches.add({ rawBody: body, signature: signature!, wabaIds });
    } catch (err) {
      // Never 200 without the payload being durable: Meta retries anything else.
      this.logger.error({ err }, 'webhook delivery could not be stored');
      throw new ApiError(503, 'Service Unavailable: the delivery could not be stored, retry later');
    }
    return { received: true };
  }

  /** Deliveries already acknowledged are committed; this waits for the batches still being written. */
  async onModuleDestroy(): Promise<void> {
    await this.batches.drain();
  }

  private async storeBatch(rows: IncomingDelivery[]): Promise<number[]> {
    const batchId = `${this.batchPrefix}-${(this.batchCounter++).toString(36)}`;
    const ids = await this.deliveries.storeBatch(batchId, rows);
    // Not awaited by the requests: their deliveries are durable, and the sweeper covers a lost enqueue.
    this.queue.enqueue({ deliveryIds: ids }, deliveryJobIds.batch(batchId), { timeoutMs: ENQUEUE_TIMEOUT_MS }).catch((err: unknown) => {
      this.logger.warn({ err, deliveryIds: ids }, 'webhook deliveries stored but not enqueued; the sweeper will enqueue them');
    });
    return ids;
  }
}

function parsePayload(body: Buffer): { entry: unknown[] } {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError(400, 'Malformed JSON body');
  }
  const p = payload as { object?: unknown; entry?: unknown } | null;
  if (typeof p !== 'object' || p === null || p.object !== 'whatsapp_business_account') {
    throw new ApiError(400, 'Unsupported webhook object: expected whatsapp_business_account');
  }
  if (!Array.isArray(p.entry)) throw new ApiError(400, 'Webhook payload has no entry array');
  return { entry: p.entry };
}

/** The business accounts a delivery concerns (distinct entry[].id), for console scoping. */
function wabaIdsOf(payload: { entry: unknown[] }): string[] {
  const ids = new Set<string>();
  for (const entry of payload.entry) {
    const id = (entry as { id?: unknown } | null)?.id;
    // PostgreSQL text cannot hold NUL: such an id (never a real account's) would fail the whole batch's INSERT.
    if (typeof id === 'string' && id !== '' && !id.includes('\u0000')) ids.add(id);
  }
  return [...ids];
}
