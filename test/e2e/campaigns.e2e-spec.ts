import { jest } from '@jest/globals';
import { startStack, type Stack } from '../utils/stack.js';
import type { components } from '../../src/web/api-types.js';
import { eventually, onboard, recipient, signupAndLogin, simControl, type Tenant } from '../utils/factories.js';

/** A campaign's counts, as the OpenAPI document (and the console) types them. */
type Counts = components['schemas']['CampaignCountsView'];

// Campaigns run in the worker at a number's pace (STANDARD: 80/s) on a host shared with other suites.
jest.setTimeout(180_000);

const fieldsOf = (body: { errors?: Array<{ field: string }> }) => (body.errors ?? []).map((e) => e.field).sort();

describe('campaigns (console session, worker, simulator)', () => {
  let stack: Stack;
  let t: Tenant;

  const base = (tenant: Tenant = t) => `/business-accounts/${tenant.account.wabaId}/campaigns`;
  const create = (body: object, tenant: Tenant = t) =>
    stack.http.post(base(tenant)).set('cookie', tenant.operator.cookie).send(body);
  const get = (id: number, tenant: Tenant = t) =>
    stack.http.get(`${base(tenant)}/${id}`).set('cookie', tenant.operator.cookie);
  const act = (id: number, action: string, tenant: Tenant = t) =>
    stack.http.post(`${base(tenant)}/${id}/${action}`).set('cookie', tenant.operator.cookie);
  const recipientsOf = (id: number, query: Record<string, string | number> = {}) =>
    stack.http
      .get(`${base()}/${id}/recipients`)
      .set('cookie', t.operator.cookie)
      .query({ limit: 100, ...query });
  const hello = (recipients: object[], extra: object = {}) => ({
    name: 'Campaign test',
    phoneNumberId: t.account.phoneNumberId,
    templateName: 'hello_world',
    templateLanguage: 'en_US',
    recipients,
    ...extra,
  });
  const sendsTo = (to: string) => stack.sim.sends({ to }).filter((s) => s.wabaId === t.account.wabaId);
  const accepted = (to: string) => sendsTo(to).filter((s) => s.response.status === 200);
  async function finished(
    id: number,
    status = 'completed',
    timeoutMs = 150_000,
  ): Promise<{ status: string; counts: Counts; progress: number }> {
    const done = await eventually(
      async () => {
        const res = await get(id);
        return res.body.data.status === status ? res.body.data : null;
      },
      { timeoutMs, intervalMs: 200 },
    );
    if (!done) throw new Error(`campaign ${id} not ${status}: ${JSON.stringify((await get(id)).body.data)}`);
    return done;
  }

  beforeAll(async () => {
    // A wider pacing window: API, worker and simulator share this host with other suites (see pacing.e2e-spec.ts).
    // A send to 15550000010 gets no answer for 3 s (the API gives up after UPSTREAM_TIMEOUT_MS, 2 s), then Meta accepts it.
    stack = await startStack({
      worker: true,
      env: {
        UPSTREAM_TIMEOUT_MS: '2000',
        CAMPAIGN_LEASE_MS: '2000',
        CAMPAIGN_UNCONFIRMED_AFTER_MS: '10000',
        PACING_WINDOW_MS: '1300',
        PACING_LATE_MS: '100',
      },
      sim: { hangMs: 3000 },
    });
    t = await onboard(stack, 'Campaigns Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  describe('refusals: 422 naming the field, nothing stored, nothing sent', () => {
    async function expectRefused(body: object, fields: string[]) {
      const before = stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId).length;
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ statusCode: 422, message: 'Field Validation Failed' });
      // The envelope and nothing more, whether the pipe or the use case refused (the template's state).
      expect(Object.keys(res.body)).toEqual(['statusCode', 'message', 'errors']);
      expect(fieldsOf(res.body)).toEqual([...fields].sort());
      const list = await stack.http.get(base()).set('cookie', t.operator.cookie);
      expect(list.body.data.items.filter((c: { name: string }) => c.name === 'refused')).toEqual([]);
      expect(stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId)).toHaveLength(before);
      return res.body.errors as { field: string; message: string }[];
    }

    it('refuses no recipients, a bad recipient among good ones, a duplicate, an unapproved template and missing parameters', async () => {
      await expectRefused(hello([], { name: 'refused' }), ['recipients']);
      const bad = await expectRefused(
        hello([{ to: recipient() }, { to: '+44 7700 900' }, { userId: 'nope' }, { to: recipient(), extra: 1 }], {
          name: 'refused',
        }),
        ['recipients.1.to', 'recipients.2.userId', 'recipients.3.extra'],
      );
      expect(bad[0]!.message).toMatch(/E\.164/);
      const twice = recipient();
      await expectRefused(hello([{ to: twice }, { to: twice }], { name: 'refused' }), ['recipients.1.to']);
      const unapproved = await expectRefused(
        hello([{ to: recipient() }], { name: 'refused', templateName: 'summer_sale', templateLanguage: 'en_GB' }),
        ['templateName'],
      );
      expect(unapproved[0]!.message).toMatch(/PENDING; only APPROVED/);
      // parcel_update needs a header, two body and one button parameter per recipient.
      await expectRefused(
        hello([{ to: recipient() }], { name: 'refused', templateName: 'parcel_update', templateLanguage: 'en_GB' }),
        ['recipients.0.components'],
      );
    });
  });

  it('sends every recipient exactly once, lists them with their messages (campaignId on GET /messages), counts them, and audits the start', async () => {
    const tos = Array.from({ length: 40 }, () => recipient());
    const undeliverable = '15550000001'; // Meta refuses it at once (131026)
    const pairLimited = '15550000007'; // Meta's pair rate limit (131056)
    const res = await create(
      hello(
        [...tos, undeliverable, pairLimited].map((to) => ({ to })),
        { name: 'Exactly once' },
      ),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'Exactly once',
      status: 'running',
      total: 42,
      templateName: 'hello_world',
      wabaId: t.account.wabaId,
    });
    const id = res.body.data.id as number;

    const done = await finished(id);
    expect(done.progress).toBe(1);
    expect(done.counts.failed).toBe(2);
    expect(done.counts.sent + done.counts.delivered + done.counts.read).toBe(40);
    for (const to of tos) expect(accepted(to)).toHaveLength(1);
    expect(sendsTo(undeliverable)).toHaveLength(1);

    const failed = await recipientsOf(id, { status: 'failed' });
    expect(failed.body.data.total).toBe(2);
    const byTo = Object.fromEntries(failed.body.data.items.map((r: { to: string }) => [r.to, r]));
    expect(byTo[undeliverable]).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 131026, title: 'Message undeliverable', category: 'permanent' },
    });
    expect(byTo[pairLimited]).toMatchObject({ status: 'failed', error: { code: 131056, category: 'pair_rate_limit' } });

    const all = await recipientsOf(id);
    expect(all.body.data.total).toBe(42);
    expect(all.body.data.items[0]).toMatchObject({
      position: 0,
      to: tos[0],
      messageId: expect.any(Number),
      upstreamMessageId: expect.stringMatching(/^wamid\./),
    });
    const messages = await stack.http.get('/messages').set(t.key.headers).query({ campaignId: id, limit: 100 });
    expect(messages.body.data.total).toBe(42);
    expect(messages.body.data.items.every((m: { campaignId: number }) => m.campaignId === id)).toBe(true);
    const one = await stack.http.get(`/messages/${all.body.data.items[0].messageId}`).set(t.key.headers);
    expect(one.body.data).toMatchObject({ campaignId: id, to: tos[0], templateName: 'hello_world' });

    const audit = await stack.http.get('/audit-log').set('cookie', t.operator.cookie);
    expect(audit.body.data.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'campaign.started',
          targetId: String(id),
          operatorEmail: t.operator.email,
          details: expect.objectContaining({ total: 42 }),
        }),
      ]),
    );

    // retry-failed: a new message for each failed recipient; the completed campaign runs again and completes.
    const retried = await act(id, 'retry-failed');
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ requeued: 2, status: 'running' });
    await finished(id);
    expect(sendsTo(undeliverable)).toHaveLength(2);
    for (const to of tos) expect(accepted(to)).toHaveLength(1);
    const again = await recipientsOf(id, { status: 'failed' });
    expect(again.body.data.items.find((r: { to: string }) => r.to === undeliverable)).toMatchObject({
      attempts: 1,
      error: { code: 131026 },
    });
  });

  it("does not send again a recipient whose call got no answer (Meta may have it): failed as outcome unknown, then settled by Meta's status, sent once", async () => {
    const hanging = '15550000010';
    const others = [recipient(), recipient()];
    const res = await create(
      hello(
        [hanging, ...others].map((to) => ({ to })),
        { name: 'No answer' },
      ),
    );
    expect(res.status).toBe(201);
    const id = res.body.data.id as number;
    const done = await finished(id);
    expect(done.counts.failed).toBe(1);
    const failed = (await recipientsOf(id, { status: 'failed' })).body.data.items;
    expect(failed).toEqual([
      expect.objectContaining({
        to: hanging,
        attempts: 1,
        error: expect.objectContaining({
          code: null,
          category: 'retryable',
          title: expect.stringMatching(
            /^Outcome unknown: No answer from the upstream within 2000 ms before Meta answered; not sent again/,
          ),
        }),
      }),
    ]);
    // Meta accepted it after all (its answer came after the timeout): its status, found by the callback data, wins.
    const settled = await eventually(
      async () => {
        const r = (await recipientsOf(id)).body.data.items.find((x: { to: string }) => x.to === hanging);
        return ['sent', 'delivered', 'read'].includes(r.status) ? r : null;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(settled).toMatchObject({ to: hanging, error: null });
    expect(sendsTo(hanging)).toHaveLength(1);
    expect((await get(id)).body.data.counts.failed).toBe(0);
    for (const to of others) expect(accepted(to)).toHaveLength(1);
  });

  it('skips recipients who stopped marketing messages (a MARKETING template), each with its reason', async () => {
    const stopped = recipient();
    await simControl(stack, 'user-preferences', {
      wabaId: t.account.wabaId,
      phoneNumberId: t.account.phoneNumberId,
      waId: stopped,
      value: 'stop',
    });
    const known = await eventually(
      async () => {
        const res = await stack.http
          .get(`/business-accounts/${t.account.wabaId}/marketing-preferences`)
          .set('cookie', t.operator.cookie)
          .query({ user: stopped });
        return res.body.data.items.length > 0;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(known).toBe(true);
    const others = [recipient(), recipient()];
    const res = await create(
      hello([{ to: stopped }, ...others.map((to) => ({ to }))], { name: 'Marketing', templateName: 'weekly_deals' }),
    );
    expect(res.status).toBe(201);
    const done = await finished(res.body.data.id);
    expect(done.counts.skipped).toBe(1);
    const skipped = await recipientsOf(res.body.data.id, { status: 'skipped' });
    expect(skipped.body.data.items).toEqual([
      expect.objectContaining({
        to: stopped,
        status: 'skipped',
        messageId: null,
        skipReason: expect.stringMatching(/stopped marketing messages/),
      }),
    ]);
    expect(sendsTo(stopped)).toHaveLength(0);
    const all = (await recipientsOf(res.body.data.id)).body.data.items;
    expect({ accepted: others.map((to) => accepted(to).length), recipients: all }).toMatchObject({ accepted: [1, 1] });
  });

  it('pauses (no send after the answer, beyond those in flight), resumes where it stopped, and cancels: nobody sent twice', async () => {
    // 240 recipients at STANDARD (80/s): about 3 s of sending.
    const tos = Array.from({ length: 240 }, () => recipient());
    const res = await create(
      hello(
        tos.map((to) => ({ to })),
        { name: 'Paused' },
      ),
    );
    const id = res.body.data.id as number;
    await eventually(async () => tos.filter((to) => sendsTo(to).length > 0).length > 20, {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    const paused = await act(id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.data.status).toBe('paused');
    const atPause = tos.filter((to) => sendsTo(to).length > 0).length;
    await new Promise((r) => setTimeout(r, 1500));
    const later = tos.filter((to) => sendsTo(to).length > 0).length;
    // Calls already in flight when the pause committed may still land (at most one pacing slot's worth), nothing after.
    expect(later - atPause).toBeLessThanOrEqual(80);
    await new Promise((r) => setTimeout(r, 1000));
    expect(tos.filter((to) => sendsTo(to).length > 0).length).toBe(later);
    expect(later).toBeLessThan(240);
    expect((await act(id, 'pause')).status).toBe(409);

    const audit = await stack.http.get('/audit-log').set('cookie', t.operator.cookie);
    expect(audit.body.data.items[0]).toMatchObject({ action: 'campaign.paused', targetId: String(id) });

    expect((await act(id, 'resume')).status).toBe(200);
    const done = await finished(id);
    expect(done.counts.sent + done.counts.delivered + done.counts.read).toBe(240);
    for (const to of tos) expect(accepted(to)).toHaveLength(1);
    expect(
      stack.sim
        .sends()
        .filter(
          (s) =>
            s.wabaId === t.account.wabaId && (s.response.body as { error?: { code?: number } }).error?.code === 130429,
        ),
    ).toHaveLength(0);

    // Cancel another one mid-run: the rest is cancelled, never sent.
    const more = Array.from({ length: 240 }, () => recipient());
    const second = await create(
      hello(
        more.map((to) => ({ to })),
        { name: 'Cancelled' },
      ),
    );
    const secondId = second.body.data.id as number;
    await eventually(async () => more.some((to) => sendsTo(to).length > 0), { timeoutMs: 10_000, intervalMs: 50 });
    const cancelled = await act(secondId, 'cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 1500));
    const final = (await get(secondId)).body.data;
    expect(final.counts.cancelled).toBeGreaterThan(0);
    expect(final.counts.pending + final.counts.sending).toBe(0);
    const sentCount = more.filter((to) => sendsTo(to).length > 0).length;
    expect(final.counts.sent + final.counts.delivered + final.counts.read + final.counts.failed).toBe(sentCount);
    for (const to of more) expect(sendsTo(to).length).toBeLessThanOrEqual(1);
    expect((await act(secondId, 'resume')).status).toBe(409);
    expect((await act(secondId, 'retry-failed')).status).toBe(409);
  });

  it('answers 404 to another organization for every campaign route, and for ids that are not integers', async () => {
    const res = await create(hello([{ to: recipient() }], { name: 'Private' }));
    const id = res.body.data.id as number;
    const stranger = await signupAndLogin(stack, 'Stranger Org');
    const as = (req: ReturnType<typeof stack.http.get>) => req.set('cookie', stranger.cookie);
    const path = `${base()}/${id}`;
    for (const req of [
      as(stack.http.get(base())),
      as(stack.http.get(path)),
      as(stack.http.get(`${path}/recipients`)),
      as(stack.http.post(`${path}/pause`)),
      as(stack.http.post(`${path}/resume`)),
      as(stack.http.post(`${path}/cancel`)),
      as(stack.http.post(`${path}/retry-failed`)),
      as(stack.http.post(base()).send(hello([{ to: recipient() }]))),
    ]) {
      const answer = await req;
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ statusCode: 404 });
    }
    expect((await stack.http.get(`${base()}/abc`).set('cookie', t.operator.cookie)).status).toBe(404);
    expect((await stack.http.get(`${base()}/99999999999999999999`).set('cookie', t.operator.cookie)).status).toBe(404);
    // The owner still sees it, and the list is in the same page shape as GET /api-keys.
    const list = await stack.http.get(base()).set('cookie', t.operator.cookie).query({ limit: 2 });
    expect(list.body.data).toMatchObject({
      page: 1,
      limit: 2,
      total: expect.any(Number),
      totalPages: expect.any(Number),
      items: expect.any(Array),
    });
    expect(list.body.data.items[0]).toMatchObject({ id, name: 'Private', counts: null });
  });
});
