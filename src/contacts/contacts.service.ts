import { Injectable, Logger } from '@nestjs/common';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { BlockedUsersRepository } from '../accounts/users/blocked-users.repository.js';
import { MarketingPreferencesRepository } from '../accounts/users/marketing-preferences.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { readWindowOf } from '../auth/read-window.js';
import type { ConsoleScope } from '../auth/request-scope.js';
import { CampaignRecipientsRepository } from '../campaigns/campaign-recipients.repository.js';
import { UnitOfWork } from '../core/db/unit-of-work.js';
import { EventsRepository } from '../events/events.repository.js';
import { ConversationWindowsRepository } from '../messages/conversation-windows.repository.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { IdempotencyKeysRepository } from '../messages/send/idempotency-keys.repository.js';
import { WebhookDeliveriesRepository } from '../webhooks/deliveries/webhook-deliveries.repository.js';
import { ContactHash } from './contact-hash.js';
import { redactContact } from './webhook-body-redaction.js';

/** What an erasure removed, per kind of record (the answer and the audit entry). */
export interface ErasureCounts {
  messages: number;
  events: number;
  webhookBodiesRewritten: number;
  webhookBodiesDeleted: number;
  webhookItemsRemoved: number;
  campaignRecipients: number;
  conversationWindows: number;
  marketingPreferences: number;
  blockedUsers: number;
  idempotencyRecords: number;
  auditEntriesScrubbed: number;
}

/** Batch sizes: each batch is one short transaction (row locks only), so ingest never waits long behind an erasure. */
const MESSAGE_BATCH = 500;
const EVENT_BATCH = 1000;
const DELIVERY_BATCH = 100;

/**
 * One contact of one business account (a phone number or business-scoped user id, with the addresses the account's
 * messages pair it with): everything stored about them, exported or erased (docs/security.md, "A contact's data").
 */
@Injectable()
export class ContactsService {
  private readonly log = new Logger(ContactsService.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly messages: MessagesRepository,
    private readonly events: EventsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly recipients: CampaignRecipientsRepository,
    private readonly windows: ConversationWindowsRepository,
    private readonly preferences: MarketingPreferencesRepository,
    private readonly blocked: BlockedUsersRepository,
    private readonly idempotency: IdempotencyKeysRepository,
    private readonly audit: AuditService,
    private readonly hash: ContactHash,
  ) {}

  /**
   * One page of the contact's export: their messages after message `after` (oldest first, up to `limit`, with their
   * status events), and on every page what is small (events not about a message, campaign memberships, marketing
   * preferences, blocks, windows). `nextAfter`: pass it back for the next page; null on the last.
   */
  async export(operator: ConsoleScope, wabaId: string, contact: string, page: { after: number; limit: number }) {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    const window = readWindowOf(account);
    const addresses = await this.messages.addressesOf(account.id, [contact]);
    const messages = await this.messages.pageOfContact(account.id, addresses, {
      afterId: page.after,
      limit: page.limit + 1,
      ...window,
    });
    const more = messages.length > page.limit;
    const shown = messages.slice(0, page.limit);
    const wamids = shown.flatMap((m) => (m.upstreamMessageId === null ? [] : [m.upstreamMessageId]));
    const [statusEvents, contactEvents, campaigns, preferences, blocks, windows] = await Promise.all([
      wamids.length === 0
        ? Promise.resolve([])
        : this.events.pageOfContact(wabaId, { addresses: [], wamids }, { afterId: 0, limit: 10_000, ...window }),
      this.events.pageOfContact(wabaId, { addresses, wamids: [] }, { afterId: 0, limit: 10_000, ...window }),
      this.recipients.ofContact(account.id, addresses),
      this.preferences.ofContact(account.id, addresses),
      this.blocked.ofContact(account.id, addresses),
      this.windows.ofContact(wabaId, addresses),
    ]);
    const byWamid = new Map<string, typeof statusEvents>();
    for (const e of statusEvents) {
      if (e.messageId === null) continue;
      const list = byWamid.get(e.messageId) ?? [];
      list.push(e);
      byWamid.set(e.messageId, list);
    }
    await this.audit.record(
      operator,
      'contact.exported',
      { type: 'business_account', id: wabaId },
      { contact: this.hash.of(contact), after: page.after, messages: shown.length },
    );
    return {
      contact,
      addresses,
      wabaId,
      exportedAt: new Date().toISOString(),
      messages: shown.map((m) => ({
        id: m.id,
        direction: m.direction,
        phoneNumberId: m.phoneNumberId,
        to: m.to,
        from: m.from,
        userId: m.userId,
        type: m.type,
        templateName: m.templateName,
        templateLanguage: m.templateLanguage,
        content: m.content,
        status: m.status,
        upstreamMessageId: m.upstreamMessageId,
        error:
          m.errorCode === null && m.errorTitle === null
            ? null
            : { code: m.errorCode, title: m.errorTitle, detail: m.errorDetail, category: m.errorCategory },
        createdAt: m.createdAt.toISOString(),
        acceptedAt: m.acceptedAt?.toISOString() ?? null,
        sentAt: m.sentAt?.toISOString() ?? null,
        deliveredAt: m.deliveredAt?.toISOString() ?? null,
        readAt: m.readAt?.toISOString() ?? null,
        failedAt: m.failedAt?.toISOString() ?? null,
        pricing: m.pricingCategory === null ? null : { model: m.pricingModel, category: m.pricingCategory },
        statusHistory: (m.upstreamMessageId === null ? [] : (byWamid.get(m.upstreamMessageId) ?? [])).map((e) => ({
          status: e.status,
          at: e.upstreamTimestamp?.toISOString() ?? null,
          storedAt: e.createdAt.toISOString(),
          error: e.errorCode === null ? null : { code: e.errorCode, title: e.errorTitle, detail: e.errorDetail },
        })),
      })),
      events: contactEvents.map((e) => ({
        id: e.id,
        kind: e.kind,
        eventType: e.eventType,
        title: e.title,
        status: e.status,
        recipient: e.recipient,
        userId: e.userId,
        messageId: e.messageId,
        upstreamTimestamp: e.upstreamTimestamp?.toISOString() ?? null,
        createdAt: e.createdAt.toISOString(),
        raw: e.raw,
      })),
      campaigns: campaigns.map((c) => ({ ...c, createdAt: c.createdAt.toISOString() })),
      marketingPreferences: preferences.map((p) => ({ ...p, updatedAt: p.updatedAt.toISOString() })),
      blocks: blocks.map((b) => ({ ...b, createdAt: b.createdAt.toISOString() })),
      conversationWindows: windows.map((w) => ({ ...w, lastInboundAt: w.lastInboundAt.toISOString() })),
      nextAfter: more ? (shown[shown.length - 1]?.id ?? null) : null,
    };
  }

