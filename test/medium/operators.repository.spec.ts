import { OperatorsRepository } from '../../src/console/operators/operators.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { repositoryUnderTest, insertOrganization, uniqueEmail } from '../utils/factories.js';
import { countRows } from '../utils/db-rows.js';

describe('OperatorsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new OperatorsRepository(db));

  it('creates an operator with its organization, and answers null for an email already registered', async () => {
    const [org, other] = [await insertOrganization(t.db, 'Acme'), await insertOrganization(t.db)];
    const email = uniqueEmail();
    const created = await t.repo.create(org.organizationId, { email, passwordHash: 'h', role: 'member' });
    expect(created).toMatchObject({ email, role: 'member', organization: { id: org.organizationId, name: 'Acme' } });
    expect(await t.repo.create(other.organizationId, { email, passwordHash: 'h2', role: 'owner' })).toBeNull();

    expect(await t.repo.findByEmail(email)).toMatchObject({
      id: created!.id,
      passwordHash: 'h',
      organization: { name: 'Acme' },
    });
    expect(await t.repo.findById(created!.id)).toMatchObject({ email, organization: { id: org.organizationId } });
    expect(await t.repo.findByEmail(uniqueEmail())).toBeNull();
  });

  it('upgrades a password hash only if it is still the one that was verified', async () => {
    const org = await insertOrganization(t.db);
    const created = (await t.repo.create(org.organizationId, {
      email: uniqueEmail(),
      passwordHash: 'old',
      role: 'owner',
    }))!;
    await t.repo.upgradePasswordHash(created.id, 'something else', 'lost');
    expect((await t.repo.findById(created.id))!.passwordHash).toBe('old');
    await t.repo.upgradePasswordHash(created.id, 'old', 'new');
    expect((await t.repo.findById(created.id))!.passwordHash).toBe('new');
  });

  it('pages the organization’s members oldest first without removed ones; roles and removal are scoped by organization (issue 29, finding 3)', async () => {
    const [org, other] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const admin = (await t.repo.create(org.organizationId, {
      email: uniqueEmail(),
      passwordHash: 'h',
      role: 'member',
    }))!;
    const leaver = (await t.repo.create(org.organizationId, {
      email: uniqueEmail(),
      passwordHash: 'h',
      role: 'member',
    }))!;
    expect(await t.repo.setRole(other.organizationId, admin.id, 'admin')).toBeNull();
    expect(await t.repo.setRole(org.organizationId, admin.id, 'admin')).toMatchObject({ id: admin.id, role: 'admin' });
    expect(await t.repo.markRemoved(other.organizationId, leaver.id, new Date())).toBe(false);
    expect(await t.repo.markRemoved(org.organizationId, leaver.id, new Date())).toBe(true);
    expect(await t.repo.markRemoved(org.organizationId, leaver.id, new Date())).toBe(false);
    expect(await t.repo.setRole(org.organizationId, leaver.id, 'owner')).toBeNull();
    expect(await t.repo.findMember(org.organizationId, leaver.id)).toBeNull();

    const page = await t.repo.pageMembers(org.organizationId, { page: 1, limit: 10 });
    expect([page.total, page.rows.map((r) => r.id)]).toEqual([2, [org.operatorId, admin.id]]);
    expect((await t.repo.pageMembers(org.organizationId, { page: 2, limit: 1 })).rows.map((r) => r.id)).toEqual([
      admin.id,
    ]);
    // Removed operators keep their email for attribution.
    expect(await t.repo.emailsOf(org.organizationId, [leaver.id, admin.id, other.operatorId])).toEqual(
      new Map([
        [leaver.id, leaver.email],
        [admin.id, admin.email],
      ]),
    );
    await t.repo.recordLogin(admin.id, new Date('2026-11-26T10:00:00Z'));
    expect((await t.repo.findMember(org.organizationId, admin.id))!.lastLoginAt).toEqual(
      new Date('2026-11-26T10:00:00Z'),
    );
  });

  it('counts owners under a lock: two transactions demoting the two owners at once leave one', async () => {
    const org = await insertOrganization(t.db);
    const [a, b] = [
      (await t.repo.create(org.organizationId, { email: uniqueEmail(), passwordHash: 'h', role: 'owner' }))!,
      (await t.repo.create(org.organizationId, { email: uniqueEmail(), passwordHash: 'h', role: 'owner' }))!,
    ];
    await t.db.on().updateTable('operators').set({ role: 'member' }).where('id', '=', org.operatorId).execute();
    const uow = new UnitOfWork(t.db);
    const demote = (id: string) =>
      uow.run(async () => {
        const owners = await t.repo.countOwnersLocked(org.organizationId);
        // Hold the lock a moment, so the other transaction really waits for it.
        await new Promise((r) => setTimeout(r, 50));
        if (owners <= 1) return false;
        await t.repo.setRole(org.organizationId, id, 'member');
        return true;
      });
    expect((await Promise.all([demote(a.id), demote(b.id)])).sort()).toEqual([false, true]);
    expect(await countRows(t.db, 'operators', { organization_id: org.organizationId, role: 'owner' })).toBe(1);
  });
});
