// The service tier of campaigns: the worker's CampaignRunner over in-memory campaigns, recipients and messages
// (test/utils/in-memory/campaigns.ts) with fakes of the pacer, Meta, the token and the slice queue. Each test is a
// campaign as an operator sees it in the console: who was sent, who was skipped or failed and why, the campaign's
// status and counts, and what Meta received.
import { CredentialRejected } from '../../src/core/errors/domain-errors.js';
import { sleep } from '../../src/messages/pacing/number-pacer.js';
import { UpstreamError } from '../../src/upstream/upstream.error.js';
import type { SendResult } from '../../src/upstream/upstream.types.js';
import { campaignRunnerOverMemory, type MetaCall } from '../utils/in-memory/campaigns.js';
import type { RunnerConfig } from '../../src/campaigns/campaign-runner.ports.js';
import type { CampaignRow } from '../../src/campaigns/campaigns.repository.js';
import type { SliceOf } from '../../src/campaigns/campaign-runner.js';

const WABA = '310987654321098';
const PHONE = '402000000000011';
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `4477009${String(10000 + i)}`);

/** Meta's answer to a send: an error body with this code and HTTP status. */
const refusal = (code: number, httpStatus: number, title = `Meta says no`, retryAfter?: string) =>
  UpstreamError.fromResponse(
    'sendMessage',
    httpStatus,
    { error: { code, message: `(#${code}) ${title}`, error_data: { details: `${title} (details)` } } },
    retryAfter,
    [],
  );
/** A call without an answer: refused before connecting (ECONNREFUSED), or timed out once connected (ECONNABORTED). */
const transport = (code: 'ECONNREFUSED' | 'ECONNABORTED') => UpstreamError.fromTransport('sendMessage', { code }, 2000);
const accepted = (nth: number): Promise<SendResult> =>
  Promise.resolve({ wamid: `wamid.${nth}`, waId: '447700900123', input: '447700900123' });
/** Meta refuses the sends to `to` with `error` (the first `times` of them; every one by default), accepts the others. */
const refuseTo =
  (to: string, error: Error, times = Infinity) =>
  (call: MetaCall, nth: number): Promise<SendResult> =>
    call.payload.to === to && times-- > 0 ? Promise.reject(error) : accepted(nth);

