import { PhoneNumbersRepository } from '../../src/accounts/phone-numbers/phone-numbers.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import {
  repositoryUnderTest,
  insertBusinessAccount,
  insertOrganization,
  syncedPhoneNumber,
} from '../utils/factories.js';
import { accountRow } from '../utils/db-rows.js';

describe('PhoneNumbersRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new PhoneNumbersRepository(db));

  /** Every number of the account: one page as large as a page may be. */
  const list = async (businessAccountId: string) =>
    (await t.repo.page(businessAccountId, { page: 1, limit: 100 })).rows;

  async function twoAccounts() {
    const org = await insertOrganization(t.db);
    return [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId),
    ];
  }

  it('adds, updates and marks removed what a sync no longer lists, in one account only', async () => {
    const [account, other] = await twoAccounts();
    const [a, b, c] = [
      syncedPhoneNumber({ displayPhoneNumber: '+1 555 0001' }),
      syncedPhoneNumber({ displayPhoneNumber: '+1 555 0002' }),
      syncedPhoneNumber(),
    ];
    await t.repo.replaceAll(other!.id, [c], new Date());
    expect(await t.repo.replaceAll(account!.id, [a, b], new Date())).toEqual({ added: 2, updated: 0, removed: 0 });

    const later = new Date(Date.now() + 1000);
    expect(await t.repo.replaceAll(account!.id, [{ ...b, qualityRating: 'RED' }], later)).toEqual({
      added: 0,
      updated: 1,
      removed: 1,
    });
    const rows = await list(account!.id);
    // Current numbers first, then removed ones.
    expect(rows.map((p) => [p.phoneNumberId, p.qualityRating, p.removedAt?.getTime() ?? null])).toEqual([
      [b.phoneNumberId, 'RED', null],
      [a.phoneNumberId, 'GREEN', later.getTime()],
    ]);
    expect((await list(other!.id)).map((p) => [p.phoneNumberId, p.removedAt])).toEqual([[c.phoneNumberId, null]]);

    // Listed again: back, not removed any more.
    expect(await t.repo.replaceAll(account!.id, [a, b], new Date())).toEqual({ added: 0, updated: 2, removed: 0 });
    expect((await list(account!.id)).every((p) => p.removedAt === null)).toBe(true);
    // Pages: in the same order, with the account's count.
    const second = await t.repo.page(account!.id, { page: 2, limit: 1 });
    expect({ ids: second.rows.map((p) => p.phoneNumberId), total: second.total }).toEqual({
      ids: [(await list(account!.id))[1]!.phoneNumberId],
      total: 2,
    });
  });

  it("answers a send with the number's status in its own account only, and whether a sync removed it", async () => {
    const [account, other] = await twoAccounts();
    const [number, pendingReview] = [
      syncedPhoneNumber(),
      syncedPhoneNumber({ status: 'PENDING', qualityRating: null }),
    ];
    const elsewhere = syncedPhoneNumber();
    await t.repo.replaceAll(account!.id, [number, pendingReview], new Date());
    await t.repo.replaceAll(other!.id, [elsewhere], new Date());

    expect(await t.repo.sendState(account!.id, number.phoneNumberId)).toEqual({
      status: 'CONNECTED',
      removedAt: null,
      throughputLevel: 'STANDARD',
    });
    expect(await t.repo.sendState(account!.id, pendingReview.phoneNumberId)).toEqual({
      status: 'PENDING',
      removedAt: null,
      throughputLevel: 'STANDARD',
    });
    // Another account's number, or one never synced: nothing to send from.
    expect(await t.repo.sendState(account!.id, elsewhere.phoneNumberId)).toBeNull();
    expect(await t.repo.sendState(other!.id, number.phoneNumberId)).toBeNull();

    const removedAt = new Date('2026-03-01T10:00:00.000Z');
    await t.repo.replaceAll(account!.id, [pendingReview], removedAt);
    expect(await t.repo.sendState(account!.id, number.phoneNumberId)).toEqual({
      status: 'CONNECTED',
      removedAt,
      throughputLevel: 'STANDARD',
    });
  });

  it('writes nothing when the unit of work it runs in fails', async () => {
    const [account] = await twoAccounts();
    const uow = new UnitOfWork(t.db);
    await expect(
      uow.run(async () => {
        await t.repo.replaceAll(account!.id, [syncedPhoneNumber()], new Date());
        throw new Error('the audit entry could not be written');
      }),
    ).rejects.toThrow('audit');
    expect(await list(account!.id)).toEqual([]);
  });

  it("applies Meta's quality and name webhooks by display number, in the named business account only, and never an older one over a newer", async () => {
    const [account, other] = await twoAccounts();
    const number = syncedPhoneNumber({ displayPhoneNumber: '+44 7700 900011' });
    const sameDigitsElsewhere = syncedPhoneNumber({ displayPhoneNumber: '+44 7700 900011' });
    await t.repo.replaceAll(account!.id, [number], new Date());
    await t.repo.replaceAll(other!.id, [sameDigitsElsewhere], new Date());
    const { wabaId } = await accountRow(t.db, { id: account!.id });
    const run = (work: (tx: Parameters<Parameters<UnitOfWork['run']>[0]>[0]) => Promise<void>) =>
      new UnitOfWork(t.db).run(work);
    const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, s));

    await run((tx) =>
      t.repo.applyQualityUpdates(tx, [
        {
          wabaId,
          displayDigits: '447700900011',
          messagingLimit: 'TIER_2K',
          flag: 'FLAGGED',
          qualityRating: 'RED',
          throughputLevel: null,
          at: at(2),
        },
      ]),
    );
    expect(await t.repo.sendState(account!.id, number.phoneNumberId)).toMatchObject({
      status: 'FLAGGED',
      removedAt: null,
    });
    // Older: nothing changes.
    await run((tx) =>
      t.repo.applyQualityUpdates(tx, [
        {
          wabaId,
          displayDigits: '447700900011',
          messagingLimit: 'TIER_250',
          flag: 'UNFLAGGED',
          qualityRating: null,
          throughputLevel: null,
          at: at(1),
        },
      ]),
    );
    const [row] = await list(account!.id);
    expect(row).toMatchObject({
      status: 'FLAGGED',
      qualityRating: 'RED',
      messagingLimit: 'TIER_2K',
      qualityUpdatedAt: at(2),
    });
    await run((tx) =>
      t.repo.applyQualityUpdates(tx, [
        {
          wabaId,
          displayDigits: '447700900011',
          messagingLimit: null,
          flag: 'UNFLAGGED',
          qualityRating: null,
          throughputLevel: 'HIGH',
          at: at(3),
        },
      ]),
    );
    expect((await list(account!.id))[0]).toMatchObject({
      status: 'CONNECTED',
      qualityRating: 'RED',
      messagingLimit: 'TIER_2K',
      throughputLevel: 'HIGH',
    });
    // The pacer reads the level with the send state.
    expect(await t.repo.sendState(account!.id, number.phoneNumberId)).toEqual({
      status: 'CONNECTED',
      removedAt: null,
      throughputLevel: 'HIGH',
    });

    await run((tx) =>
      t.repo.applyNameDecisions(tx, [
        { wabaId, displayDigits: '447700900011', nameStatus: 'APPROVED', verifiedName: 'Renamed Co', at: at(4) },
      ]),
    );
    expect((await list(account!.id))[0]).toMatchObject({ nameStatus: 'APPROVED', verifiedName: 'Renamed Co' });
    // The other account's number with the same display number is untouched.
    expect((await list(other!.id))[0]).toMatchObject({
      status: 'CONNECTED',
      messagingLimit: null,
      verifiedName: 'Medium Co',
      nameStatus: null,
    });
  });
});
