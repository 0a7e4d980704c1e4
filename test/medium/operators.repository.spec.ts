import { OperatorsRepository } from '../../src/console/operators/operators.repository.js';
import { repositoryUnderTest, insertOrganization, uniqueEmail } from '../utils/factories.js';

describe('OperatorsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new OperatorsRepository(prisma));

  it('creates an operator with its organization, and answers null for an email already registered', async () => {
    const [org, other] = [await insertOrganization(t.prisma, 'Acme'), await insertOrganization(t.prisma)];
    const email = uniqueEmail();
    const created = await t.repo.create(org.organizationId, { email, passwordHash: 'h', role: 'member' });
    expect(created).toMatchObject({ email, role: 'member', organization: { id: org.organizationId, name: 'Acme' } });
    expect(await t.repo.create(other.organizationId, { email, passwordHash: 'h2', role: 'owner' })).toBeNull();

    expect(await t.repo.findByEmail(email)).toMatchObject({ id: created!.id, passwordHash: 'h', organization: { name: 'Acme' } });
    expect(await t.repo.findById(created!.id)).toMatchObject({ email, organization: { id: org.organizationId } });
    expect(await t.repo.findByEmail(uniqueEmail())).toBeNull();
  });

  it('upgrades a password hash only if it is still the one that was verified', async () => {
    const org = await insertOrganization(t.prisma);
    const created = (await t.repo.create(org.organizationId, { email: uniqueEmail(), passwordHash: 'old', role: 'owner' }))!;
    await t.repo.upgradePasswordHash(created.id, 'something else', 'lost');
    expect((await t.repo.findById(created.id))!.passwordHash).toBe('old');
    await t.repo.upgradePasswordHash(created.id, 'old', 'new');
    expect((await t.repo.findById(created.id))!.passwordHash).toBe('new');
  });
});
