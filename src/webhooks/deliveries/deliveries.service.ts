import { Inject, Injectable } from '@nestjs/common';
import type { WebhookDelivery } from '../../generated/prisma/client.js';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import { NotFoundError } from '../../core/http/api-error.js';
import { skipTake, toPage, type Page } from '../../core/http/pagination.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import type { DeliveriesQueryDto, DeliveryView } from './dto/deliveries.dto.js';

export const DELIVERY_NOT_FOUND = 'Delivery not found';
const MAX_INT4 = 2_147_483_647;

type DeliveryRow = Pick<WebhookDelivery, 'id' | 'status' | 'attempts' | 'lastError' | 'eventCount' | 'wabaIds' | 'receivedAt' | 'processedAt'>;
const SELECT = { id: true, status: true, attempts: true, lastError: true, eventCount: true, wabaIds: true, receivedAt: true, processedAt: true } as const;

/**
 * Raw webhook deliveries as the console sees them: an organization sees those that concern one of its
 * business accounts, and can replay one (typically a dead letter) once the cause is fixed.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly accounts: BusinessAccountsRepository,
    private readonly queue: DeliveryQueue,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async list(organizationId: string, query: DeliveriesQueryDto): Promise<Page<DeliveryView>> {
    const own = await this.ownWabaIds(organizationId);
    if (own.length === 0) return toPage([], 0, query);
    const where = { wabaIds: { hasSome: own }, status: query.status };
    const [rows, total] = await Promise.all([
      this.prisma.webhookDelivery.findMany({ where, select: SELECT, orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      this.prisma.webhookDelivery.count({ where }),
    ]);
    return toPage(
      rows.map((r) => toView(r, own)),
      total,
      query,
    );
  }

  /** Back to `received` with a fresh job; processing is idempotent, so only what is missing gets done. */
  async replay(organizationId: string, id: number): Promise<DeliveryView> {
    const own = await this.ownWabaIds(organizationId);
    if (own.length === 0 || !Number.isSafeInteger(id) || id < 1 || id > MAX_INT4) throw new NotFoundError(DELIVERY_NOT_FOUND);
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { id, wabaIds: { hasSome: own } },
      data: { status: 'received', attempts: 0, lastError: null, processedAt: null },
    });
    if (count === 0) throw new NotFoundError(DELIVERY_NOT_FOUND);
    try {
      await this.queue.enqueue({ deliveryId: id }, deliveryJobIds.replay(id));
    } catch (err) {
      // The row is `received` again: the worker's sweeper runs it even if this enqueue was lost.
      this.logger.warn({ err, deliveryId: id }, 'replayed delivery not enqueued; the sweeper will pick it up');
    }
    const row = await this.prisma.webhookDelivery.findUniqueOrThrow({ where: { id }, select: SELECT });
    return toView(row, own);
  }

  private async ownWabaIds(organizationId: string): Promise<string[]> {
    return (await this.accounts.list(organizationId)).map((a) => a.wabaId);
  }
}

/** Only the organization's own business accounts are shown: one delivery can batch several tenants' entries. */
function toView(r: DeliveryRow, own: string[]): DeliveryView {
  return {
    id: r.id,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    eventCount: r.eventCount,
    wabaIds: (r.wabaIds ?? []).filter((w) => own.includes(w)),
    receivedAt: r.receivedAt.toISOString(),
    processedAt: r.processedAt?.toISOString() ?? null,
  };
}
