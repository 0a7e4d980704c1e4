import {
  eventually,
  onboard,
  signupAndLogin,
  simInbound,
  type OnboardedTenant,
  type Operator,
} from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { accountRow, countRows } from '../utils/db-rows.js';
import { allDeliveries } from '../utils/delivery-rows.js';

/**
 * Issue 29, finding 5: business-account ownership is not permanent. A caller whose token Meta accepts for a WABA
 * takes it over from a holder whose credentials failed their check; what arrives after a credential failure (or a
 * disconnect) is not the holder's to read; a caller with a bad token learns nothing.
 */
describe('Business-account takeover and read cut-offs', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const connect = (op: Operator, wabaId: string, accessToken: string) =>
    stack.http.post('/business-accounts').set('cookie', op.cookie).send({ wabaId, accessToken });
  const inboundTexts = async (op: Operator, wabaId: string) => {
    const res = await stack.http.get(`/webhooks/events?wabaId=${wabaId}&kind=inbound_message`).set('cookie', op.cookie);
    return res.status === 200
      ? (res.body.data.items as { raw: { text?: { body: string } } }[]).map((e) => e.raw.text?.body).sort()
      : res.status;
  };
  const messageTexts = async (op: Operator, wabaId: string) => {
    const res = await stack.http
      .get(`/business-accounts/${wabaId}/messages?direction=inbound`)
      .set('cookie', op.cookie);
    return res.status === 200
      ? (res.body.data.items as { content: { text?: { body: string } } }[]).map((m) => m.content.text?.body).sort()
      : res.status;
  };
  /** Has the simulator post a customer's text and waits until the worker stored it as an event. */
  const inbound = async (t: Pick<OnboardedTenant, 'account'>, text: string) => {
    const { wamid } = await simInbound(stack, t, { from: '447700900123', text });
    expect(
      await eventually(
        async () => (await countRows(stack.db, 'events', { waba_id: t.account.wabaId, message_id: wamid })) > 0,
      ),
    ).toBe(true);
  };
  const audit = async (op: Operator) =>
    (
      (await stack.http.get('/audit-log').set('cookie', op.cookie)).body.data.items as {
        action: string;
        operatorEmail: string | null;
        details: Record<string, unknown>;
      }[]
    ).filter((e) => e.action.startsWith('business_account.taken') || e.action.startsWith('business_account.lost'));

  it('a bad token gets the answer of any bad token, a good one 409 while the holder’s credentials are valid; once they failed, the good one takes the account over', async () => {
    const holder = await onboard(stack, 'Holder Org');
    const claimant = await signupAndLogin(stack, 'Claimant Org');
    const { wabaId } = holder.account;
    await inbound(holder, 'before the failure');

    // A bad token: the same answer as for a WABA nobody holds (nothing tells the WABA is taken).
    const unheld = stack.sim.createAccount();
    const bad = await connect(claimant, wabaId, 'not-a-token-meta-knows');
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual((await connect(claimant, unheld.wabaId, 'not-a-token-meta-knows')).body);
    // The right token while the holder's credentials are fine: 409.
    expect((await connect(claimant, wabaId, holder.account.accessToken)).body).toEqual({
      statusCode: 409,
      message: 'This business account is already connected',
      errors: [{ field: 'wabaId', message: 'wabaId is already connected' }],
    });

    // The token is regenerated in Meta's tools: the holder's stored one fails its check.
    const newToken = stack.sim.rotateToken(wabaId);
    const check = await stack.http
      .post(`/business-accounts/${wabaId}/credentials/check`)
      .set('cookie', holder.operator.cookie);
    expect(check.body.data).toMatchObject({ credentialsValid: false });
    await inbound(holder, 'after the failure');
    // What arrived after the failure is not the holder's to read: events, inbound messages, by key pair too.
    expect(await inboundTexts(holder.operator, wabaId)).toEqual(['before the failure']);
    expect(await messageTexts(holder.operator, wabaId)).toEqual(['before the failure']);
    // Key lookups are cached per process for API_KEY_CACHE_TTL_MS.
    await new Promise((r) => setTimeout(r, stack.config.apiKeyCacheTtlMs + 100));
    const byKey = await stack.http.get('/messages?direction=inbound').set(holder.key.headers);
    expect(byKey.body.data.items.map((m: { content: { text: { body: string } } }) => m.content.text.body)).toEqual([
      'before the failure',
    ]);
    // Nor counted in its analytics, console or key pair.
    expect(
      (await stack.http.get(`/business-accounts/${wabaId}/messages-analytics`).set('cookie', holder.operator.cookie))
        .body.data.inbound,
    ).toBe(1);
    expect((await stack.http.get('/messages/analytics').set(holder.key.headers)).body.data.inbound).toBe(1);

    const taken = await connect(claimant, wabaId, newToken);
    expect(taken.status).toBe(201);
    expect(taken.body.data).toMatchObject({ wabaId, credentialsValid: true });
    // The old holder: no account, no key pair; the new one: none of the old holder's history.
    expect((await stack.http.get(`/business-accounts/${wabaId}`).set('cookie', holder.operator.cookie)).status).toBe(
      404,
    );
    expect(await inboundTexts(holder.operator, wabaId)).toBe(404);
    expect((await stack.http.get('/messages').set(holder.key.headers)).status).toBe(401);
    expect(await inboundTexts(claimant, wabaId)).toEqual([]);
    expect(await messageTexts(claimant, wabaId)).toEqual([]);

    await inbound({ account: { ...holder.account, accessToken: newToken } }, 'after the takeover');
    expect(await inboundTexts(claimant, wabaId)).toEqual(['after the takeover']);
    expect(await messageTexts(claimant, wabaId)).toEqual(['after the takeover']);
    expect(await inboundTexts(holder.operator, wabaId)).toBe(404);

    expect(await audit(claimant)).toEqual([
      expect.objectContaining({
        action: 'business_account.taken_over',
        operatorEmail: claimant.email,
        details: expect.objectContaining({ previousHolder: 'credentials_rejected' }),
      }),
    ]);
    expect(await audit(holder.operator)).toEqual([
      expect.objectContaining({
        action: 'business_account.lost_to_takeover',
        operatorEmail: null,
        details: expect.objectContaining({ reason: 'credentials_rejected', revokedKeys: 1 }),
      }),
    ]);
  });

  it('events and deliveries received after a disconnect are not readable by the organization that disconnected', async () => {
    const holder = await onboard(stack, 'Disconnecting Org');
    const { wabaId } = holder.account;
    await inbound(holder, 'while connected');
    expect((await stack.http.delete(`/business-accounts/${wabaId}`).set('cookie', holder.operator.cookie)).status).toBe(
      200,
    );
    await inbound(holder, 'after the disconnect');
    expect(await inboundTexts(holder.operator, wabaId)).toEqual(['while connected']);
    expect(await messageTexts(holder.operator, wabaId)).toEqual(['while connected']);
    const { readableUntil } = await accountRow(stack.db, { wabaId });
    // Waiting or processed: the account's deliveries in either table.
    const deliveriesOf = async (receivedSince?: Date) =>
      Number(
        (
          await stack.db
            .on()
            .selectFrom(allDeliveries(stack.db))
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where((eb) => eb(eb.val(wabaId), '=', eb.fn.any('wabaIds')))
            .$if(receivedSince !== undefined, (q) => q.where('receivedAt', '>=', receivedSince!))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const stored = await deliveriesOf();
    const late = await deliveriesOf(readableUntil!);
    expect([stored > late, late >= 1]).toEqual([true, true]);
    const deliveries = await stack.http.get('/webhooks/deliveries?limit=100').set('cookie', holder.operator.cookie);
    expect(deliveries.body.data.items.filter((d: { wabaIds: string[] }) => d.wabaIds.includes(wabaId))).toHaveLength(
      stored - late,
    );
  });
});
