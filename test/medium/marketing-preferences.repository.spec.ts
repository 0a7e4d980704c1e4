import {
  MarketingPreferencesRepository,
  type MarketingPreferenceChange,
} from '../../src/accounts/users/marketing-preferences.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { insertBusinessAccount, insertOrganization, recipient, repositoryUnderTest } from '../utils/factories.js';

describe('MarketingPreferencesRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new MarketingPreferencesRepository(db));
  const record = (changes: MarketingPreferenceChange[]) => new UnitOfWork(t.db).run((tx) => t.repo.record(tx, changes));
  const at = (minute: number) => new Date(Date.UTC(2026, 5, 1, 10, minute));
  const account = async () => insertBusinessAccount(t.db, (await insertOrganization(t.db)).organizationId);
  const change = (
    wabaId: string,
    user: string,
    value: 'stop' | 'resume',
    minute: number,
  ): MarketingPreferenceChange => ({
    wabaId,
    user,
    value,
    source: 'user_preferences',
    detail: `User requested to ${value} marketing messages`,
    at: at(minute),
  });

  it('keeps the latest preference per user of a business account by Meta’s time, whatever order the changes arrive in', async () => {
    const a = await account();
    const b = await account();
    const phone = recipient();
    const bsuid = 'US.13491208655302741918';
    expect(await t.repo.valueOf(a.id, phone)).toBeNull();

    await record([change(a.wabaId, phone, 'stop', 10), change(a.wabaId, bsuid, 'stop', 10)]);
    expect(await t.repo.valueOf(a.id, phone)).toBe('stop');
    expect(await t.repo.valueOf(a.id, bsuid)).toBe('stop');
    expect(await t.repo.valueOf(b.id, phone)).toBeNull(); // per business account

    // A campaign chunk asks for many users at once, in its transaction.
    const other = recipient();
    expect(await new UnitOfWork(t.db).run((tx) => t.repo.stoppedAmong(tx, a.id, [phone, bsuid, other]))).toEqual(
      new Set([phone, bsuid]),
    );
    expect(await new UnitOfWork(t.db).run((tx) => t.repo.stoppedAmong(tx, b.id, [phone, bsuid]))).toEqual(new Set());

    await record([change(a.wabaId, phone, 'resume', 30)]);
    expect(await t.repo.valueOf(a.id, phone)).toBe('resume');
    // A late redelivery of an older stop changes nothing.
    await record([change(a.wabaId, phone, 'stop', 20)]);
    expect(await t.repo.valueOf(a.id, phone)).toBe('resume');
    // Several changes of one user in one chunk: the newest wins (one row written once).
    await record([
      change(a.wabaId, phone, 'stop', 40),
      change(a.wabaId, phone, 'resume', 35),
      { ...change(a.wabaId, phone, 'stop', 41), source: 'error_131050', detail: 'Meta 131050' },
    ]);
    expect(await t.repo.valueOf(a.id, phone)).toBe('stop');

    const page = await t.repo.page(a.id, {}, { page: 1, limit: 10 });
    expect(page.total).toBe(2);
    expect(page.rows[0]).toEqual({
      user: phone,
      value: 'stop',
      source: 'error_131050',
      detail: 'Meta 131050',
      updatedAt: at(41),
    });
    expect(
      (await t.repo.page(a.id, { value: 'stop', user: bsuid }, { page: 1, limit: 10 })).rows.map((r) => r.user),
    ).toEqual([bsuid]);
    expect((await t.repo.page(b.id, {}, { page: 1, limit: 10 })).total).toBe(0);
  });

  it('stores nothing for a business account it does not know (a webhook of another deployment)', async () => {
    await record([change('999000000000001', recipient(), 'stop', 1)]);
    expect(
      (
        await t.db
          .on()
          .selectFrom('marketing_preferences')
          .innerJoin('business_accounts', 'business_accounts.id', 'marketing_preferences.business_account_id')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('business_accounts.waba_id', '=', '999000000000001')
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(0);
  });
});
