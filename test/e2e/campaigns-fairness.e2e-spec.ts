import { jest } from '@jest/globals';
import { eventually, onboard, type Tenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';

// Long campaigns at a number's pace (STANDARD: 80/s) on a host shared with other suites.
jest.setTimeout(240_000);

/**
 * Issue 37, finding 3 (medium): CAMPAIGN_CONCURRENCY jobs each ran one campaign to its end, so one organization's long
 * campaigns held every slot and another organization's 2-recipient campaign waited for them (hours at 100,000
 * recipients). Campaigns now run in time slices (CAMPAIGN_SLICE_MS, 1 s here) that queue their next slice behind the
 * jobs waiting, and an organization has quotas: campaigns running at once, recipients per 24 hours.
 */
describe('campaigns: fair shares of the campaign workers, per-organization quotas', () => {
  let stack: Stack;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    stack = await startStack({
      worker: true,
      env: {
        CAMPAIGN_CONCURRENCY: '2',
        CAMPAIGN_SLICE_MS: '1000',
        CAMPAIGN_LEASE_MS: '2000',
        PACING_WINDOW_MS: '1300',
        PACING_LATE_MS: '100',
        CAMPAIGNS_RUNNING_PER_ORGANIZATION: '2',
        CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION: '6100',
      },
    });
    a = await onboard(stack, 'Big Sender');
    b = await onboard(stack, 'Small Sender');
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const base = (tenant: Tenant) => `/business-accounts/${tenant.account.wabaId}/campaigns`;
  /** `count` recipients, distinct within the run (`series` tells campaigns apart). */
  const campaign = (tenant: Tenant, series: number, count: number) => ({
    name: `series ${series}`,
    phoneNumberId: tenant.account.phoneNumberId,
    templateName: 'hello_world',
    templateLanguage: 'en_US',
    recipients: Array.from({ length: count }, (_, i) => ({ to: `44${series}${String(i).padStart(8, '0')}` })),
  });
  const create = (tenant: Tenant, series: number, count: number) =>
    stack.http
      .post(base(tenant))
      .set('cookie', tenant.operator.cookie)
      .send(campaign(tenant, series, count));
  const statusOf = async (
    tenant: Tenant,
    id: number,
  ): Promise<{ status: string; statusReason: string | null; counts: { pending: number } }> =>
    (await stack.http.get(`${base(tenant)}/${id}`).set('cookie', tenant.operator.cookie)).body.data;
  const act = (tenant: Tenant, id: number, action: string) =>
    stack.http.post(`${base(tenant)}/${id}/${action}`).set('cookie', tenant.operator.cookie);

  it("another organization's small campaign finishes while one organization's long campaigns hold every slot; quotas refuse a third running campaign (409) and recipients past the day's quota (429)", async () => {
    // Two long campaigns on A's number: 6,000 sends at 80/s, over a minute, as many as there are campaign slots.
    const long = [await create(a, 1, 3000), await create(a, 2, 3000)];
    expect(long.map((r) => r.status)).toEqual([201, 201]);
    const [l1, l2] = long.map((r) => r.body.data.id as number) as [number, number];
    await eventually(
      async () => (await statusOf(a, l1)).counts.pending < 3000 && (await statusOf(a, l2)).counts.pending < 3000,
      {
        timeoutMs: 60_000,
      },
    );

    const small = await create(b, 3, 2);
    expect(small.status).toBe(201);
    const done = await eventually(async () => (await statusOf(b, small.body.data.id)).status === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    expect(done).toBe(true);
    // …while both of A's are still running, recipients left.
    for (const id of [l1, l2]) {
      const now = await statusOf(a, id);
      expect([now.status, now.statusReason]).toEqual(['running', null]);
      expect(now.counts.pending).toBeGreaterThan(0);
    }

    // A third running campaign of A: refused, nothing stored.
    const third = await create(a, 4, 10);
    expect(third.status).toBe(409);
    expect(third.body).toEqual({
      statusCode: 409,
      message:
        'The organization already has 2 campaigns running, its limit (CAMPAIGNS_RUNNING_PER_ORGANIZATION=2): pause, cancel or wait for one to end',
    });
    // With one paused there is room, within the day's 6,100 recipients; resuming the paused one is then refused.
    expect((await act(a, l1, 'pause')).status).toBe(200);
    const fits = await create(a, 5, 50);
    expect(fits.status).toBe(201);
    expect((await act(a, l1, 'resume')).status).toBe(409);
    expect((await act(a, fits.body.data.id, 'pause')).status).toBe(200);
    const over = await create(a, 6, 100);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('3600');
    expect(over.body.message).toMatch(/CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION=6100\): 6050 in the last 24 hours/);
    // B is not held to A's quotas.
    expect((await create(b, 7, 5)).status).toBe(201);

    for (const id of [l1, l2, fits.body.data.id as number]) expect((await act(a, id, 'cancel')).status).toBe(200);
  });
});
