import { marketingStopsOf, statusChanges, type LockedMessage } from './status-update.effect.js';

const t = (s: number) => new Date(1767182400_000 + s * 1000);
const message = (over: Partial<LockedMessage> = {}): LockedMessage => ({
  id: 1,
  status: 'sent',
  errorCategory: null,
  sentAt: t(0),
  deliveredAt: null,
  readAt: null,
  failedAt: null,
  ...over,
});
const event = (status: string, at: number, error: { code: number; title: string; detail: string } | null = null) => ({
  status,
  upstreamTimestamp: t(at),
  createdAt: t(100),
  errorCode: error?.code ?? null,
  errorTitle: error?.title ?? null,
  errorDetail: error?.detail ?? null,
});

describe('statusChanges', () => {
  it('moves forward and records when it happened', () => {
    expect(statusChanges(message(), event('delivered', 1))).toEqual({ status: 'delivered', deliveredAt: t(1) });
    expect(statusChanges(message({ status: 'delivered', deliveredAt: t(1) }), event('read', 2))).toEqual({
      status: 'read',
      readAt: t(2),
    });
  });

  it('fills deliveredAt from a read that skipped delivered, and lets a later delivered correct it to the earlier time', () => {
    const afterRead = statusChanges(message(), event('read', 5));
    expect(afterRead).toEqual({ status: 'read', readAt: t(5), deliveredAt: t(5) });
    expect(statusChanges(message({ status: 'read', readAt: t(5), deliveredAt: t(5) }), event('delivered', 3))).toEqual({
      deliveredAt: t(3),
    });
  });

  it('never downgrades: a late sent only fills a missing sentAt', () => {
    expect(
      statusChanges(message({ status: 'read', sentAt: null, deliveredAt: t(1), readAt: t(2) }), event('sent', 0)),
    ).toEqual({ sentAt: t(0) });
    expect(statusChanges(message({ status: 'read', deliveredAt: t(1), readAt: t(2) }), event('sent', 0))).toEqual({});
  });

  it('records the upstream error of an asynchronous failure with its category', () => {
    const error = {
      code: 131047,
      title: 'Re-engagement message',
      detail: 'More than 24 hours since the customer last replied.',
    };
    expect(statusChanges(message(), event('failed', 1, error))).toEqual({
      status: 'failed',
      failedAt: t(1),
      errorCode: 131047,
      errorTitle: 'Re-engagement message',
      errorDetail: 'More than 24 hours since the customer last replied.',
      errorCategory: 'window',
    });
  });

  it('ignores a failure after delivery', () => {
    expect(
      statusChanges(
        message({ status: 'delivered', deliveredAt: t(1) }),
        event('failed', 2, { code: 131000, title: 'x', detail: 'y' }),
      ),
    ).toEqual({});
  });

  it('replaces a failure recorded for an unknown send outcome with real progress or the real reason', () => {
    const timedOut = message({ status: 'failed', errorCategory: 'retryable', sentAt: null, failedAt: t(0) });
    expect(statusChanges(timedOut, event('delivered', 2))).toEqual({
      status: 'delivered',
      deliveredAt: t(2),
      failedAt: null,
      errorCode: null,
      errorTitle: null,
      errorDetail: null,
      errorCategory: null,
    });
    expect(
      statusChanges(timedOut, event('failed', 3, { code: 131026, title: 'Message undeliverable', detail: 'd' })),
    ).toMatchObject({
      status: 'failed',
      failedAt: t(3),
      errorCode: 131026,
      errorCategory: 'permanent',
    });
  });

  it("prices the message with the first status that carries Meta's pricing object, whatever the status does", () => {
    const pricing = { pricing_model: 'PMP', category: 'marketing', type: 'regular', billable: true };
    expect(statusChanges(message(), { ...event('sent', 0), pricing })).toEqual({
      pricingModel: 'PMP',
      pricingCategory: 'marketing',
      pricingType: 'regular',
      pricingBillable: true,
    });
    const priced = message({ status: 'read', readAt: t(2), deliveredAt: t(1) });
    expect(
      statusChanges(
        { ...priced, pricingCategory: 'marketing', pricingType: 'regular', pricingModel: 'PMP' },
        { ...event('delivered', 1), pricing: { ...pricing, category: 'utility' } },
      ),
    ).toEqual({});
  });
});

describe('marketingStopsOf', () => {
  const failedStatus = (code: number) => ({
    ...event('failed', 3, {
      code,
      title: 'This recipient has chosen to stop receiving marketing messages',
      detail: 'stopped',
    }),
    wabaId: '310',
    recipient: '447700900123',
    userId: 'US.1349',
  });

  it("records Meta's 131050 failure as a stop of the user, by phone and by user id, at the status's time", () => {
    expect(marketingStopsOf(failedStatus(131050))).toEqual([
      {
        wabaId: '310',
        user: '447700900123',
        value: 'stop',
        source: 'error_131050',
        detail: 'This recipient has chosen to stop receiving marketing messages',
        at: t(3),
      },
      {
        wabaId: '310',
        user: 'US.1349',
        value: 'stop',
        source: 'error_131050',
        detail: 'This recipient has chosen to stop receiving marketing messages',
        at: t(3),
      },
    ]);
  });

  it('ignores other failures and other statuses', () => {
    expect(marketingStopsOf(failedStatus(131047))).toEqual([]);
    expect(marketingStopsOf({ ...failedStatus(131050), status: 'delivered' })).toEqual([]);
  });
});
