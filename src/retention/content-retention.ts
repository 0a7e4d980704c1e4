import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../core/config/app-config.js';
import type { Tx } from '../core/db/db.js';
import { UnitOfWork } from '../core/db/unit-of-work.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { EventsRepository } from '../events/events.repository.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { OrganizationsRepository, type ContentRetentionDue } from '../organizations/organizations.repository.js';
import { WebhookDeliveriesRepository } from '../webhooks/deliveries/webhook-deliveries.repository.js';

/** Rows per statement (one short transaction each). */
export const CONTENT_RETENTION_BATCH = 500;
/** Between two batches: the pass spreads its writes (and their WAL) instead of taking the disk in one go. */
const PAUSE_MS = 20;
const BATCH = CONTENT_RETENTION_BATCH;
const DAY_MS = 24 * 3600 * 1000;

/** What one organization's pass scrubbed. */
export interface ScrubbedCounts {
  messages: number;
  events: number;
  webhookBodies: number;
}

/**
 * Content retention (issue 41, item 3): once an organization's content is older than its retention (its own
 * setting, PATCH /organization/settings, else CONTENT_RETENTION_DAYS; 0 keeps it forever), what the messages said
 * is removed while the rows stay: `messages.content`, the message items' words in `events` (raw and the title's
 * detail) and the raw webhook bodies that concern only its accounts. Statuses, pricing, addresses, counts and
 * analytics are untouched. Run every PURGE_INTERVAL_SECONDS by one worker (the `content-retention` task), in batches
 * of CONTENT_RETENTION_BATCH rows with a pause between them; each organization's mark (`content_scrubbed_through`)
 * moves on only after all three tables are done, so a pass reads only what aged out since the last one, and a pass
 * cut short (a shutdown, an error) is simply done again from the old mark by the next. An audit entry of the
 * organization (no operator) records each pass that removed something, with its counts.
 */
@Injectable()
export class ContentRetention implements OnModuleDestroy {
  private stopped = false;

  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly accounts: BusinessAccountsRepository,
    private readonly messages: MessagesRepository,
    private readonly events: EventsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleDestroy(): void {
    this.stopped = true;
  }

  /** One pass over every organization whose retention is not "forever"; returns how many rows were scrubbed. */
  async pass(now = new Date()): Promise<number> {
    let total = 0;
    for (const organization of await this.organizations.contentRetentionDue(this.config.contentRetentionDays)) {
      if (this.stopped) break;
      const counts = await this.scrub(organization, now);
      total += counts.messages + counts.events + counts.webhookBodies;
    }
    return total;
  }

  /** One organization: everything created in [its mark, now − its days) loses its content, then the mark moves. */
  async scrub(organization: ContentRetentionDue, now = new Date()): Promise<ScrubbedCounts> {
    const counts: ScrubbedCounts = { messages: 0, events: 0, webhookBodies: 0 };
    const before = new Date(now.getTime() - organization.days * DAY_MS);
    if (organization.scrubbedThrough !== null && organization.scrubbedThrough >= before) return counts;
    const range = { since: organization.scrubbedThrough, before };
    // Every account the organization holds, disconnected ones included: their stored messages are its too.
    const accounts = await this.accounts.list(organization.id);
    if (accounts.length > 0) {
      const ids = accounts.map((a) => a.id);
      const wabaIds = accounts.map((a) => a.wabaId);
      counts.messages = await this.drain('messages', (tx) => this.messages.scrubContentBatch(tx, ids, range, BATCH));
      counts.events = await this.drain('events', (tx) => this.events.scrubContentBatch(tx, wabaIds, range, BATCH));
      counts.webhookBodies = await this.drain('webhook_deliveries', (tx) =>
        this.deliveries.scrubBodiesBatch(tx, wabaIds, range, BATCH),
      );
    }
    if (this.stopped) return counts;
    const scrubbed = counts.messages + counts.events + counts.webhookBodies;
    await this.uow.run(async () => {
      await this.organizations.markScrubbedThrough(organization.id, before);
      if (scrubbed > 0)
        await this.audit.recordForOrganization(
          organization.id,
          'content.scrubbed',
          { type: 'organization', id: organization.id },
          { retentionDays: organization.days, createdBefore: before.toISOString(), ...counts },
        );
    });
    if (scrubbed > 0)
      this.logger.info(
        { organizationId: organization.id, retentionDays: organization.days, before, ...counts },
        'content past its retention scrubbed',
      );
    return counts;
  }

  /** Batches of one table until one comes back short (the range holds no more) or the worker stops. */
  private async drain(table: string, batch: (tx: Tx) => Promise<number>): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const n = await this.uow.run(batch);
      total += n;
      this.metrics.contentScrubbed.inc({ table }, n);
      if (n < BATCH) break;
      await sleep(PAUSE_MS);
    }
    return total;
  }
}