  /**
   * Erases the contact from the account, in bounded batches (each its own short transaction): messages lose content,
   * addresses and wamid (the rows stay for the counts), their events and the contact's events are deleted in every
   * partition, raw webhook bodies are rewritten without the contact's items (or deleted when nothing else is in
   * them), campaign recipients lose address and parameters, windows, preferences, blocks and idempotency records
   * go, audit entries naming the contact get its keyed hash instead. A contact with nothing stored erases nothing
   * (all counts 0). The audit entry holds the counts and the keyed hash, never the address.
   */
  async erase(operator: ConsoleScope, wabaId: string, contact: string): Promise<ErasureCounts> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    const addresses = await this.messages.addressesOf(account.id, [contact]);
    const counts: ErasureCounts = {
      messages: 0,
      events: 0,
      webhookBodiesRewritten: 0,
      webhookBodiesDeleted: 0,
      webhookItemsRemoved: 0,
      campaignRecipients: 0,
      conversationWindows: 0,
      marketingPreferences: 0,
      blockedUsers: 0,
      idempotencyRecords: 0,
      auditEntriesScrubbed: 0,
    };
    // Messages, each batch with its status events (found by the wamids the batch erases).
    for (;;) {
      const done = await this.uow.run(async (tx) => {
        const batch = await this.messages.eraseContactBatch(tx, account.id, addresses, MESSAGE_BATCH);
        counts.messages += batch.count;
        if (batch.wamids.length > 0) {
          for (;;) {
            const n = await this.events.eraseContactBatch(
              tx,
              wabaId,
              { addresses: [], wamids: batch.wamids },
              EVENT_BATCH,
            );
            counts.events += n;
            if (n < EVENT_BATCH) break;
          }
        }
        return batch.count < MESSAGE_BATCH;
      });
      if (done) break;
    }
    // The contact's other events (inbound items, statuses of messages erased before, preferences, …).
    for (;;) {
      const n = await this.uow.run((tx) =>
        this.events.eraseContactBatch(tx, wabaId, { addresses, wamids: [] }, EVENT_BATCH),
      );
      counts.events += n;
      if (n < EVENT_BATCH) break;
    }
    // Raw webhook bodies: the contact's items out, the other users' kept.
    let after = 0;
    for (;;) {
      const found = await this.deliveries.holding(wabaId, addresses, after, DELIVERY_BATCH);
      if (found.length === 0) break;
      // The batch's bodies in two statements (deleted, rewritten), not one per body: 10,000 messages mean ~20,000
      // bodies (bench/erasure.ts).
      const deleted: typeof found = [];
      const rewritten: { id: number; receivedAt: Date; rawBody: Buffer }[] = [];
      let removed = 0;
      for (const d of found) {
        const redaction = redactContact(d.rawBody, addresses);
        if (redaction.kind === 'unchanged') continue;
        removed += redaction.removed;
        if (redaction.kind === 'deleted') deleted.push(d);
        else rewritten.push({ id: d.id, receivedAt: d.receivedAt, rawBody: redaction.body });
      }
      await this.uow.run(async (tx) => {
        await this.deliveries.removeAll(tx, deleted);
        await this.deliveries.rewriteBodies(tx, rewritten);
      });
      counts.webhookItemsRemoved += removed;
      counts.webhookBodiesDeleted += deleted.length;
      counts.webhookBodiesRewritten += rewritten.length;
      after = found[found.length - 1]!.id;
      if (found.length < DELIVERY_BATCH) break;
    }
    const hash = this.hash.of(contact);
    await this.uow.run(async (tx) => {
      counts.campaignRecipients = await this.recipients.eraseContact(tx, account.id, addresses);
      counts.conversationWindows = await this.windows.eraseContact(tx, wabaId, addresses);
      counts.marketingPreferences = await this.preferences.eraseContact(tx, account.id, addresses);
      counts.blockedUsers = await this.blocked.eraseContact(tx, account.id, addresses);
      counts.idempotencyRecords = await this.idempotency.eraseContact(tx, account.id, addresses);
      counts.auditEntriesScrubbed = await this.audit.replaceContact(operator.organizationId, addresses, hash);
      await this.audit.record(
        operator,
        'contact.erased',
        { type: 'business_account', id: wabaId },
        {
          contact: hash,
          ...counts,
        },
      );
    });
    this.log.log({ wabaId, contact: hash, ...counts }, 'contact erased');
    return counts;
  }
}
