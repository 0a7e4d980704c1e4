import { Inject, Injectable } from '@nestjs/common';
import { readWindowOf } from '../../auth/read-window.js';
import {
  BUSINESS_ACCOUNT_NOT_FOUND,
  BusinessAccountsRepository,
} from '../../accounts/business-accounts/business-accounts.repository.js';
import { AuditService } from '../../audit/audit.service.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { isRowId } from '../../core/rows/row-id.js';
import { toPage, type Page } from '../../core/rows/page.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import { WebhookDeliveriesRepository, type AccountWindow, type DeliveryRow } from './webhook-deliveries.repository.js';
import type { AccountDeliveryHealthView, DeliveriesQueryDto, DeliveryView } from './dto/deliveries.dto.js';

export const DELIVERY_NOT_FOUND = 'Delivery not found';

/**
 * Raw webhook deliveries as the console sees them: an organization sees those that concern one of its
 * business accounts, and can replay one (typically a dead letter) once the cause is fixed.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly accounts: BusinessAccountsRepository,
    private readonly queue: DeliveryQueue,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditService,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async list(organizationId: string, query: DeliveriesQueryDto): Promise<Page<DeliveryView>> {
    const accounts = await this.ownAccounts(organizationId);
    const own = accounts.map((a) => a.wabaId);
    if (own.length === 0) return toPage([], 0, query);
    const { rows, total } = await this.deliveries.listForAccounts(accounts, query);
    return toPage(
      rows.map((r) => toView(r, own)),
      total,
      query,
    );
  }

  /**
   * The organization's own queue view (instead of the shared Bull Board): per business account, deliveries
   * waiting, dead letters and the processing lag. `wabaId` narrows it to one account (404 if not theirs).
   */
  async health(organizationId: string, wabaId?: string, now = Date.now()): Promise<AccountDeliveryHealthView[]> {
    const own = await this.ownWabaIds(organizationId);
    if (wabaId !== undefined && !own.includes(wabaId)) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    const wanted = wabaId !== undefined ? [wabaId] : own;
    if (wanted.length === 0) return [];
    const backlog = new Map((await this.deliveries.backlogForAccounts(wanted)).map((b) => [b.wabaId, b]));
    return wanted.map((w) => {
      const b = backlog.get(w);
      const oldest = b?.oldestPendingAt ?? null;
      return {
        wabaId: w,
        pending: b?.pending ?? 0,
        failed: b?.failed ?? 0,
        oldestPendingAt: oldest?.toISOString() ?? null,
        lagSeconds: oldest ? Math.max(0, Math.floor((now - oldest.getTime()) / 1000)) : 0,
      };
    });
  }

  /** Back to `received` with a fresh job; processing is idempotent, so only what is missing gets done. */
  async replay(operator: ConsoleScope, id: number): Promise<DeliveryView> {
    const accounts = await this.ownAccounts(operator.organizationId);
    const own = accounts.map((a) => a.wabaId);
    if (own.length === 0 || !isRowId(id)) throw new NotFound(DELIVERY_NOT_FOUND);
    // Audited with the reset (audit 3, finding 10): a replay applies a delivery's effects again.
    const row = await this.uow.run(async (tx) => {
      const reset = await this.deliveries.resetForReplay(accounts, id, tx);
      if (reset)
        await this.audit.record(
          operator,
          'webhook_delivery.replayed',
          { type: 'webhook_delivery', id: String(id) },
          { wabaIds: reset.wabaIds.filter((w) => own.includes(w)) },
        );
      return reset;
    });
    if (!row) throw new NotFound(DELIVERY_NOT_FOUND);
    try {
      await this.queue.enqueue({ deliveryIds: [id] }, deliveryJobIds.replay(id));
    } catch (err) {
      // The row is `received` again: the worker's sweeper runs it even if this enqueue was lost.
      this.logger.warn({ err, deliveryId: id }, 'replayed delivery not enqueued; the sweeper will pick it up');
    }
    return toView(row, own);
  }

  private async ownWabaIds(organizationId: string): Promise<string[]> {
    return (await this.accounts.list(organizationId)).map((a) => a.wabaId);
  }

  /** The organization's accounts, each with the window of its history the organization may read. */
  private async ownAccounts(organizationId: string): Promise<AccountWindow[]> {
    return (await this.accounts.list(organizationId)).map((a) => ({ wabaId: a.wabaId, ...readWindowOf(a) }));
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
