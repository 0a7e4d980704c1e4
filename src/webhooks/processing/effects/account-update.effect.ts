import { Inject, Injectable } from '@nestjs/common';
import {
  BusinessAccountsRepository,
  type LockedStanding,
} from '../../../accounts/business-accounts/business-accounts.repository.js';
import {
  PhoneNumbersRepository,
  type NumberNameDecision,
  type NumberQualityUpdate,
} from '../../../accounts/phone-numbers/phone-numbers.repository.js';
import { standingAfter, type Restriction, type StandingChange } from '../../../accounts/standing/account-standing.js';
import {
  MarketingPreferencesRepository,
  type MarketingPreferenceChange,
} from '../../../accounts/users/marketing-preferences.repository.js';
import { APP_LOGGER, type AppLogger } from '../../../core/logging/app-logger.js';
import type { Tx } from '../../../core/db/db.js';
import { isRecord, type JsonRecord } from '../../../events/classify.js';
import type { AccountStandings, NumberUpdates, PreferenceChanges } from '../processing.ports.js';
import type { EffectItem, EventEffect, PreparedEffect } from './event-effect.js';

/** Fields whose effect is the account's standing (ban, restrictions, violation, pricing tiers, alerts). */
const STANDING_FIELDS = new Set(['account_update', 'account_alerts']);

/**
 * Account-level changes. Applied, set-based per chunk, in the chunk's transaction:
 * - `account_update` and `account_alerts`: the account's standing (accounts/standing/account-standing.ts). The
 *   accounts are locked in `prepare` (id order), the owned changes folded in order in memory, each changed
 *   account written once. A DISABLE ban or a restriction in force refuses sends before any upstream call.
 * - `phone_number_quality_update`: the number's messaging limit, FLAGGED/UNFLAGGED status and quality rating.
 * - `phone_number_name_update`: the number's name status (and verified name once approved).
 * - `user_preferences`: the user's marketing preference (stop/resume), per business account, by phone and by user id.
 * - `account_update` MM_LITE_TERMS_SIGNED: the account is onboarded to the Marketing Messages API (its MARKETING
 *   templates go to /marketing_messages from now on). The account is the webhook's own (entry id), never the
 *   `waba_info.waba_id` of the payload, so a payload cannot name another tenant's account.
 * Numbers are named by their display number in these webhooks. Everything else (account reviews, capability
 * updates, unknown fields) is stored and logged only. Every one is also logged, so operators see them in the
 * worker's log as well as in the console.
 */
@Injectable()
export class AccountUpdateEffect implements EventEffect {
  constructor(
    @Inject(BusinessAccountsRepository) private readonly accounts: AccountStandings,
    @Inject(PhoneNumbersRepository) private readonly numbers: NumberUpdates,
    @Inject(MarketingPreferencesRepository) private readonly preferences: PreferenceChanges,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'account_update';
  }

  async prepare<T extends EffectItem>(tx: Tx, items: T[]): Promise<PreparedEffect<T>> {
    const wabaIds = [...new Set(items.filter((i) => STANDING_FIELDS.has(i.eventType)).map((i) => i.wabaId))];
    const locked = await this.accounts.lockStandings(tx, wabaIds);
    return { waiting: [], apply: (owned) => this.apply(tx, locked, owned) };
  }

