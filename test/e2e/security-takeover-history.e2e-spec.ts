import { onboard, recipient, signupAndLogin, type Operator } from '../utils/factories.js';
import { accountRow, rowsWhere } from '../utils/db-rows.js';
import { startStack, type Stack } from '../utils/stack.js';

/**
 * Issue 37 (audit 3), finding 6: after a takeover the new holder reads nothing of the previous holder's campaigns (nor
 * who of its operators blocked a user), and the previous holder's running campaigns are cancelled, not sent with the
 * new holder's token. No worker: a campaign stays running until something stops it.
 */
describe('Security: a taken-over account’s campaigns and blocks', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const campaigns = (op: Operator, wabaId: string, path = '') =>
    stack.http.get(`/business-accounts/${wabaId}/campaigns${path}`).set('cookie', op.cookie);

  it('cancels the previous holder’s running campaigns at the takeover; the new holder sees neither them, their recipients, nor who blocked a user', async () => {
    const holder = await onboard(stack, 'Previous Holder Org');
    const claimant = await signupAndLogin(stack, 'New Holder Org');
    const { wabaId, phoneNumberId } = holder.account;
    const created = await stack.http
      .post(`/business-accounts/${wabaId}/campaigns`)
      .set('cookie', holder.operator.cookie)
      .send({
        name: 'the previous holder’s customers',
        phoneNumberId,
        templateName: 'hello_world',
        templateLanguage: 'en_US',
        recipients: [{ to: recipient() }, { to: recipient() }],
      });
    expect(created.status).toBe(201);
    const campaignId = created.body.data.id as number;
    const { id: businessAccountId } = await accountRow(stack.db, { wabaId });
    await stack.db
      .on()
      .insertInto('blocked_users')
      .values({
        business_account_id: businessAccountId,
        phone_number_id: phoneNumberId,
        user: '447700900999',
        blocked_by_id: holder.operator.operatorId,
      })
      .execute();

    // The token is regenerated in Meta's tools; the holder's check fails; the claimant connects with the new one.
    const newToken = stack.sim.rotateToken(wabaId);
    await stack.http.post(`/business-accounts/${wabaId}/credentials/check`).set('cookie', holder.operator.cookie);
    const taken = await stack.http
      .post('/business-accounts')
      .set('cookie', claimant.cookie)
      .send({ wabaId, accessToken: newToken });
    expect(taken.status).toBe(201);

    const [campaign] = await rowsWhere(stack.db, 'campaigns', { id: campaignId });
    expect(campaign).toMatchObject({
      status: 'cancelled',
      statusReason: 'cancelled by the service: another organization took the business account over',
    });
    const states = (await rowsWhere(stack.db, 'campaign_recipients', { campaign_id: campaignId })).map((r) => r.state);
    expect(states).toEqual(['cancelled', 'cancelled']);
    const lost = await stack.http.get('/audit-log').set('cookie', holder.operator.cookie);
    expect(
      lost.body.data.items.find((e: { action: string }) => e.action === 'business_account.lost_to_takeover').details,
    ).toMatchObject({ campaignsCancelled: 1, revokedKeys: 1 });

    const list = await campaigns(claimant, wabaId);
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({ items: [], total: 0 });
    const notFound = { statusCode: 404, message: 'Campaign not found' };
    expect((await campaigns(claimant, wabaId, `/${campaignId}`)).body).toEqual(notFound);
    expect((await campaigns(claimant, wabaId, `/${campaignId}/recipients`)).body).toEqual(notFound);
    expect(
      (
        await stack.http
          .post(`/business-accounts/${wabaId}/campaigns/${campaignId}/retry-failed`)
          .set('cookie', claimant.cookie)
      ).body,
    ).toEqual(notFound);

    // The block still holds (Meta keeps it), but who made it is not the new holder's to see.
    const blocked = await stack.http
      .get(`/business-accounts/${wabaId}/phone-numbers/${phoneNumberId}/blocked-users`)
      .set('cookie', claimant.cookie);
    expect(blocked.body.data.items).toEqual([expect.objectContaining({ user: '447700900999', blockedById: null })]);
  });
});
