import { AuditLogsRepository } from '../../src/audit/audit-logs.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { repositoryUnderTest, insertOrganization } from '../utils/factories.js';

describe('AuditLogsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new AuditLogsRepository(db));

  const entry = (org: { operatorId: string; email: string }, targetId: string) => ({
    operatorId: org.operatorId,
    operatorEmail: org.email,
    action: 'api_key.created',
    targetType: 'api_key',
    targetId,
    details: { name: targetId },
  });

  it("pages an organization's entries newest first, and no other organization's", async () => {
    const [org, other] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    for (const id of ['a', 'b', 'c']) await t.repo.append(org.organizationId, entry(org, id));
    await t.repo.append(other.organizationId, entry(other, 'x'));

    const first = await t.repo.page(org.organizationId, { page: 1, limit: 2 });
    expect([first.total, first.rows.map((r) => r.targetId)]).toEqual([3, ['c', 'b']]);
    expect(
      (await t.repo.page(org.organizationId, { page: 2, limit: 2 })).rows.map((r) => [
        r.targetId,
        r.details,
        r.operatorEmail,
      ]),
    ).toEqual([['a', { name: 'a' }, org.email]]);
    expect((await t.repo.page(other.organizationId, { page: 1, limit: 10 })).rows.map((r) => r.targetId)).toEqual([
      'x',
    ]);
    // 64-bit ids, read as numbers (the test tier starts them above 2^31): the console's JSON can hold them.
    for (const r of first.rows) expect(Number.isSafeInteger(r.id) && r.id > 2 ** 31).toBe(true);
  });

  it('commits an entry with the change it records, or neither', async () => {
    const org = await insertOrganization(t.db);
    const uow = new UnitOfWork(t.db);
    await expect(
      uow.run(async () => {
        await t.repo.append(org.organizationId, entry(org, 'rolled-back'));
        await t.db
          .on()
          .updateTable('organizations')
          .set({ name: 'nobody' })
          .where('id', '=', '00000000-0000-0000-0000-000000000000')
          .returning('id')
          .executeTakeFirstOrThrow();
      }),
    ).rejects.toThrow();
    await uow.run(async () => {
      await t.repo.append(org.organizationId, entry(org, 'kept'));
      // A nested unit joins the outer one.
      await uow.run(() => t.repo.append(org.organizationId, entry(org, 'nested')));
    });
    expect((await t.repo.page(org.organizationId, { page: 1, limit: 10 })).rows.map((r) => r.targetId).sort()).toEqual([
      'kept',
      'nested',
    ]);
  });
});