  private async apply<T extends EffectItem>(tx: Tx, locked: LockedStanding[], owned: T[]): Promise<void> {
    // The payload can hold personal data (names, phone numbers): it is stored on the event, and logged only at debug.
    for (const e of owned) {
      this.logger.info({ wabaId: e.wabaId, eventType: e.eventType }, 'account-level webhook event');
      this.logger.debug({ wabaId: e.wabaId, raw: e.raw }, 'account-level webhook payload');
    }
    const inOrder = [...owned].sort((a, b) => timeOf(a).getTime() - timeOf(b).getTime());

    const byWaba = new Map(locked.map((s) => [s.wabaId, s]));
    const changed = new Set<LockedStanding>();
    for (const item of inOrder) {
      const standing = byWaba.get(item.wabaId);
      if (!standing) continue;
      for (const change of standingChangesOf(item)) {
        const next = standingAfter(standing, change);
        if (next === standing) continue;
        Object.assign(standing, next);
        changed.add(standing);
      }
    }
    await this.accounts.writeStandings(tx, [...changed]);
    await this.numbers.applyQualityUpdates(tx, foldQualityUpdates(inOrder));
    await this.numbers.applyNameDecisions(tx, newestNameDecisions(inOrder));
    await this.preferences.record(tx, inOrder.flatMap(preferenceChangesOf));
    await this.accounts.markMarketingMessagesOnboarded(tx, marketingOnboardingsOf(inOrder));
  }
}

const timeOf = (item: Pick<EffectItem, 'upstreamTimestamp' | 'createdAt'>): Date =>
  item.upstreamTimestamp ?? item.createdAt ?? new Date();
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** The items of this phone-number field with the number they name: its display number, as digits (webhooks carry no id). */
function* numberItems(
  items: EffectItem[],
  eventType: string,
): Generator<{ item: EffectItem; v: JsonRecord; displayDigits: string }> {
  for (const item of items) {
    if (item.eventType !== eventType) continue;
    const v = isRecord(item.raw) ? item.raw : {};
    const displayDigits = (text(v.display_phone_number) ?? '').replace(/\D/g, '');
    if (displayDigits) yield { item, v, displayDigits };
  }
}

/** A user_preferences item's marketing preference, once per address it names (phone digits, BSUID); none for other categories. */
export function preferenceChangesOf(
  item: Pick<EffectItem, 'eventType' | 'wabaId' | 'recipient' | 'userId' | 'raw' | 'upstreamTimestamp' | 'createdAt'>,
): MarketingPreferenceChange[] {
  if (item.eventType !== 'user_preferences') return [];
  const v = isRecord(item.raw) ? item.raw : {};
  const value = text(v.value);
  if (text(v.category) !== 'marketing_messages' || (value !== 'stop' && value !== 'resume')) return [];
  return [item.recipient, item.userId]
    .filter((u): u is string => u !== null)
    .map((user) => ({
      wabaId: item.wabaId,
      user,
      value,
      source: 'user_preferences' as const,
      detail: text(v.detail),
      at: timeOf(item),
    }));
}

/** The accounts that signed the Marketing Messages API terms (account_update MM_LITE_TERMS_SIGNED), with Meta's time. */
export function marketingOnboardingsOf(items: EffectItem[]): { wabaId: string; at: Date }[] {
  return items
    .filter((i) => i.eventType === 'account_update' && isRecord(i.raw) && i.raw.event === 'MM_LITE_TERMS_SIGNED')
    .map((i) => ({ wabaId: i.wabaId, at: timeOf(i) }));
}

