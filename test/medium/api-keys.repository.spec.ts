import { ApiKeysRepository } from '../../src/auth/api-keys/api-keys.repository.js';
import { repositoryUnderTest, insertApiKey, insertBusinessAccount, insertOrganization } from '../utils/factories.js';

describe('ApiKeysRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new ApiKeysRepository(db));

  it("lists, finds and revokes an organization's keys only within it", async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const [a, b] = [
      await insertBusinessAccount(t.db, mine.organizationId),
      await insertBusinessAccount(t.db, mine.organizationId),
    ];
    const first = await t.repo.create(mine.organizationId, {
      businessAccountId: a.id,
      name: 'first',
      accessKey: `ak_${a.id}`,
      secretHash: 'h1',
      createdById: mine.operatorId,
    });
    const second = await insertApiKey(t.db, mine.organizationId, b.id);
    expect(first.businessAccount.wabaId).toBe(a.wabaId);

    const page = await t.repo.page(mine.organizationId, { page: 1, limit: 1 });
    expect([page.total, page.rows.map((k) => k.id)]).toEqual([2, [second.id]]);
    expect(
      (await t.repo.page(mine.organizationId, { page: 1, limit: 10, wabaId: a.wabaId })).rows.map((k) => k.id),
    ).toEqual([first.id]);
    expect(await t.repo.page(theirs.organizationId, { page: 1, limit: 10 })).toEqual({ rows: [], total: 0 });

    expect(await t.repo.findOwned(theirs.organizationId, first.id)).toBeNull();
    await expect(t.repo.revoke(theirs.organizationId, first.id, new Date())).rejects.toThrow();
    expect((await t.repo.findOwned(mine.organizationId, first.id))?.revokedAt).toBeNull();
    const at = new Date();
    expect((await t.repo.revoke(mine.organizationId, first.id, at)).revokedAt).toEqual(at);
  });

  it('revokes every live key of one business account and says which', async () => {
    const org = await insertOrganization(t.db);
    const [account, other] = [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId),
    ];
    const earlier = new Date('2026-01-01T00:00:00.000Z');
    const [live1, live2, old, elsewhere] = [
      await insertApiKey(t.db, org.organizationId, account.id),
      await insertApiKey(t.db, org.organizationId, account.id),
      await insertApiKey(t.db, org.organizationId, account.id, { revokedAt: earlier }),
      await insertApiKey(t.db, org.organizationId, other.id),
    ];
    const revoked = await t.repo.revokeAllOf(account.id, new Date());
    expect(revoked.sort()).toEqual([live1.accessKey, live2.accessKey].sort());
    expect((await t.repo.findForAuthentication(old.accessKey))?.revokedAt).toEqual(earlier);
    expect((await t.repo.findForAuthentication(elsewhere.accessKey))?.revokedAt).toBeNull();
    expect(await t.repo.revokeAllOf(account.id, new Date())).toEqual([]);
  });

  it('finds a key for authentication with the state of its account, and moves lastUsedAt forward only', async () => {
    const org = await insertOrganization(t.db);
    const account = await insertBusinessAccount(t.db, org.organizationId, { disconnectedAt: new Date() });
    const key = await insertApiKey(t.db, org.organizationId, account.id);
    expect(await t.repo.findForAuthentication(key.accessKey)).toMatchObject({
      id: key.id,
      businessAccount: {
        id: account.id,
        wabaId: account.wabaId,
        disconnectedAt: account.disconnectedAt,
        accessTokenEncrypted: account.accessTokenEncrypted,
      },
    });
    expect(await t.repo.findForAuthentication('ak_unknown')).toBeNull();

    const [t1, t2] = [new Date('2026-02-01T00:00:00.000Z'), new Date('2026-02-02T00:00:00.000Z')];
    await t.repo.touchLastUsed(key.id, t2);
    await t.repo.touchLastUsed(key.id, t1);
    expect((await t.repo.findForAuthentication(key.accessKey))?.lastUsedAt).toEqual(t2);
  });
});
