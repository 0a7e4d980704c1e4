import { Injectable, type OnModuleInit } from '@nestjs/common';
import { PgListener } from '../../core/db/pg-listener.js';
import {
  SEND_CONTEXT_CHANNEL,
  SendContextReader,
  type RecipientState,
  type SendContext,
  type SendContextQuery,
} from './send-context.reader.js';

/** Safety net only: a change normally reaches every API process within milliseconds through NOTIFY. */
export const SEND_CONTEXT_TTL_MS = 5_000;
const WINDOW_MS = 24 * 3600 * 1000;
const MAX_ENTRIES = 10_000;

type NumberAndTemplate = Omit<SendContext, 'lastInboundAt' | 'recipient'>;

interface Entry<T> {
  value: T;
  expiresAt: number;
}

interface AccountEntries {
  /** (number, template, language) → the number and template part of the context, found or not. */
  parts: Map<string, Entry<NumberAndTemplate>>;
  /** (number, recipient) → last inbound time; only OPEN windows are kept (see below). */
  windows: Map<string, Entry<Date>>;
  /** (number, recipient, with or without template) → blocked, and the marketing preference when a template was asked. */
  recipients: Map<string, Entry<RecipientState>>;
}

/**
 * The pre-send read, cached per API process and per business account, so a send usually costs no database
 * round trip before its insert.
 *
 * Invalidation crosses processes through PostgreSQL itself: triggers on `business_accounts`, `phone_numbers`
 * and `templates` NOTIFY `send_context` with the business account's id when a change commits, whoever made it
 * (a console sync in an API process, a template-status webhook or the credential check in the worker, a script). Every API process LISTENs on
 * one connection (PgListener) and drops that account's entries. While that connection is down nothing is
 * cached (and everything is dropped when it comes back), so a lost notification cannot leave a stale entry;
 * the TTL is a second safety net. A read that was in flight when an invalidation arrived is not cached.
 *
 * The recipient's state (blocked on the number, marketing preference) is invalidated like the rest: triggers on
 * `blocked_users` and `marketing_preferences` NOTIFY the same channel.
 *
 * A cached entry can only make a send pass that the database would pass a moment later (or refuse: Meta refuses it
 * then): a send about to be refused on cached state is checked again on a fresh read (PreSendChecks), so unblocking a
 * user or reconnecting a number and sending at once is never refused on what the cache had not heard yet.
 *
 * The 24 h window: only an open window is cached, until it closes (or the TTL). Windows only ever move
 * forward (the worker keeps the latest inbound time), so an open window cannot close early; a closed or
 * absent one is always read fresh, so "inbound message arrives → customer replies at once" never sees a
 * cached "closed".
 */
@Injectable()
export class SendContextCache implements OnModuleInit {
  private readonly accounts = new Map<string, AccountEntries>();
  private size = 0;
  /** Bumped by every invalidation: a read that started before one must not be cached. */
  private generation = 0;
  private listening = false;

  constructor(
    private readonly repository: SendContextReader,
    private readonly listener: PgListener,
  ) {}

  onModuleInit(): void {
    this.listener.subscribe(SEND_CONTEXT_CHANNEL, {
      notify: (payload) => (payload === '*' ? this.clear() : this.invalidate(payload)),
      listening: (on) => {
        this.listening = on;
        this.clear();
      },
    });
  }

  /**
   * The context of one send. `fresh`: read the database whatever is cached (and cache what was read), for a send about
   * to be refused: a refusal is made on the database's state, never on an entry that may predate a change committed a
   * moment ago (an unblock, a reconnect) whose notification has not arrived yet.
   */
  async get(businessAccountId: string, q: SendContextQuery, { fresh: bypass = false } = {}): Promise<SendContext> {
    const now = Date.now();
    const account = bypass ? undefined : this.accounts.get(businessAccountId);
    const partKey = `${q.phoneNumberId}\u0000${q.templateName ?? ''}\u0000${q.templateLanguage ?? ''}`;
    const windowKey = q.window ? `${q.phoneNumberId}\u0000${q.recipient}` : null;
    const fresh = <T>(entry: Entry<T> | undefined) => (entry && entry.expiresAt > now ? entry : undefined);
    const part = fresh(account?.parts.get(partKey));
    // The marketing preference is read only for a MARKETING template: the recipient's entry says whether it holds one.
    const marketing = q.templateName !== null && (part === undefined || part.value.templateCategory === 'MARKETING');
    const recipientKeyOf = (withMarketing: boolean) =>
      `${q.phoneNumberId}\u0000${q.recipient}\u0000${withMarketing ? 'm' : ''}`;
    const recipient = fresh(account?.recipients.get(recipientKeyOf(marketing)));
    const window = windowKey === null ? undefined : fresh(account?.windows.get(windowKey));
    if (part && recipient && (windowKey === null || window))
      return { ...part.value, recipient: recipient.value, lastInboundAt: window?.value ?? null };

    const generation = this.generation;
    // A new recipient of a cached number and template reads only its own part.
    const [parts, own] = await Promise.all([
      part ? part.value : this.repository.readParts(businessAccountId, q),
      this.repository.readRecipient(businessAccountId, q, { marketing }),
    ]);
    const context: SendContext = { ...parts, ...own };
    // Kept under the key the next send of this template will look for (read with the preference or not).
    const recipientKey = recipientKeyOf(q.templateName !== null && context.templateCategory === 'MARKETING');
    if (this.listening && generation === this.generation)
      this.store(businessAccountId, { partKey, windowKey, recipientKey }, context, Date.now());
    return context;
  }

  /** Drop every entry of one business account (its numbers or templates changed). */
  invalidate(businessAccountId: string): void {
    this.generation++;
    const account = this.accounts.get(businessAccountId);
    if (!account) return;
    this.size -= account.parts.size + account.windows.size + account.recipients.size;
    this.accounts.delete(businessAccountId);
  }

  private clear(): void {
    this.generation++;
    this.accounts.clear();
    this.size = 0;
  }

  private store(
    businessAccountId: string,
    keys: { partKey: string; windowKey: string | null; recipientKey: string },
    context: SendContext,
    now: number,
  ): void {
    if (this.size >= MAX_ENTRIES) this.clear();
    let account = this.accounts.get(businessAccountId);
    if (!account) {
      account = { parts: new Map(), windows: new Map(), recipients: new Map() };
      this.accounts.set(businessAccountId, account);
    }
    const { lastInboundAt, recipient, ...part } = context;
    const { partKey, windowKey, recipientKey } = keys;
    if (!account.parts.has(partKey)) this.size++;
    account.parts.set(partKey, { value: part, expiresAt: now + SEND_CONTEXT_TTL_MS });
    if (!account.recipients.has(recipientKey)) this.size++;
    account.recipients.set(recipientKey, { value: recipient, expiresAt: now + SEND_CONTEXT_TTL_MS });
    if (windowKey !== null && lastInboundAt) {
      const closesAt = lastInboundAt.getTime() + WINDOW_MS;
      if (closesAt > now) {
        if (!account.windows.has(windowKey)) this.size++;
        account.windows.set(windowKey, {
          value: lastInboundAt,
          expiresAt: Math.min(closesAt, now + SEND_CONTEXT_TTL_MS),
        });
      }
    }
  }
}
