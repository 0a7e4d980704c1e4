import { PhoneNumbersRepository } from '../../src/accounts/phone-numbers/phone-numbers.repository.js';
import { UnitOfWork } from '../../src/core/prisma/unit-of-work.js';
import { repositoryUnderTest, insertBusinessAccount, insertOrganization, syncedPhoneNumber } from '../utils/factories.js';

describe('PhoneNumbersRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new PhoneNumbersRepository(prisma));

  async function twoAccounts() {
    const org = await insertOrganization(t.prisma);
    return [await insertBusinessAccount(t.prisma, org.organizationId), await insertBusinessAccount(t.prisma, org.organizationId)];
  }

  it('adds, updates and marks removed what a sync no longer lists, in one account only', async () => {
    const [account, other] = await twoAccounts();
    const [a, b, c] = [syncedPhoneNumber({ displayPhoneNumber: '+1 555 0001' }), syncedPhoneNumber({ displayPhoneNumber: '+1 555 0002' }), syncedPhoneNumber()];
    await t.repo.replaceAll(other!.id, [c], new Date());
    expect(await t.repo.replaceAll(account!.id, [a, b], new Date())).toEqual({ added: 2, updated: 0, removed: 0 });

    const later = new Date(Date.now() + 1000);
    expect(await t.repo.replaceAll(account!.id, [{ ...b, qualityRating: 'RED' }], later)).toEqual({ added: 0, updated: 1, removed: 1 });
    const rows = await t.repo.list(account!.id);
    // Current numbers first, then removed ones.
    expect(rows.map((p) => [p.phoneNumberId, p.qualityRating, p.removedAt?.getTime() ?? null])).toEqual([
      [b.phoneNumberId, 'RED', null],
      [a.phoneNumberId, 'GREEN', later.getTime()],
    ]);
    expect((await t.repo.list(other!.id)).map((p) => [p.phoneNumberId, p.removedAt])).toEqual([[c.phoneNumberId, null]]);

    // Listed again: back, not removed any more.
    expect(await t.repo.replaceAll(account!.id, [a, b], new Date())).toEqual({ added: 0, updated: 2, removed: 0 });
    expect((await t.repo.list(account!.id)).every((p) => p.removedAt === null)).toBe(true);
  });

  it('writes nothing when the unit of work it runs in fails', async () => {
    const [account] = await twoAccounts();
    const uow = new UnitOfWork(t.prisma);
    await expect(
      uow.run(async () => {
        await t.repo.replaceAll(account!.id, [syncedPhoneNumber()], new Date());
        throw new Error('the audit entry could not be written');
      }),
    ).rejects.toThrow('audit');
    expect(await t.repo.list(account!.id)).toEqual([]);
  });
});
