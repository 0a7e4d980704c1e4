import { BusinessAccountsRepository } from '../../src/accounts/business-accounts/business-accounts.repository.js';
import { NotFound } from '../../src/core/errors/domain-errors.js';
import { SqlUnitOfWork } from '../../src/core/prisma/sql-unit-of-work.js';
import { repositoryUnderTest, insertBusinessAccount, insertOrganization } from '../utils/factories.js';

describe('BusinessAccountsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new BusinessAccountsRepository(prisma));

  it("finds an organization's account only for that organization, and a disconnected one only when asked", async () => {
    const [mine, theirs] = [await insertOrganization(t.prisma), await insertOrganization(t.prisma)];
    const account = await insertBusinessAccount(t.prisma, mine.organizationId);
    const gone = await insertBusinessAccount(t.prisma, mine.organizationId, { disconnectedAt: new Date() });

    expect((await t.repo.getOwned(mine.organizationId, account.wabaId)).id).toBe(account.id);
    await expect(t.repo.getOwned(theirs.organizationId, account.wabaId)).rejects.toBeInstanceOf(NotFound);
    expect((await t.repo.getOwned(mine.organizationId, gone.wabaId)).id).toBe(gone.id);
    await expect(t.repo.getConnected(mine.organizationId, gone.wabaId)).rejects.toBeInstanceOf(NotFound);
    expect((await t.repo.list(mine.organizationId)).map((a) => a.id)).toEqual([account.id, gone.id]);
    expect(await t.repo.list(theirs.organizationId)).toEqual([]);
  });

  it('creates an account, and answers null (writing nothing) for a wabaId taken by any organization', async () => {
    const [mine, theirs] = [await insertOrganization(t.prisma), await insertOrganization(t.prisma)];
    const taken = await insertBusinessAccount(t.prisma, theirs.organizationId);
    const created = await t.repo.create(mine.organizationId, { wabaId: `9${taken.wabaId}`, name: 'New', accessTokenEncrypted: 'v1.x' });
    expect(created).toMatchObject({ organizationId: mine.organizationId, name: 'New', disconnectedAt: null });
    expect(await t.repo.create(mine.organizationId, { wabaId: taken.wabaId, name: 'Mine now', accessTokenEncrypted: 'v1.y' })).toBeNull();
    expect(await t.repo.findAnyByWabaId(taken.wabaId)).toMatchObject({ organizationId: theirs.organizationId, name: 'Medium WABA' });
  });

  it('changes an account only within its organization', async () => {
    const [mine, theirs] = [await insertOrganization(t.prisma), await insertOrganization(t.prisma)];
    const account = await insertBusinessAccount(t.prisma, mine.organizationId);
    const at = new Date('2026-01-02T03:04:05.000Z');

    await expect(t.repo.disconnect(theirs.organizationId, account.id, at)).rejects.toThrow();
    await expect(t.repo.markSynced(theirs.organizationId, account.id, 'templates', at)).rejects.toThrow();
    expect(await t.prisma.businessAccount.findUniqueOrThrow({ where: { id: account.id } })).toMatchObject({ disconnectedAt: null, templatesSyncedAt: null });

    await t.repo.markSynced(mine.organizationId, account.id, 'phoneNumbers', at);
    expect(await t.repo.disconnect(mine.organizationId, account.id, at)).toMatchObject({ disconnectedAt: at, phoneNumbersSyncedAt: at, templatesSyncedAt: null });
    expect(await t.repo.findCredential(account.id)).toBeNull();

    const back = await t.repo.reconnect(mine.organizationId, account.id, { accessTokenEncrypted: 'v1.new', name: 'Renamed' });
    expect(back).toMatchObject({ disconnectedAt: null, name: 'Renamed', accessTokenEncrypted: 'v1.new' });
    expect(await t.repo.findCredential(account.id)).toEqual({ wabaId: account.wabaId, accessTokenEncrypted: 'v1.new' });
  });

  it('walks every stored credential in id order (key rotation) and replaces one only if it is still the one read', async () => {
    const org = await insertOrganization(t.prisma);
    const [a, b] = [await insertBusinessAccount(t.prisma, org.organizationId), await insertBusinessAccount(t.prisma, org.organizationId, { disconnectedAt: new Date() })];
    const walked: string[] = [];
    for (let after: string | undefined, page; (page = await t.repo.credentialsAfter(after, 2)).length > 0; after = page[page.length - 1]!.id) {
      expect(page.map((c) => c.id)).toEqual([...page.map((c) => c.id)].sort());
      walked.push(...page.map((c) => c.id));
    }
    expect(walked).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(new Set(walked).size).toBe(walked.length);
    expect(await t.repo.countAll()).toBeGreaterThanOrEqual(2);

    expect(await t.repo.replaceCredentialIf(a.id, a.accessTokenEncrypted, 'v2.k1.rotated')).toBe(true);
    // Changed meanwhile (a reconnect): the rotation's write is refused.
    expect(await t.repo.replaceCredentialIf(a.id, a.accessTokenEncrypted, 'v2.k1.stale')).toBe(false);
    expect(await t.repo.findCredential(a.id)).toEqual({ wabaId: a.wabaId, accessTokenEncrypted: 'v2.k1.rotated' });
  });

  it("locks the standings of the named accounts, writes them back once, and serves a send the ban state and restrictions", async () => {
    const org = await insertOrganization(t.prisma);
    const [a, b] = [await insertBusinessAccount(t.prisma, org.organizationId), await insertBusinessAccount(t.prisma, org.organizationId)];
    expect(await t.repo.sendState(a.id)).toEqual({ banState: null, banDate: null, restrictions: [] });

    const at = new Date('2026-11-24T12:00:00.000Z');
    await new SqlUnitOfWork(t.prisma).run(async (tx) => {
      const locked = await t.repo.lockStandings(tx, [a.wabaId, b.wabaId, 'not-an-account']);
      expect(locked.map((l) => l.id)).toEqual([a.id, b.id].sort());
      const mine = locked.find((l) => l.id === a.id)!;
      expect(mine).toMatchObject({ wabaId: a.wabaId, banState: null, restrictions: [], pricingTiers: [], alerts: [], updatedAt: null, times: {} });
      Object.assign(mine, {
        banState: 'DISABLE',
        banDate: 'November 24, 2026',
        restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }],
        updatedAt: at,
        times: { ban: at.toISOString() },
      });
      await t.repo.writeStandings(tx, [mine]);
    });
    expect(await t.repo.sendState(a.id)).toEqual({ banState: 'DISABLE', banDate: 'November 24, 2026', restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }] });
    expect(await t.repo.sendState(b.id)).toEqual({ banState: null, banDate: null, restrictions: [] });
    expect(await t.repo.getOwned(org.organizationId, a.wabaId)).toMatchObject({ standingUpdatedAt: at, standingTimes: { ban: at.toISOString() } });
  });
});
