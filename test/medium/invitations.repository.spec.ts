import { randomBytes } from 'node:crypto';
import { InvitationsRepository } from '../../src/console/invitations/invitations.repository.js';
import { insertOrganization, repositoryUnderTest, uniqueEmail } from '../utils/factories.js';

describe('InvitationsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new InvitationsRepository(db));
  const hour = 3600_000;

  async function invite(organizationId: string, invitedById: string, expiresAt = new Date(Date.now() + hour)) {
    const tokenHash = randomBytes(32).toString('hex');
    const row = await t.repo.create(organizationId, {
      email: uniqueEmail(),
      role: 'member',
      tokenHash,
      invitedById,
      expiresAt,
    });
    return { row, tokenHash };
  }

  it('creates, finds by token hash, and lets exactly one claim use an invitation', async () => {
    const org = await insertOrganization(t.db, 'Inviting Org');
    const joiner = await insertOrganization(t.db);
    const { row, tokenHash } = await invite(org.organizationId, org.operatorId);
    expect(row).toMatchObject({
      organizationId: org.organizationId,
      role: 'member',
      invitedBy: { email: org.email },
      acceptedAt: null,
    });
    expect(await t.repo.findByTokenHash(tokenHash)).toMatchObject({ id: row.id });
    expect(await t.repo.findByTokenHash(randomBytes(32).toString('hex'))).toBeNull();

    const claims = await Promise.all([
      t.repo.claim(row.id, joiner.operatorId, new Date()),
      t.repo.claim(row.id, joiner.operatorId, new Date()),
    ]);
    expect(claims.sort()).toEqual([false, true]);
    expect(await t.repo.findByTokenHash(tokenHash)).toMatchObject({ acceptedById: joiner.operatorId });
  });

  it('refuses to claim an expired or revoked invitation; lists only pending ones of the organization', async () => {
    const org = await insertOrganization(t.db);
    const other = await insertOrganization(t.db);
    const expired = await invite(org.organizationId, org.operatorId, new Date(Date.now() - 1000));
    const revoked = await invite(org.organizationId, org.operatorId);
    const pending = await invite(org.organizationId, org.operatorId);
    await invite(other.organizationId, other.operatorId);

    expect(await t.repo.revoke(other.organizationId, revoked.row.id, new Date())).toBe(false);
    expect(await t.repo.revoke(org.organizationId, revoked.row.id, new Date())).toBe(true);
    expect(await t.repo.revoke(org.organizationId, revoked.row.id, new Date())).toBe(false);
    expect(await t.repo.claim(expired.row.id, org.operatorId, new Date())).toBe(false);
    expect(await t.repo.claim(revoked.row.id, org.operatorId, new Date())).toBe(false);

    expect((await t.repo.listPending(org.organizationId, new Date())).map((i) => i.id)).toEqual([pending.row.id]);
    expect(await t.repo.findOwned(other.organizationId, pending.row.id)).toBeNull();
    expect(await t.repo.findOwned(org.organizationId, pending.row.id)).toMatchObject({ email: pending.row.email });
  });
});