/** Polls until `ready` holds (the runner works in the background meanwhile). */
async function until(ready: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The runner over fresh in-memory tables, the account connected; `start` creates a running campaign. */
function setUp(opts: { config?: Partial<RunnerConfig>; spacingMs?: number } = {}) {
  const t = campaignRunnerOverMemory(opts);
  t.accounts.connect(WABA);
  const businessAccountId = t.accounts.get(WABA)!.id;
  const start = (
    to: string[],
    over: Partial<Pick<CampaignRow, 'templateCategory' | 'upstreamApi'>> & { userIds?: string[] } = {},
  ) => {
    const campaign = t.campaigns.start(businessAccountId, { ...over, total: to.length });
    const recipients = t.recipients.add(campaign.id, [
      ...to.map((n) => ({ to: n, userId: null, components: null })),
      ...(over.userIds ?? []).map((u) => ({ to: null, userId: u, components: null })),
    ]);
    return { campaign, recipients };
  };
  const run = (campaignId: number, sliceOf?: SliceOf) =>
    t.runner.run(campaignId, new AbortController().signal, sliceOf);
  /** The last message stored for each recipient (its latest attempt). */
  const latest = (recipientId: number) => t.messages.get(t.recipients.get(recipientId).messageId!);
  return { ...t, businessAccountId, start, run, latest };
}

describe('CampaignRunner (service tier, in-memory repositories)', () => {
  describe('a run', () => {
    it("sends every recipient once, each message marked sent with Meta's wamid, and completes the campaign", async () => {
      const t = setUp();
      const { campaign, recipients } = t.start(numbers(12));

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.recipients().sort()).toEqual(numbers(12));
      for (const r of recipients) {
        const message = t.latest(r.id);
        expect(message).toMatchObject({ status: 'sent', campaignId: campaign.id, to: r.to, type: 'template' });
        expect(message.upstreamMessageId).toMatch(/^wamid\./);
        // Meta's status webhooks find the message by its callback data, even before its answer is stored.
        const call = t.meta.calls.find((c) => c.payload.to === r.to)!;
        expect(call).toMatchObject({
          api: 'messages',
          token: 'token-of-the-account',
          phoneNumberId: PHONE,
          payload: {
            bizOpaqueCallbackData: `bm:${message.id}`,
            type: 'template',
            template: { name: 'parcel_update', language: { code: 'en_GB' }, components: [] },
          },
        });
      }
      expect(t.campaigns.get(campaign.id)).toMatchObject({ status: 'completed', leaseOwner: null });
      expect(t.campaigns.get(campaign.id).completedAt).toBeInstanceOf(Date);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 12 });
    });

    it('a recipient known by its user id (BSUID) is sent as `recipient`, with its template parameters', async () => {
      const t = setUp();
      const campaign = t.campaigns.start(t.businessAccountId, { total: 1 });
      const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }] }];
      const [r] = t.recipients.add(campaign.id, [{ to: null, userId: 'US.13491208655302741918', components }]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(1);
      expect(t.meta.calls[0]!.payload).not.toHaveProperty('to');
      expect(t.meta.calls[0]!.payload).toMatchObject({
        recipient: 'US.13491208655302741918',
        template: { components },
      });
      expect(t.latest(r!.id)).toMatchObject({ status: 'sent', userId: 'US.13491208655302741918', to: null });
    });

    it('a MARKETING template of an account onboarded to marketing messages goes out through /marketing_messages', async () => {
      const t = setUp();
      const { campaign } = t.start(numbers(2), { templateCategory: 'MARKETING', upstreamApi: 'marketing_messages' });

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls.map((c) => c.api)).toEqual(['marketing_messages', 'marketing_messages']);
      expect(t.messages.of(campaign.id).map((m) => m.upstreamApi)).toEqual([
        'marketing_messages',
        'marketing_messages',
      ]);
    });

    it('completes with the counts the console shows: sent, failed and skipped', async () => {
      const t = setUp();
      const [a, b, c, d] = numbers(4);
      t.blocked.block(WABA, PHONE, c!);
      t.meta.answer = refuseTo(b!, refusal(131026, 400, 'Message undeliverable'));
      const { campaign } = t.start([a!, b!, c!, d!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 2, failed: 1, skipped: 1 });
      expect(t.campaigns.get(campaign.id).status).toBe('completed');
    });
  });

  describe('recipients who may not be sent', () => {
    it('a recipient blocked on the number is skipped with the reason and never sent; the others are', async () => {
      const t = setUp();
      const [a, b] = numbers(2);
      t.blocked.block(WABA, PHONE, b!);
      const { campaign, recipients } = t.start([a!, b!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.recipients()).toEqual([a]);
      expect(t.recipients.get(recipients[1]!.id)).toMatchObject({
        state: 'skipped',
        skipReason: `blocked on phone number ${PHONE}: not sent (unblock the user in the console to message them)`,
        messageId: null,
      });
    });

    it('a user who stopped marketing messages is skipped for a MARKETING template, and still sent a UTILITY one', async () => {
      const t = setUp();
      const [a, b] = numbers(2);
      await t.db.run((tx) =>
        t.preferences.record(tx, [
          { wabaId: WABA, user: b!, value: 'stop', source: 'user_preferences', detail: null, at: new Date() },
        ]),
      );
      const marketing = t.start([a!, b!], { templateCategory: 'MARKETING' });
      const utility = t.start([b!], { templateCategory: 'UTILITY' });

      expect(await t.run(marketing.campaign.id)).toBe('completed');
      expect(await t.run(utility.campaign.id)).toBe('completed');

      expect(t.recipients.get(marketing.recipients[1]!.id)).toMatchObject({
        state: 'skipped',
        skipReason: 'the user stopped marketing messages from this business: MARKETING template parcel_update not sent',
      });
      expect(t.recipients.shown(utility.recipients[0]!.id)).toBe('sent');
      expect(t.meta.recipients()).toEqual([a, b]);
    });
  });

  describe("Meta's refusals", () => {
    it("a permanent refusal fails the recipient with Meta's code, title and detail, and it is not sent again", async () => {
      const t = setUp();
      const [a, b] = numbers(2);
      t.meta.answer = refuseTo(b!, refusal(131026, 400, 'Message undeliverable'));
      const { campaign, recipients } = t.start([a!, b!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.recipients().filter((to) => to === b)).toHaveLength(1);
      expect(t.recipients.shown(recipients[1]!.id)).toBe('failed');
      expect(t.latest(recipients[1]!.id)).toMatchObject({
        status: 'failed',
        errorCode: 131026,
        errorTitle: 'Message undeliverable',
        errorDetail: 'Message undeliverable (details)',
        errorCategory: 'permanent',
      });
    });

    it('a 130429 (throughput) holds the number back for the Retry-After, then sends the recipient again: sent', async () => {
      const t = setUp();
      const [a] = numbers(1);
      t.meta.answer = refuseTo(a!, refusal(130429, 400, 'Rate limit hit'), 1);
      const { campaign, recipients } = t.start([a!]);
      const started = performance.now();

      expect(await t.run(campaign.id)).toBe('completed');

      // Meta's default wait for 130429 (no Retry-After): 1 s, during which nothing more leaves the number.
      expect(t.pacer.holds).toEqual([{ phoneNumberId: PHONE, ms: 1000, at: expect.any(Number) as number }]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
      expect(t.meta.recipients()).toEqual([a, a]);
      const [refused, sent] = t.messages.of(campaign.id);
      expect(refused).toMatchObject({ status: 'failed', errorCode: 130429, errorCategory: 'throughput' });
      expect(sent).toMatchObject({ status: 'sent' });
      expect(t.recipients.get(recipients[0]!.id)).toMatchObject({ attempts: 2, messageId: sent!.id });
      expect(t.recipients.shown(recipients[0]!.id)).toBe('sent');
    });

    it('a transient platform error (131000) sends the recipient again, and it is sent', async () => {
      const t = setUp();
      const [a] = numbers(1);
      t.meta.answer = refuseTo(a!, refusal(131000, 500, 'Something went wrong'), 1);
      const { campaign, recipients } = t.start([a!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(2);
      expect(t.messages.of(campaign.id).map((m) => [m.status, m.errorCode])).toEqual([
        ['failed', 131000],
        ['sent', null],
      ]);
      expect(t.recipients.shown(recipients[0]!.id)).toBe('sent');
    });

    it('a transient error that persists fails the recipient after 3 attempts, with the error', async () => {
      const t = setUp();
      const [a] = numbers(1);
      t.meta.answer = refuseTo(a!, refusal(131016, 503, 'Service overloaded'));
      const { campaign, recipients } = t.start([a!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(3);
      expect(t.recipients.get(recipients[0]!.id).attempts).toBe(3);
      expect(t.recipients.shown(recipients[0]!.id)).toBe('failed');
      expect(t.latest(recipients[0]!.id)).toMatchObject({ errorCode: 131016, errorCategory: 'retryable' });
    });

    it('a call that could not connect (nothing reached Meta) is sent again, up to 3 attempts', async () => {
      const t = setUp();
      const [a, b] = numbers(2);
      const refused = transport('ECONNREFUSED');
      t.meta.answer = (call, nth) =>
        call.payload.to === b || t.meta.calls.filter((c) => c.payload.to === a).length === 1
          ? Promise.reject(refused)
          : accepted(nth);
      const { campaign, recipients } = t.start([a!, b!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.recipients.shown(recipients[0]!.id)).toBe('sent');
      expect(t.meta.recipients().filter((to) => to === b)).toHaveLength(3);
      expect(t.latest(recipients[1]!.id)).toMatchObject({
        status: 'failed',
        errorTitle: 'Network error (ECONNREFUSED)',
        errorCategory: 'retryable',
      });
    });

    it('a call without an answer once connected is not sent again: failed as "Outcome unknown" for a status from Meta to settle', async () => {
      const t = setUp();
      const [a] = numbers(1);
      t.meta.answer = () => Promise.reject(transport('ECONNABORTED'));
      const { campaign, recipients } = t.start([a!]);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(1);
      const message = t.latest(recipients[0]!.id);
      expect(message).toMatchObject({ status: 'failed', errorCode: null, errorCategory: 'retryable' });
      expect(message.errorTitle).toBe(
        'Outcome unknown: No answer from the upstream within 2000 ms before Meta answered; not sent again (a status from Meta settles it; retry-failed resends it)',
      );
      // Meta had it after all: its status webhook (found by the callback data) settles the recipient.
      t.messages.statusArrives(message.id, 'delivered', 'wamid.LATE');
      expect(t.recipients.shown(recipients[0]!.id)).toBe('delivered');
    });

    it.each([
      ['its token rejected (190)', refusal(190, 401, 'Invalid OAuth access token'), 'credential'],
      ['the account locked (131031)', refusal(131031, 400, 'Business account locked'), 'policy'],
    ])(
      '%s: the campaign is paused with the reason, the recipient kept pending for the resume',
      async (_, error, category) => {
        const t = setUp();
        t.meta.answer = () => Promise.reject(error);
        const { campaign, recipients } = t.start(numbers(3));

        expect(await t.run(campaign.id)).toBe('stopped');

        expect(t.campaigns.get(campaign.id)).toMatchObject({
          status: 'paused',
          statusReason: `paused by the service: ${error.reason}`,
        });
        // The chunk in flight was refused; nothing was sent after.
        expect(t.meta.calls.length).toBeLessThanOrEqual(3);
        expect(recipients.map((r) => t.recipients.get(r.id).state)).toEqual(['pending', 'pending', 'pending']);
        for (const m of t.messages.of(campaign.id))
          expect(m).toMatchObject({ status: 'failed', errorCategory: category });
      },
    );

    it('an error before Meta answered (not an upstream error) fails the recipient as an internal error, not sent again', async () => {
      const t = setUp();
      t.meta.answer = () => Promise.reject(new TypeError('cannot read properties of undefined'));
      const { campaign, recipients } = t.start(numbers(1));

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(1);
      expect(t.latest(recipients[0]!.id)).toMatchObject({
        status: 'failed',
        errorTitle: 'Internal error before the upstream platform answered',
        errorCategory: 'retryable',
      });
    });
  });

  describe('the account cannot send', () => {
    it('credentials refused before the run: the campaign is paused with the reason, nothing claimed or sent', async () => {
      const t = setUp();
      const rejected = new CredentialRejected('the stored token cannot be decrypted');
      t.token.refusal = rejected;
      const { campaign, recipients } = t.start(numbers(3));

      expect(await t.run(campaign.id)).toBe('stopped');

      expect(t.campaigns.get(campaign.id)).toMatchObject({
        status: 'paused',
        statusReason: `paused by the service: ${rejected.message}`,
        leaseOwner: null,
      });
      expect(t.meta.calls).toEqual([]);
      expect(recipients.map((r) => t.recipients.get(r.id).state)).toEqual(['pending', 'pending', 'pending']);
      expect(t.messages.of(campaign.id)).toEqual([]);
    });

    it('an unexpected error reading the token fails the run (the job is tried again) and frees the lease', async () => {
      const t = setUp();
      t.token.refusal = new Error('connection terminated');
      const { campaign } = t.start(numbers(1));

      await expect(t.run(campaign.id)).rejects.toThrow('connection terminated');

      expect(t.campaigns.get(campaign.id)).toMatchObject({ status: 'running', leaseOwner: null });
      expect(t.meta.calls).toEqual([]);
    });
  });

  describe('an operator or another runner mid-run', () => {
    /** 10 recipients; the first 3 sends go out, the others wait at their slots until `act` has been seen by a renewal. */
    async function midRun(act: (t: ReturnType<typeof setUp>, campaignId: number) => void) {
      const t = setUp({ config: { campaignLeaseMs: 600 } });
      t.pacer.gateAfter = 3;
      const { campaign, recipients } = t.start(numbers(10));
      const running = t.run(campaign.id);
      await until(() => t.meta.calls.length === 3, 'the first sends');
      const renewals = t.campaigns.renewals;
      act(t, campaign.id);
      await until(() => t.campaigns.renewals > renewals, "the runner's next renewal");
      await sleep(20);
      t.pacer.open();
      return { t, campaign, recipients, outcome: await running };
    }

    it('a pause stops the sends not yet made: they stay pending for the resume, their messages say why', async () => {
      const { t, campaign, recipients, outcome } = await midRun((t, id) => t.campaigns.transition(id, 'paused'));

      expect(outcome).toBe('stopped');
      expect(t.meta.calls).toHaveLength(3);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 3, pending: 7 });
      const notSent = recipients.filter((r) => t.recipients.get(r.id).state === 'pending');
      for (const r of notSent)
        expect(t.latest(r.id)).toMatchObject({
          status: 'failed',
          errorTitle: "Not sent: the campaign was paused before this recipient's turn",
        });
      expect(t.campaigns.get(campaign.id).status).toBe('paused');
    });

    it('a cancel stops the sends not yet made: those recipients are cancelled', async () => {
      const { t, campaign, recipients, outcome } = await midRun((t, id) => {
        t.campaigns.transition(id, 'cancelled');
        t.recipients.cancelPending(id);
      });

      expect(outcome).toBe('stopped');
      expect(t.meta.calls).toHaveLength(3);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 3, cancelled: 7 });
      const cancelled = recipients.filter((r) => t.recipients.get(r.id).state === 'cancelled');
      expect(t.latest(cancelled[0]!.id).errorTitle).toBe(
        "Not sent: the campaign was cancelled before this recipient's turn",
      );
    });

    it.each(['paused', 'cancelled'] as const)(
      'a campaign %s between chunks, first seen by the next claim (before any renewal), stops as such, not as a lost lease',
      async (status) => {
        // A long lease: no renewal comes during the test; one chunk of 3 in flight at a time.
        const t = setUp({ config: { campaignLeaseMs: 60_000, campaignChunkSize: 3, campaignMaxInFlight: 3 } });
        t.pacer.gateAfter = 3;
        const { campaign } = t.start(numbers(10));
        const running = t.run(campaign.id);
        await until(() => t.meta.calls.length === 3, 'the first chunk');
        const renewals = t.campaigns.renewals;
        t.campaigns.transition(campaign.id, status);
        if (status === 'cancelled') t.recipients.cancelPending(campaign.id);
        t.pacer.open();

        expect(await running).toBe('stopped');
        expect(t.campaigns.get(campaign.id).status).toBe(status);
        // At most the chunk claimed before the stop went out; nobody is left claimed.
        expect(t.meta.calls.length).toBeLessThanOrEqual(6);
        expect(t.recipients.counts(campaign.id).sending).toBeUndefined();
        expect(t.campaigns.renewals - renewals).toBeLessThanOrEqual(1);
      },
    );

    it('a lease lost to another runner stops this one (lease_lost): its recipients go back to pending for the new runner', async () => {
      const { t, campaign, outcome } = await midRun((t, id) => t.campaigns.leaseTo(id, 'sweep-runner', 60_000));

      expect(outcome).toBe('lease_lost');
      expect(t.meta.calls).toHaveLength(3);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 3, pending: 7 });
      // This run's end does not free the lease it no longer holds.
      expect(t.campaigns.get(campaign.id)).toMatchObject({ status: 'running', leaseOwner: 'sweep-runner' });
    });

    it('a retry-failed (a new run) stops this run without completing the campaign; the new run sends the rest once', async () => {
      const { t, campaign, recipients, outcome } = await midRun((t, id) => t.campaigns.transition(id, 'running'));

      expect(outcome).toBe('stopped');
      expect(t.campaigns.get(campaign.id)).toMatchObject({ status: 'running', run: 2, leaseOwner: null });

      expect(await t.run(campaign.id)).toBe('completed');
      expect(t.meta.recipients().sort()).toEqual(recipients.map((r) => r.to).sort());
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 10 });
    });
  });

  describe('the lease', () => {
    it('a campaign no longer running when its job starts is left alone (not_running)', async () => {
      const t = setUp();
      const { campaign } = t.start(numbers(2));
      t.campaigns.transition(campaign.id, 'paused');

      expect(await t.run(campaign.id)).toBe('not_running');
      expect(t.meta.calls).toEqual([]);
    });

    it('a slice whose lease was taken over meanwhile leaves the campaign to that runner at once (held_elsewhere)', async () => {
      const t = setUp();
      const { campaign } = t.start(numbers(2));
      t.campaigns.leaseTo(campaign.id, 'sweep-runner', 60_000);

      expect(await t.run(campaign.id, { owner: 'slice-owner', slice: 3 })).toBe('held_elsewhere');
      expect(t.meta.calls).toEqual([]);
      expect(t.campaigns.get(campaign.id).leaseOwner).toBe('sweep-runner');
    });

    it('a campaign another live runner holds is waited for, two leases long, then left to it (held_elsewhere)', async () => {
      const t = setUp({ config: { campaignLeaseMs: 300 } });
      const { campaign } = t.start(numbers(2));
      t.campaigns.leaseTo(campaign.id, 'live-runner', 60_000);
      const started = Date.now();

      expect(await t.run(campaign.id)).toBe('held_elsewhere');
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
      expect(t.meta.calls).toEqual([]);
    });

    it('a runner that is finishing is waited for: once it lets go, this run sends', async () => {
      const t = setUp();
      const { campaign } = t.start(numbers(2));
      t.campaigns.leaseTo(campaign.id, 'finishing-runner', 60_000);
      const running = t.run(campaign.id);
      await sleep(100);
      await t.campaigns.releaseLease(campaign.id, 'finishing-runner');

      expect(await running).toBe('completed');
      expect(t.meta.calls).toHaveLength(2);
    });
  });

  describe('a runner that died', () => {
    /** A campaign taken over from a runner that died (lease expired) with one recipient claimed, its message pending. */
    function diedWithOneInFlight(t: ReturnType<typeof setUp>, claimedAgoMs: number) {
      const [a, b] = numbers(2);
      const { campaign, recipients } = t.start([a!, b!]);
      const inFlight = t.messages.pending(t.businessAccountId, campaign.id, a!);
      t.recipients.leftClaimed(recipients[0]!.id, 'dead-runner', inFlight.id, new Date(Date.now() - claimedAgoMs));
      t.campaigns.leaseTo(campaign.id, 'dead-runner', -1000);
      return { campaign, recipients, inFlight, b: b! };
    }

    it('its send no answer or status settled is failed as unconfirmed after the wait, never sent again', async () => {
      const t = setUp({ config: { campaignUnconfirmedAfterMs: 200 } });
      const { campaign, recipients, inFlight, b } = diedWithOneInFlight(t, 500);

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.recipients()).toEqual([b]);
      expect(t.messages.get(inFlight.id)).toMatchObject({
        status: 'failed',
        errorCategory: 'retryable',
        errorTitle:
          'Unconfirmed: the send was in flight when its runner stopped, and no status arrived; not resent automatically (retry-failed resends it)',
      });
      expect(t.recipients.shown(recipients[0]!.id)).toBe('failed');
    });

    it("its send that Meta's status settles during the wait is not failed: the recipient shows delivered", async () => {
      const t = setUp({ config: { campaignUnconfirmedAfterMs: 2000 } });
      const { campaign, recipients, inFlight } = diedWithOneInFlight(t, 0);
      const running = t.run(campaign.id);
      await until(() => t.meta.calls.length === 1, 'the other recipient sent');
      t.messages.statusArrives(inFlight.id, 'delivered', 'wamid.OF-THE-DEAD');

      expect(await running).toBe('completed');
      expect(t.meta.calls).toHaveLength(1);
      expect(t.recipients.shown(recipients[0]!.id)).toBe('delivered');
    });
  });

  describe('time slices', () => {
    it('a long campaign hands its lease to its next slice, queued behind the others; the slices send everyone once', async () => {
      const t = setUp({ config: { campaignSliceMs: 150 }, spacingMs: 10 });
      const { campaign } = t.start(numbers(60));

      let outcome = await t.run(campaign.id);
      expect(outcome).toBe('yielded');
      expect(t.queue.slices).toEqual([
        { campaignId: campaign.id, run: 1, slice: 1, owner: expect.any(String) as string },
      ]);
      expect(t.campaigns.get(campaign.id)).toMatchObject({ status: 'running', leaseOwner: t.queue.slices[0]!.owner });
      expect(t.meta.calls.length).toBeLessThan(60);

      while (outcome === 'yielded') {
        const next = t.queue.slices.at(-1)!;
        outcome = await t.run(campaign.id, { owner: next.owner, slice: next.slice });
      }
      expect(outcome).toBe('completed');
      expect(t.meta.recipients().sort()).toEqual(numbers(60));
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 60 });
    });
  });

  describe('faults on the way', () => {
    it('a claim PostgreSQL refused is rolled back and tried again: every recipient sent once', async () => {
      const t = setUp();
      t.db.failAt('recipients.claim');
      const { campaign } = t.start(numbers(3));

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.db.transactions.rolledBack).toBe(1);
      expect(t.meta.recipients().sort()).toEqual(numbers(3));
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 3 });
    });

    it('results whose write failed are written again, and nobody is sent twice', async () => {
      const t = setUp();
      t.db.failAt('messages.markSentMany');
      const { campaign } = t.start(numbers(3));

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(3);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 3 });
    });

    it('with the pacer unavailable (Redis away) nothing leaves until it answers again; then everyone is sent', async () => {
      const t = setUp();
      t.pacer.unavailable = 1;
      const { campaign } = t.start(numbers(2));
      const started = performance.now();

      expect(await t.run(campaign.id)).toBe('completed');

      expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
      expect(t.meta.calls).toHaveLength(2);
    });

    it('a send the process was late for takes a new slot, and goes once', async () => {
      const t = setUp();
      t.pacer.late = 1;
      const { campaign } = t.start(numbers(1));

      expect(await t.run(campaign.id)).toBe('completed');

      expect(t.meta.calls).toHaveLength(1);
      expect(t.recipients.counts(campaign.id)).toEqual({ sent: 1 });
    });
  });
});
