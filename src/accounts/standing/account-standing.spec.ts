import { SendingRefused } from '../../core/errors/domain-errors.js';
import { activeRestrictions, standingAfter, type AccountStanding } from './account-standing.js';
import { assertStandingAllowsSend, type SendStanding } from './send-refusal.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, s));
const clean: AccountStanding = {
  banState: null,
  banDate: null,
  restrictions: [],
  violationType: null,
  pricingTiers: [],
  alerts: [],
  updatedAt: null,
  times: {},
};

describe('standingAfter', () => {
  it('applies a ban, then a reinstatement, and ignores an older ban delivered late', () => {
    const banned = standingAfter(clean, { kind: 'ban', state: 'DISABLE', date: 'November 24, 2026', at: at(1) });
    expect(banned).toMatchObject({ banState: 'DISABLE', banDate: 'November 24, 2026', updatedAt: at(1) });
    const reinstated = standingAfter(banned, { kind: 'ban', state: 'REINSTATE', date: null, at: at(3) });
    expect(reinstated.banState).toBe('REINSTATE');
    expect(standingAfter(reinstated, { kind: 'ban', state: 'DISABLE', date: null, at: at(2) })).toBe(reinstated);
  });

  it('keeps a clock per kind: a restriction older than the last ban still applies, an older one than the last restriction does not', () => {
    const banned = standingAfter(clean, { kind: 'ban', state: 'DISABLE', date: null, at: at(5) });
    const restricted = standingAfter(banned, {
      kind: 'restrictions',
      restrictions: [{ type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: null }],
      at: at(3),
    });
    expect(restricted).toMatchObject({
      banState: 'DISABLE',
      restrictions: [{ type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: null }],
      updatedAt: at(5),
    });
    expect(standingAfter(restricted, { kind: 'restrictions', restrictions: [], at: at(2) })).toBe(restricted);
  });

  it('replaces the restrictions with the set Meta sends, and records a violation', () => {
    const restricted = standingAfter(clean, {
      kind: 'restrictions',
      restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }],
      at: at(1),
    });
    expect(restricted.restrictions).toEqual([{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }]);
    expect(standingAfter(restricted, { kind: 'restrictions', restrictions: [], at: at(2) }).restrictions).toEqual([]);
    expect(standingAfter(restricted, { kind: 'violation', violationType: 'SCAM', at: at(2) }).violationType).toBe(
      'SCAM',
    );
  });

  it('keeps one pricing tier per category and region, the newest', () => {
    const tier = (t: string, s: number) => ({
      kind: 'pricing_tier' as const,
      tier: { pricingCategory: 'UTILITY', region: 'India', tier: t, effectiveMonth: '2026-12' },
      at: at(s),
    });
    const one = standingAfter(clean, tier('0:25000', 1));
    const two = standingAfter(one, tier('25000:50000', 2));
    expect(two.pricingTiers).toEqual([
      {
        pricingCategory: 'UTILITY',
        region: 'India',
        tier: '25000:50000',
        effectiveMonth: '2026-12',
        at: at(2).toISOString(),
      },
    ]);
    expect(standingAfter(two, tier('0:25000', 1))).toBe(two);
  });

  it('keeps active alerts only: a later non-ACTIVE status of the same alert clears it', () => {
    const alert = {
      type: 'OBA_REJECTED',
      severity: 'WARNING',
      description: 'd',
      entityType: 'BUSINESS',
      entityId: '1',
    };
    const active = standingAfter(clean, { kind: 'alert', alert: { ...alert, status: 'ACTIVE' }, at: at(1) });
    expect(active.alerts).toHaveLength(1);
    expect(standingAfter(active, { kind: 'alert', alert: { ...alert, status: 'NONE' }, at: at(2) }).alerts).toEqual([]);
  });

  it('counts restrictions without an expiration or with one ahead as in force', () => {
    const now = at(10);
    expect(
      activeRestrictions(
        [
          { type: 'A', expiration: null },
          { type: 'B', expiration: at(20).toISOString() },
          { type: 'C', expiration: at(5).toISOString() },
        ],
        now,
      ).map((r) => r.type),
    ).toEqual(['A', 'B']);
  });
});

describe('assertStandingAllowsSend', () => {
  const ok: SendStanding = { banState: null, banDate: null, restrictions: [], numberStatus: 'CONNECTED' };
  const send = { phoneNumberId: '402', businessInitiated: true };
  const refusal = (standing: SendStanding, s = send) => {
    try {
      assertStandingAllowsSend(standing, s, at(10));
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(SendingRefused);
      return (error as SendingRefused).message;
    }
  };

  it('lets a send through when nothing stands in the way (a scheduled disable or a reinstatement included)', () => {
    expect(refusal(ok)).toBeUndefined();
    expect(refusal({ ...ok, banState: 'SCHEDULE_FOR_DISABLE' })).toBeUndefined();
    expect(refusal({ ...ok, banState: 'REINSTATE' })).toBeUndefined();
  });

  it('refuses every send of a disabled account, naming the ban', () => {
    expect(refusal({ ...ok, banState: 'DISABLE', banDate: 'November 24, 2026' })).toMatch(
      /disabled.*DISABLE since November 24, 2026/,
    );
  });

  it('refuses a number Meta reports as FLAGGED or RESTRICTED', () => {
    expect(refusal({ ...ok, numberStatus: 'FLAGGED' })).toMatch(/402 as FLAGGED/);
    expect(refusal({ ...ok, numberStatus: 'RESTRICTED' })).toMatch(/402 as RESTRICTED/);
  });

  it('refuses what a restriction in force names, and nothing once it expired', () => {
    const biz = {
      ...ok,
      restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: at(20).toISOString() }],
    };
    expect(refusal(biz)).toMatch(/business-initiated/);
    expect(refusal(biz, { ...send, businessInitiated: false })).toBeUndefined();
    const customer = { ...ok, restrictions: [{ type: 'RESTRICTED_CUSTOMER_INITIATED_MESSAGING', expiration: null }] };
    expect(refusal(customer, { ...send, businessInitiated: false })).toMatch(/customer service window/);
    expect(
      refusal({
        ...ok,
        restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: at(5).toISOString() }],
      }),
    ).toBeUndefined();
  });
});
