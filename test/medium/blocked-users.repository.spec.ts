import { BlockedUsersRepository } from '../../src/accounts/users/blocked-users.repository.js';
import {
  insertBusinessAccount,
  insertOrganization,
  metaId,
  recipient,
  repositoryUnderTest,
} from '../utils/factories.js';

describe('BlockedUsersRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new BlockedUsersRepository(db));

  it('blocks per phone number of a business account, by the user as given or as Meta resolved it, and forgets blocks', async () => {
    const org = await insertOrganization(t.db);
    const a = await insertBusinessAccount(t.db, org.organizationId);
    const other = await insertBusinessAccount(t.db, org.organizationId);
    const [number, otherNumber] = [metaId(), metaId()];
    const phone = recipient();
    const bsuid = 'US.13491208655302741918';
    const resolved = recipient();

    await t.repo.add(
      a.id,
      number,
      [
        { user: phone, waId: phone },
        { user: bsuid, waId: resolved },
      ],
      org.operatorId,
    );
    await t.repo.add(a.id, number, [{ user: phone, waId: phone }], null); // again: kept once, first time kept
    expect(await t.repo.isBlocked(a.id, number, phone)).toBe(true);
    expect(await t.repo.isBlocked(a.id, number, bsuid)).toBe(true);
    expect(await t.repo.isBlocked(a.id, number, resolved)).toBe(true); // the same user by its phone number
    expect(await t.repo.isBlocked(a.id, otherNumber, phone)).toBe(false);
    expect(await t.repo.isBlocked(other.id, number, phone)).toBe(false);

    const page = await t.repo.page(a.id, number, { page: 1, limit: 1 });
    expect(page.total).toBe(2);
    expect(page.rows).toHaveLength(1);
    expect(page.rows[0]).toMatchObject({ phoneNumberId: number, blockedById: expect.any(String) });

    expect(await t.repo.remove(other.id, number, phone)).toBe(0);
    expect(await t.repo.remove(a.id, number, resolved)).toBe(1); // by wa_id
    expect(await t.repo.isBlocked(a.id, number, bsuid)).toBe(false);
    expect(await t.repo.remove(a.id, number, phone)).toBe(1);
    expect((await t.repo.page(a.id, number, { page: 1, limit: 10 })).total).toBe(0);
  });
});
