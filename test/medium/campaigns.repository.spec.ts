import { CampaignRecipientsRepository } from '../../src/campaigns/campaign-recipients.repository.js';
import { CampaignsRepository, type CampaignStatus } from '../../src/campaigns/campaigns.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { MessagesRepository } from '../../src/messages/messages.repository.js';
import {
  insertBusinessAccount,
  insertOrganization,
  metaId,
  recipient,
  repositoryUnderTest,
} from '../utils/factories.js';

describe('CampaignsRepository and CampaignRecipientsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => ({
    campaigns: new CampaignsRepository(db),
    recipients: new CampaignRecipientsRepository(db),
    messages: new MessagesRepository(db),
    sql: new UnitOfWork(db),
    uow: new UnitOfWork(db),
  }));

  async function campaignOf(n: number) {
    const org = await insertOrganization(t.db);
    const account = await insertBusinessAccount(t.db, org.organizationId);
    const phoneNumberId = metaId();
    const tos = Array.from({ length: n }, () => recipient());
    const campaign = await t.repo.uow.run(async () => {
      const c = await t.repo.campaigns.create(account.id, {
        name: 'c',
        phoneNumberId,
        templateName: 'hello_world',
        templateLanguage: 'en_US',
        templateCategory: 'UTILITY',
        upstreamApi: 'cloud_api',
        total: n,
        createdById: org.operatorId,
      });
      await t.repo.recipients.insertAll(
        c.id,
        tos.map((to) => ({ to, userId: null, components: null })),
      );
      return c;
    });
    return { account, campaign, tos, phoneNumberId };
  }

  /** What a runner does in its claim's transaction: lock, claim, store the messages, attach them. */
  const claim = (c: Awaited<ReturnType<typeof campaignOf>>, owner: string, n: number) =>
    t.repo.sql.run(async (tx) => {
      if (!(await t.repo.campaigns.lockRunning(tx, c.campaign.id, owner, c.campaign.run))) return null;
      const claimed = await t.repo.recipients.claim(tx, c.campaign.id, owner, n);
      const ids = await t.repo.messages.insertCampaignMessages(
        tx,
        c.account.id,
        c.campaign.id,
        claimed.map((r) => ({
          apiKeyId: null,
          phoneNumberId: c.phoneNumberId,
          to: r.to,
          userId: r.userId,
          upstreamApi: 'cloud_api',
          type: 'template',
          templateName: 'hello_world',
          templateLanguage: 'en_US',
          content: { components: [] },
        })),
      );
      await t.repo.recipients.attachMessages(
        tx,
        claimed.map((r) => r.id),
        ids,
      );
      return claimed.map((r, i) => ({ ...r, messageId: ids[i]! }));
    });

  it('leases a campaign to one runner at a time; an expired lease is taken over, naming the previous owner', async () => {
    const c = await campaignOf(3);
    expect(await t.repo.campaigns.acquireLease(c.campaign.id, 'a', 60_000)).toMatchObject({
      id: c.campaign.id,
      previousOwner: null,
    });
    expect(await t.repo.campaigns.acquireLease(c.campaign.id, 'b', 60_000)).toBeNull();
    expect(await t.repo.campaigns.renewLease(c.campaign.id, 'b', 60_000)).toBeNull();
    expect(await t.repo.campaigns.renewLease(c.campaign.id, 'a', 1)).toEqual({ status: 'running', run: 1 });
    await new Promise((r) => setTimeout(r, 20));
    expect(await t.repo.campaigns.acquireLease(c.campaign.id, 'b', 60_000)).toMatchObject({ previousOwner: 'a' });
    expect(await t.repo.campaigns.orphaned(60_000)).not.toContainEqual(expect.objectContaining({ id: c.campaign.id }));
  });

  it('a pause frees the lease, even one handed to a slice still queued: the resumed run takes it at once', async () => {
    const c = await campaignOf(3);
    await t.repo.campaigns.acquireLease(c.campaign.id, 'slice-1', 60_000);
    expect(await t.repo.campaigns.handOverLease(c.campaign.id, 'slice-1', 'slice-2', 60_000)).toBe(true);
    const move = (from: CampaignStatus[], to: CampaignStatus) =>
      t.repo.uow.run(() => t.repo.campaigns.transition(c.account.id, c.campaign.id, from, to));
    expect(await move(['running'], 'paused')).toMatchObject({ status: 'paused' });
    // The queued slice finds nothing to run, and the paused campaign's lease is nobody's.
    expect(await t.repo.campaigns.acquireLease(c.campaign.id, 'slice-2', 60_000)).toBeNull();
    expect(await t.repo.campaigns.renewLease(c.campaign.id, 'slice-2', 60_000)).toBeNull();
    await move(['paused'], 'running');
    // Before, the resumed run waited for slice-2's lease to expire (then for a sweep).
    expect(await t.repo.campaigns.acquireLease(c.campaign.id, 'resumed', 60_000)).toMatchObject({
      status: 'running',
      previousOwner: null,
    });
  });

  it('never gives a recipient to two concurrent claims, and claims nothing once the campaign is paused', async () => {
    const c = await campaignOf(200);
    await t.repo.campaigns.acquireLease(c.campaign.id, 'a', 60_000);
    const claims = await Promise.all(Array.from({ length: 8 }, () => claim(c, 'a', 30)));
    const ids = claims.flatMap((x) => x!.map((r) => r.id));
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    expect((await t.repo.recipients.counts(c.campaign.id)).sending).toBe(200);

    const other = await campaignOf(10);
    await t.repo.campaigns.acquireLease(other.campaign.id, 'a', 60_000);
    await t.repo.uow.run(() => t.repo.campaigns.transition(other.account.id, other.campaign.id, ['running'], 'paused'));
    expect(await claim(other, 'a', 10)).toBeNull();
    // Another account cannot move it.
    expect(
      await t.repo.uow.run(() => t.repo.campaigns.transition(c.account.id, other.campaign.id, ['paused'], 'running')),
    ).toBeNull();
  });

  it("shows each recipient's message status, sends failed ones back on retry, and cancels what is not claimed", async () => {
    const c = await campaignOf(5);
    await t.repo.campaigns.acquireLease(c.campaign.id, 'a', 60_000);
    const claimed = (await claim(c, 'a', 3))!;
    await t.repo.messages.markSentMany(c.account.id, [
      { messageId: claimed[0]!.messageId, wamid: `wamid.${claimed[0]!.messageId}`, at: new Date() },
    ]);
    await t.repo.messages.markFailedMany(c.account.id, [
      {
        messageId: claimed[1]!.messageId,
        error: { code: 131026, title: 'Message undeliverable', detail: null, category: 'permanent' },
      },
    ]);
    expect(await t.repo.recipients.counts(c.campaign.id)).toMatchObject({ pending: 2, sending: 1, sent: 1, failed: 1 });
    expect(await t.repo.recipients.unsettled(c.campaign.id)).toEqual([
      expect.objectContaining({ id: claimed[2]!.id, messageId: claimed[2]!.messageId, claimedBy: 'a' }),
    ]);
    const failed = await t.repo.recipients.page(c.campaign.id, 'failed', { page: 1, limit: 10 });
    expect(failed.total).toBe(1);
    expect(failed.rows[0]).toMatchObject({
      to: c.tos[1],
      status: 'failed',
      errorCode: 131026,
      errorTitle: 'Message undeliverable',
      attempts: 1,
    });

    expect(await t.repo.uow.run(() => t.repo.recipients.requeueFailed(c.campaign.id))).toBe(1);
    expect(await t.repo.uow.run(() => t.repo.recipients.cancelPending(c.campaign.id))).toBe(3);
    expect(await t.repo.recipients.counts(c.campaign.id)).toMatchObject({
      pending: 0,
      sending: 1,
      sent: 1,
      failed: 0,
      cancelled: 3,
    });
    // A runner's own claims go back to pending (or cancelled) only while they are still its own.
    await t.repo.sql.run((tx) => t.repo.recipients.requeue(tx, [claimed[2]!.id], 'someone else', 'pending'));
    expect((await t.repo.recipients.counts(c.campaign.id)).sending).toBe(1);
    await t.repo.sql.run((tx) => t.repo.recipients.requeue(tx, [claimed[2]!.id], 'a', 'cancelled'));
    expect(await t.repo.recipients.counts(c.campaign.id)).toMatchObject({ sending: 0, cancelled: 4 });
    expect(await t.repo.recipients.hasPending(c.campaign.id)).toBe(false);
    expect(await t.repo.campaigns.complete(c.campaign.id, 'a', c.campaign.run + 1)).toBe(false); // another run's
    expect(await t.repo.campaigns.complete(c.campaign.id, 'a', c.campaign.run)).toBe(true);
    expect((await t.repo.campaigns.find(c.account.id, c.campaign.id))!.status).toBe('completed');
  });
});
