import { BusinessAccountsRepository } from '../../src/accounts/business-accounts/business-accounts.repository.js';
import { NotFound } from '../../src/core/errors/domain-errors.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { accountRow } from '../utils/db-rows.js';
import { repositoryUnderTest, insertBusinessAccount, insertOrganization } from '../utils/factories.js';

describe('BusinessAccountsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new BusinessAccountsRepository(db));

  it("finds an organization's account only for that organization, and a disconnected one only when asked", async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const account = await insertBusinessAccount(t.db, mine.organizationId);
    const gone = await insertBusinessAccount(t.db, mine.organizationId, { disconnectedAt: new Date() });

    expect((await t.repo.getOwned(mine.organizationId, account.wabaId)).id).toBe(account.id);
    await expect(t.repo.getOwned(theirs.organizationId, account.wabaId)).rejects.toBeInstanceOf(NotFound);
    expect((await t.repo.getOwned(mine.organizationId, gone.wabaId)).id).toBe(gone.id);
    await expect(t.repo.getConnected(mine.organizationId, gone.wabaId)).rejects.toBeInstanceOf(NotFound);
    expect((await t.repo.list(mine.organizationId)).map((a) => a.id)).toEqual([account.id, gone.id]);
    expect(await t.repo.list(theirs.organizationId)).toEqual([]);
    // The console's pages: the same order, the organization's count.
    expect(await t.repo.page(mine.organizationId, { page: 2, limit: 1 })).toEqual({
      rows: [expect.objectContaining({ id: gone.id })],
      total: 2,
    });
    expect(await t.repo.page(theirs.organizationId, { page: 1, limit: 20 })).toEqual({ rows: [], total: 0 });
  });

  it('creates an account, and answers null (writing nothing) for a wabaId taken by any organization', async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const taken = await insertBusinessAccount(t.db, theirs.organizationId);
    const checkedAt = new Date('2026-01-02T03:04:05.000Z');
    const created = await t.repo.create(
      mine.organizationId,
      { wabaId: `9${taken.wabaId}`, name: 'New' },
      { accessTokenEncrypted: 'v1.x', checkedAt },
    );
    // A connect stores a token it has just verified and subscribed with.
    expect(created).toMatchObject({
      organizationId: mine.organizationId,
      name: 'New',
      disconnectedAt: null,
      accessTokenEncrypted: 'v1.x',
      webhooksSubscribed: true,
      webhooksCheckedAt: checkedAt,
      credentialsValid: true,
      credentialsCheckedAt: checkedAt,
      credentialsError: null,
    });
    expect(
      await t.repo.create(
        mine.organizationId,
        { wabaId: taken.wabaId, name: 'Mine now' },
        { accessTokenEncrypted: 'v1.y', checkedAt },
      ),
    ).toBeNull();
    expect(await t.repo.findAnyByWabaId(taken.wabaId)).toMatchObject({
      organizationId: theirs.organizationId,
      name: 'Medium WABA',
    });
  });

  it('changes an account only within its organization', async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const account = await insertBusinessAccount(t.db, mine.organizationId);
    const at = new Date('2026-01-02T03:04:05.000Z');

    await expect(t.repo.disconnect(theirs.organizationId, account.id, at)).rejects.toThrow();
    await expect(t.repo.markSynced(theirs.organizationId, account.id, 'templates', at)).rejects.toThrow();
    expect(await accountRow(t.db, { id: account.id })).toMatchObject({
      disconnectedAt: null,
      templatesSyncedAt: null,
    });

    await t.repo.markSynced(mine.organizationId, account.id, 'phoneNumbers', at);
    expect(await t.repo.disconnect(mine.organizationId, account.id, at)).toMatchObject({
      disconnectedAt: at,
      phoneNumbersSyncedAt: at,
      templatesSyncedAt: null,
    });
    expect(await t.repo.findCredential(account.id)).toBeNull();

    await expect(
      t.repo.reconnect(
        theirs.organizationId,
        account.id,
        { accessTokenEncrypted: 'v1.theirs', checkedAt: at },
        'Theirs',
      ),
    ).rejects.toThrow();
    await t.repo.recordCredentialCheck(
      mine.organizationId,
      account.id,
      account.accessTokenEncrypted,
      { valid: false, error: 'Session has expired (190)' },
      at,
    );
    const back = await t.repo.reconnect(
      mine.organizationId,
      account.id,
      { accessTokenEncrypted: 'v1.new', checkedAt: at },
      'Renamed',
    );
    // A replaced token is valid again (it was just verified).
    expect(back).toMatchObject({
      disconnectedAt: null,
      name: 'Renamed',
      accessTokenEncrypted: 'v1.new',
      credentialsValid: true,
      credentialsError: null,
      credentialsCheckedAt: at,
      webhooksSubscribed: true,
    });
    expect(await t.repo.findCredential(account.id)).toEqual({ wabaId: account.wabaId, accessTokenEncrypted: 'v1.new' });
  });

  it('walks every stored credential in id order (key rotation) and replaces one only if it is still the one read', async () => {
    const org = await insertOrganization(t.db);
    const [a, b] = [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId, { disconnectedAt: new Date() }),
    ];
    const walked: string[] = [];
    for (
      let after: string | undefined, page;
      (page = await t.repo.credentialsAfter(after, 2)).length > 0;
      after = page[page.length - 1]!.id
    ) {
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

  it('records a credential verdict only within its organization and only for the token that was checked', async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const account = await insertBusinessAccount(t.db, mine.organizationId);
    const at = new Date('2026-02-03T04:05:06.000Z');
    const rejected = { valid: false as const, error: 'Error validating access token (190)' };

    expect(
      await t.repo.recordCredentialCheck(theirs.organizationId, account.id, account.accessTokenEncrypted, rejected, at),
    ).toBeNull();
    // A token replaced since the check read it: the verdict was about the old one.
    expect(
      await t.repo.recordCredentialCheck(mine.organizationId, account.id, 'v1.some-older-token', rejected, at),
    ).toBeNull();
    expect(await accountRow(t.db, { id: account.id })).toMatchObject({
      credentialsValid: true,
      credentialsError: null,
      credentialsCheckedAt: null,
    });

    expect(
      await t.repo.recordCredentialCheck(mine.organizationId, account.id, account.accessTokenEncrypted, rejected, at),
    ).toMatchObject({ credentialsValid: false, credentialsError: rejected.error, credentialsCheckedAt: at });
    expect(await t.repo.sendState(account.id)).toMatchObject({
      credentialsValid: false,
      credentialsError: rejected.error,
    });
    const later = new Date(at.getTime() + 1000);
    expect(
      await t.repo.recordCredentialCheck(
        mine.organizationId,
        account.id,
        account.accessTokenEncrypted,
        { valid: true },
        later,
      ),
    ).toMatchObject({ credentialsValid: true, credentialsError: null, credentialsCheckedAt: later });
    expect(await t.repo.sendState(account.id)).toMatchObject({ credentialsValid: true, credentialsError: null });
  });

  it('starts the read cut-off at the first rejection (kept by later ones) and at a disconnect; an accepted check or a reconnect lifts it (issue 29, finding 5)', async () => {
    const mine = await insertOrganization(t.db);
    const account = await insertBusinessAccount(t.db, mine.organizationId);
    const at = (s: number) => new Date(Date.UTC(2026, 1, 3, 4, 5, s));
    const rejected = { valid: false as const, error: 'Error validating access token (190)' };
    const cutOff = async () => (await accountRow(t.db, { id: account.id })).readableUntil;

    await t.repo.recordCredentialCheck(mine.organizationId, account.id, account.accessTokenEncrypted, rejected, at(1));
    await t.repo.recordCredentialCheck(mine.organizationId, account.id, account.accessTokenEncrypted, rejected, at(2));
    expect(await cutOff()).toEqual(at(1));
    await t.repo.recordCredentialCheck(
      mine.organizationId,
      account.id,
      account.accessTokenEncrypted,
      { valid: true },
      at(3),
    );
    expect(await cutOff()).toBeNull();
    await t.repo.disconnect(mine.organizationId, account.id, at(4));
    expect(await cutOff()).toEqual(at(4));
    await t.repo.reconnect(mine.organizationId, account.id, { accessTokenEncrypted: 'v2.k.new', checkedAt: at(5) });
    expect(await cutOff()).toBeNull();
  });

  it('hands an account over to another organization only while its holder is disconnected or rejected, with the token read', async () => {
    const [holder, claimant] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const account = await insertBusinessAccount(t.db, holder.organizationId);
    const at = new Date('2026-02-04T00:00:00.000Z');
    const credential = { accessTokenEncrypted: 'v2.k.claimant', checkedAt: at };

    // Credentials valid and connected: it stays.
    expect(await t.repo.takeOver(claimant.organizationId, account, credential, 'Claimed', at)).toBeNull();
    await t.repo.recordCredentialCheck(
      holder.organizationId,
      account.id,
      account.accessTokenEncrypted,
      { valid: false, error: 'rejected (190)' },
      at,
    );
    // The holder replaced its token since it was read: it stays.
    expect(
      await t.repo.takeOver(
        claimant.organizationId,
        { ...account, accessTokenEncrypted: 'v2.k.older' },
        credential,
        'Claimed',
        at,
      ),
    ).toBeNull();

    const taken = await t.repo.takeOver(claimant.organizationId, account, credential, 'Claimed', at);
    expect(taken).toMatchObject({
      id: account.id,
      organizationId: claimant.organizationId,
      name: 'Claimed',
      accessTokenEncrypted: 'v2.k.claimant',
      credentialsValid: true,
      heldSince: at,
      readableUntil: null,
    });
    await expect(t.repo.getOwned(holder.organizationId, account.wabaId)).rejects.toBeInstanceOf(NotFound);
  });

  it('finds the tokens still sealed in the v1 format, in id order', async () => {
    const org = await insertOrganization(t.db);
    const legacy = await insertBusinessAccount(t.db, org.organizationId);
    const current = await insertBusinessAccount(t.db, org.organizationId);
    await t.db
      .on()
      .updateTable('business_accounts')
      .set({ access_token_encrypted: 'v2.k0.a.b.c', updated_at: new Date() })
      .where('id', '=', current.id)
      .execute();
    const found: string[] = [];
    for (
      let after: string | undefined, batch;
      (batch = await t.repo.legacyCredentialsAfter(after, 500)).length > 0;
      after = batch.at(-1)!.id
    )
      found.push(...batch.map((b) => b.id));
    expect(found).toContain(legacy.id);
    expect(found).not.toContain(current.id);
  });

  it('marks the webhook subscription only within its organization', async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const account = await insertBusinessAccount(t.db, mine.organizationId);
    const at = new Date('2026-02-03T04:05:06.000Z');
    await expect(t.repo.markWebhooksSubscribed(theirs.organizationId, account.id, at)).rejects.toThrow();
    expect(await accountRow(t.db, { id: account.id })).toMatchObject({
      webhooksSubscribed: false,
      webhooksCheckedAt: null,
    });
    expect(await t.repo.markWebhooksSubscribed(mine.organizationId, account.id, at)).toMatchObject({
      webhooksSubscribed: true,
      webhooksCheckedAt: at,
    });
  });

  it('lists the connected accounts due for a credential check, in id order after a given id', async () => {
    const org = await insertOrganization(t.db);
    const dueBefore = new Date('2026-03-01T00:00:00.000Z');
    const never = await insertBusinessAccount(t.db, org.organizationId);
    const stale = await insertBusinessAccount(t.db, org.organizationId);
    const fresh = await insertBusinessAccount(t.db, org.organizationId);
    const gone = await insertBusinessAccount(t.db, org.organizationId, { disconnectedAt: new Date() });
    const checkedAt = (id: string, at: Date) =>
      t.db
        .on()
        .updateTable('business_accounts')
        .set({ credentials_checked_at: at, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    await checkedAt(stale.id, new Date(dueBefore.getTime() - 1));
    await checkedAt(fresh.id, dueBefore);

    const walked: string[] = [];
    for (
      let after: string | undefined, page;
      (page = await t.repo.credentialChecksDue(dueBefore, after, 2)).length > 0;
      after = page[page.length - 1]!.id
    ) {
      expect(page.map((c) => c.id)).toEqual([...page.map((c) => c.id)].sort());
      walked.push(...page.map((c) => c.id));
    }
    expect(walked).toEqual(expect.arrayContaining([never.id, stale.id]));
    expect(walked).not.toContain(fresh.id);
    expect(walked).not.toContain(gone.id);
    const [row] = (await t.repo.credentialChecksDue(dueBefore, undefined, 100_000)).filter((c) => c.id === never.id);
    expect(row).toEqual({
      id: never.id,
      organizationId: org.organizationId,
      wabaId: never.wabaId,
      accessTokenEncrypted: never.accessTokenEncrypted,
    });
  });

  it('locks the standings of the named accounts, writes them back once, and serves a send the ban state and restrictions', async () => {
    const org = await insertOrganization(t.db);
    const [a, b] = [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId),
    ];
    expect(await t.repo.sendState(a.id)).toEqual({
      credentialsValid: true,
      credentialsError: null,
      banState: null,
      banDate: null,
      restrictions: [],
      marketingMessagesStatus: null,
    });

    const at = new Date('2026-11-24T12:00:00.000Z');
    await new UnitOfWork(t.db).run(async (tx) => {
      const locked = await t.repo.lockStandings(tx, [a.wabaId, b.wabaId, 'not-an-account']);
      expect(locked.map((l) => l.id)).toEqual([a.id, b.id].sort());
      const mine = locked.find((l) => l.id === a.id)!;
      expect(mine).toMatchObject({
        wabaId: a.wabaId,
        banState: null,
        restrictions: [],
        pricingTiers: [],
        alerts: [],
        updatedAt: null,
        times: {},
      });
      Object.assign(mine, {
        banState: 'DISABLE',
        banDate: 'November 24, 2026',
        restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }],
        updatedAt: at,
        times: { ban: at.toISOString() },
      });
      await t.repo.writeStandings(tx, [mine]);
    });
    expect(await t.repo.sendState(a.id)).toMatchObject({
      banState: 'DISABLE',
      banDate: 'November 24, 2026',
      restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }],
    });
    expect(await t.repo.sendState(b.id)).toMatchObject({ banState: null, banDate: null, restrictions: [] });
    expect(await t.repo.getOwned(org.organizationId, a.wabaId)).toMatchObject({
      standingUpdatedAt: at,
      standingTimes: { ban: at.toISOString() },
    });
  });

  it('records the Marketing Messages API onboarding: read with a credential check, or signed (webhook, newest by Meta’s time wins)', async () => {
    const org = await insertOrganization(t.db);
    const [a, b] = [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId),
    ];
    const checkedAt = new Date('2026-11-26T08:00:00.000Z');
    await t.repo.recordCredentialCheck(
      org.organizationId,
      a.id,
      a.accessTokenEncrypted,
      { valid: true, marketingMessagesStatus: 'INELIGIBLE_COUNTRY' },
      checkedAt,
    );
    expect(await t.repo.getOwned(org.organizationId, a.wabaId)).toMatchObject({
      marketingMessagesStatus: 'INELIGIBLE_COUNTRY',
      marketingMessagesUpdatedAt: checkedAt,
    });
    // A check whose answer did not carry the field leaves what is known.
    await t.repo.recordCredentialCheck(
      org.organizationId,
      a.id,
      a.accessTokenEncrypted,
      { valid: true },
      new Date('2026-11-26T08:30:00.000Z'),
    );
    expect(await t.repo.sendState(a.id)).toMatchObject({ marketingMessagesStatus: 'INELIGIBLE_COUNTRY' });

    const signedAt = new Date('2026-11-26T09:00:00.000Z');
    await new UnitOfWork(t.db).run((tx) =>
      t.repo.markMarketingMessagesOnboarded(tx, [
        { wabaId: a.wabaId, at: signedAt },
        { wabaId: 'not-an-account', at: signedAt },
      ]),
    );
    expect(await t.repo.sendState(a.id)).toMatchObject({ marketingMessagesStatus: 'ONBOARDED' });
    expect(await t.repo.sendState(b.id)).toMatchObject({ marketingMessagesStatus: null });

    // A check read before the signature (an older time) does not undo it; the webhook delivered late does not either.
    await t.repo.recordCredentialCheck(
      org.organizationId,
      b.id,
      b.accessTokenEncrypted,
      { valid: true, marketingMessagesStatus: 'ONBOARDED' },
      signedAt,
    );
    await new UnitOfWork(t.db).run((tx) =>
      t.repo.markMarketingMessagesOnboarded(tx, [{ wabaId: b.wabaId, at: checkedAt }]),
    );
    expect(await t.repo.getOwned(org.organizationId, b.wabaId)).toMatchObject({
      marketingMessagesStatus: 'ONBOARDED',
      marketingMessagesUpdatedAt: signedAt,
    });
  });
});
