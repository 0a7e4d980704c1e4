import {
  foldQualityUpdates,
  marketingOnboardingsOf,
  newestNameDecisions,
  preferenceChangesOf,
  standingChangesOf,
} from './account-update.effect.js';
import type { EffectItem } from './event-effect.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, s));
const item = (eventType: string, raw: Record<string, unknown>, s = 0, wabaId = '310'): EffectItem => ({
  wabaId,
  phoneNumberId: null,
  eventType,
  kind: 'account_update',
  status: null,
  recipient: null,
  userId: null,
  messageId: null,
  upstreamTimestamp: at(s),
  errorCode: null,
  errorTitle: null,
  errorDetail: null,
  raw,
  pricing: null,
});

describe('account-level webhooks → changes', () => {
  it("reads account_update's ban_info, restriction_info, violation_info and volume_tier_info", () => {
    expect(
      standingChangesOf(
        item('account_update', {
          event: 'DISABLED_UPDATE',
          ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: 'November 24, 2026' },
        }),
      ),
    ).toEqual([{ kind: 'ban', state: 'DISABLE', date: 'November 24, 2026', at: at(0) }]);
    expect(
      standingChangesOf(
        item('account_update', {
          event: 'ACCOUNT_RESTRICTION',
          restriction_info: [
            { restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: '2026-12-19T13:59:20+0000' },
          ],
        }),
      ),
    ).toEqual([
      {
        kind: 'restrictions',
        restrictions: [{ type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: '2026-12-19T13:59:20+0000' }],
        at: at(0),
      },
    ]);
    expect(
      standingChangesOf(
        item('account_update', { event: 'ACCOUNT_VIOLATION', violation_info: { violation_type: 'SCAM' } }),
      ),
    ).toEqual([{ kind: 'violation', violationType: 'SCAM', at: at(0) }]);
    expect(
      standingChangesOf(
        item('account_update', {
          event: 'VOLUME_BASED_PRICING_TIER_UPDATE',
          volume_tier_info: {
            pricing_category: 'UTILITY',
            tier: '25000:50000',
            effective_month: '2026-12',
            region: 'India',
          },
        }),
      ),
    ).toEqual([
      {
        kind: 'pricing_tier',
        tier: { pricingCategory: 'UTILITY', region: 'India', tier: '25000:50000', effectiveMonth: '2026-12' },
        at: at(0),
      },
    ]);
    expect(standingChangesOf(item('account_update', { event: 'PARTNER_ADDED' }))).toEqual([]);
    expect(standingChangesOf(item('account_review_update', { decision: 'APPROVED' }))).toEqual([]);
  });

  it('reads account_alerts', () => {
    expect(
      standingChangesOf(
        item('account_alerts', {
          entity_type: 'BUSINESS',
          entity_id: 42,
          alert_severity: 'CRITICAL',
          alert_status: 'ACTIVE',
          alert_type: 'OBA_REJECTED',
          alert_description: 'd',
        }),
      ),
    ).toEqual([
      {
        kind: 'alert',
        at: at(0),
        alert: {
          type: 'OBA_REJECTED',
          severity: 'CRITICAL',
          status: 'ACTIVE',
          description: 'd',
          entityType: 'BUSINESS',
          entityId: '42',
        },
      },
    ]);
  });

  it('folds the quality updates of a number in time order: newest limit, newest flag, FLAGGED means a RED rating', () => {
    const folded = foldQualityUpdates([
      item(
        'phone_number_quality_update',
        { display_phone_number: '+44 7700 900011', event: 'FLAGGED', current_limit: 'TIER_2K' },
        1,
      ),
      item(
        'phone_number_quality_update',
        {
          display_phone_number: '447700900011',
          event: 'DOWNGRADE',
          old_limit: 'TIER_2K',
          max_daily_conversations_per_business: 'TIER_250',
          current_limit: 'TIER_250',
        },
        2,
      ),
      item('phone_number_quality_update', { display_phone_number: '447700900012', event: 'UNFLAGGED' }, 3),
      item('phone_number_quality_update', { display_phone_number: '447700900013', event: 'THROUGHPUT_UPGRADE' }, 4),
    ]);
    expect(folded).toEqual([
      {
        wabaId: '310',
        displayDigits: '447700900011',
        messagingLimit: 'TIER_250',
        flag: 'FLAGGED',
        qualityRating: 'RED',
        throughputLevel: null,
        at: at(2),
      },
      {
        wabaId: '310',
        displayDigits: '447700900012',
        messagingLimit: null,
        flag: 'UNFLAGGED',
        qualityRating: null,
        throughputLevel: null,
        at: at(3),
      },
      {
        wabaId: '310',
        displayDigits: '447700900013',
        messagingLimit: null,
        flag: null,
        qualityRating: null,
        throughputLevel: 'HIGH',
        at: at(4),
      },
    ]);
  });

  it("maps name decisions to the number's name status, the approved name with it", () => {
    expect(
      newestNameDecisions([
        item(
          'phone_number_name_update',
          { display_phone_number: '447700900011', decision: 'REJECTED', requested_verified_name: 'X' },
          1,
        ),
        item(
          'phone_number_name_update',
          { display_phone_number: '447700900011', decision: 'APPROVED', requested_verified_name: 'Parcel Co' },
          2,
        ),
      ]),
    ).toEqual([
      { wabaId: '310', displayDigits: '447700900011', nameStatus: 'APPROVED', verifiedName: 'Parcel Co', at: at(2) },
    ]);
  });
});

describe('user_preferences and Marketing Messages API webhooks → changes', () => {
  it('records a marketing stop or resume once per address of the user, and nothing for other categories or values', () => {
    const stop = {
      ...item(
        'user_preferences',
        { category: 'marketing_messages', value: 'stop', detail: 'User requested to stop marketing messages' },
        5,
      ),
      recipient: '16505551234',
      userId: 'US.1349',
    };
    expect(preferenceChangesOf(stop)).toEqual([
      {
        wabaId: '310',
        user: '16505551234',
        value: 'stop',
        source: 'user_preferences',
        detail: 'User requested to stop marketing messages',
        at: at(5),
      },
      {
        wabaId: '310',
        user: 'US.1349',
        value: 'stop',
        source: 'user_preferences',
        detail: 'User requested to stop marketing messages',
        at: at(5),
      },
    ]);
    expect(
      preferenceChangesOf({ ...stop, raw: { category: 'marketing_messages', value: 'resume' } }).map((c) => c.value),
    ).toEqual(['resume', 'resume']);
    expect(preferenceChangesOf({ ...stop, raw: { category: 'other_messages', value: 'stop' } })).toEqual([]);
    expect(preferenceChangesOf({ ...stop, raw: { category: 'marketing_messages', value: 'pause' } })).toEqual([]);
    expect(preferenceChangesOf({ ...stop, eventType: 'account_update' })).toEqual([]);
  });

  it("onboards the webhook's own account on MM_LITE_TERMS_SIGNED (never the payload's waba_info.waba_id)", () => {
    const signed = item(
      'account_update',
      { event: 'MM_LITE_TERMS_SIGNED', waba_info: { waba_id: '999', owner_business_id: '1' } },
      7,
    );
    expect(marketingOnboardingsOf([signed, item('account_update', { event: 'ACCOUNT_UPDATE' })])).toEqual([
      { wabaId: '310', at: at(7) },
    ]);
  });
});
