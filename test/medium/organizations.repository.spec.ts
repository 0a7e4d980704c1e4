import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { OperatorsRepository } from '../../src/console/operators/operators.repository.js';
import { OrganizationsRepository } from '../../src/organizations/organizations.repository.js';
import { repositoryUnderTest, insertOrganization } from '../utils/factories.js';
import { columns } from '../../src/core/db/database.js';
import { countRows } from '../utils/db-rows.js';

describe('OrganizationsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new OrganizationsRepository(db));

  it('creates an organization, and none when the signup it belongs to fails (same unit of work)', async () => {
    const created = await t.repo.create(`Org ${Date.now()}`);
    expect(
      await t.db
        .on()
        .selectFrom('organizations')
        .select(columns.organizations)
        .where('id', '=', created.id)
        .executeTakeFirst(),
    ).toMatchObject({ name: created.name });

    // A signup whose email is taken: the organization created first in the same unit is rolled back too.
    const taken = await insertOrganization(t.db);
    const name = `Doomed ${Date.now()}`;
    await expect(
      new UnitOfWork(t.db).run(async () => {
        const organization = await t.repo.create(name);
        if (
          !(await new OperatorsRepository(t.db).create(organization.id, {
            email: taken.email,
            passwordHash: 'h',
            role: 'owner',
          }))
        )
          throw new Error('email taken');
      }),
    ).rejects.toThrow('email taken');
    expect(await countRows(t.db, 'organizations', { name })).toBe(0);
  });
});