/** What an account_update or account_alerts webhook changes in the account's standing (Meta's shapes). */
export function standingChangesOf(
  item: Pick<EffectItem, 'eventType' | 'raw' | 'upstreamTimestamp' | 'createdAt'>,
): StandingChange[] {
  const v = isRecord(item.raw) ? item.raw : {};
  const at = timeOf(item);
  if (item.eventType === 'account_alerts') {
    return [
      {
        kind: 'alert',
        at,
        alert: {
          type: text(v.alert_type),
          severity: text(v.alert_severity),
          status: text(v.alert_status),
          description: text(v.alert_description),
          entityType: text(v.entity_type),
          entityId: text(v.entity_id) ?? (typeof v.entity_id === 'number' ? String(v.entity_id) : null),
        },
      },
    ];
  }
  if (item.eventType !== 'account_update') return [];
  const changes: StandingChange[] = [];
  const ban = isRecord(v.ban_info) ? v.ban_info : undefined;
  if (ban && text(ban.waba_ban_state))
    changes.push({ kind: 'ban', state: text(ban.waba_ban_state)!, date: text(ban.waba_ban_date), at });
  if (v.event === 'ACCOUNT_RESTRICTION' || Array.isArray(v.restriction_info)) {
    const restrictions: Restriction[] = (Array.isArray(v.restriction_info) ? v.restriction_info : [])
      .filter(isRecord)
      .filter((r) => text(r.restriction_type) !== null)
      .map((r) => ({ type: text(r.restriction_type)!, expiration: text(r.expiration) }));
    changes.push({ kind: 'restrictions', restrictions, at });
  }
  const violation = isRecord(v.violation_info) ? text(v.violation_info.violation_type) : null;
  if (violation) changes.push({ kind: 'violation', violationType: violation, at });
  const tier = isRecord(v.volume_tier_info) ? v.volume_tier_info : undefined;
  if (tier) {
    changes.push({
      kind: 'pricing_tier',
      at,
      tier: {
        pricingCategory: text(tier.pricing_category),
        region: text(tier.region),
        tier: text(tier.tier),
        effectiveMonth: text(tier.effective_month),
      },
    });
  }
  return changes;
}

/** One update per number (wabaId, display digits): a chunk's quality webhooks folded in time order. */
export function foldQualityUpdates(items: EffectItem[]): NumberQualityUpdate[] {
  const folded = new Map<string, NumberQualityUpdate>();
  for (const { item, v, displayDigits } of numberItems(items, 'phone_number_quality_update')) {
    const event = text(v.event);
    const flag = event === 'FLAGGED' || event === 'UNFLAGGED' ? event : null;
    // Meta raises FLAGGED when the number's quality rating reaches low (RED); a rating in the payload wins.
    const qualityRating = text(v.quality_rating) ?? (flag === 'FLAGGED' ? 'RED' : null);
    const update: NumberQualityUpdate = {
      wabaId: item.wabaId,
      displayDigits,
      messagingLimit: text(v.max_daily_conversations_per_business) ?? text(v.current_limit),
      flag,
      qualityRating,
      // Meta's automatic upgrade to 1,000 messages per second (the pacer follows the stored level).
      throughputLevel: event === 'THROUGHPUT_UPGRADE' ? 'HIGH' : null,
      at: timeOf(item),
    };
    const key = `${item.wabaId}\u0000${displayDigits}`;
    const before = folded.get(key);
    folded.set(
      key,
      before
        ? {
            ...before,
            messagingLimit: update.messagingLimit ?? before.messagingLimit,
            flag: update.flag ?? before.flag,
            qualityRating: update.qualityRating ?? before.qualityRating,
            throughputLevel: update.throughputLevel ?? before.throughputLevel,
            at: update.at > before.at ? update.at : before.at,
          }
        : update,
    );
  }
  return [...folded.values()];
}

/** Meta's name decision → the number's name_status (as the phone numbers API reports it). */
const NAME_STATUS: Record<string, string> = {
  APPROVED: 'APPROVED',
  REJECTED: 'DECLINED',
  PENDING: 'PENDING_REVIEW',
  DEFERRED: 'DEFERRED',
};

/** The newest name decision per number of a chunk (items in time order). */
export function newestNameDecisions(items: EffectItem[]): NumberNameDecision[] {
  const newest = new Map<string, NumberNameDecision>();
  for (const { item, v, displayDigits } of numberItems(items, 'phone_number_name_update')) {
    const decision = text(v.decision);
    if (!decision) continue;
    newest.set(`${item.wabaId}\u0000${displayDigits}`, {
      wabaId: item.wabaId,
      displayDigits,
      nameStatus: NAME_STATUS[decision] ?? decision,
      verifiedName: decision === 'APPROVED' ? text(v.requested_verified_name) : null,
      at: timeOf(item),
    });
  }
  return [...newest.values()];
}
