import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { ApiError } from '../../core/http/api-error.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { statement } from '../../core/prisma/sql.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import { isValidSignature, secretsEqual } from './webhook-signature.js';

export const INVALID_SIGNATURE = 'Invalid or missing X-Hub-Signature-256';
export const VERIFICATION_FAILED = 'Webhook verification failed';

const storeDelivery = statement(
  'store_delivery',
  `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids) VALUES ($1, $2, $3::text[]) RETURNING id`,
);

/** Enqueueing must not hold up Meta's request: past this the sweeper picks the delivery up instead. */
const ENQUEUE_TIMEOUT_MS = 250;

/**
 * The hot path for Meta's POSTs: verify, store the raw bytes durably (one INSERT), enqueue, answer.
 * Classification and every effect happen in the worker, so the answer does not wait on them.
 */
@Injectable()
export class WebhookReceiverService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly queue: DeliveryQueue,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

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
    let deliveryId: number;
    try {
      // One statement on node-postgres (this is the hottest write of the service); the bytes as received.
      const { rows } = await this.prisma.pool.query<{ id: number }>(storeDelivery([body, signature!, wabaIds]));
      deliveryId = rows[0]!.id;
    } catch (err) {
      // Never 200 without the payload being durable: Meta retries anything else.
      this.logger.error({ err }, 'webhook delivery could not be stored');
      throw new ApiError(503, 'Service Unavailable: the delivery could not be stored, retry later');
    }

    try {
      await this.queue.enqueue({ deliveryId }, deliveryJobIds.first(deliveryId), { timeoutMs: ENQUEUE_TIMEOUT_MS });
    } catch (err) {
      this.logger.warn({ err, deliveryId }, 'webhook delivery stored but not enqueued; the sweeper will enqueue it');
    }
    return { received: true };
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
    if (typeof id === 'string' && id !== '') ids.add(id);
  }
  return [...ids];
}
