import { OperatorsRepository } from '../../src/console/operators/operators.repository.js';
import { repositoryUnderTest, insertOrganization, uniqueEmail } from '../utils/factories.js';

describe('OperatorsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new OperatorsRepository(prisma));

  it('creates an operator with its organization, and answers null for an email already registered', async () => {
    const [org, other] = [await insertOrganization(t.prisma, 'Acme'), await insertOrganization(t.prisma)];
    const email = uniqueEmail();
    const created = await t.repo.create(org.organizationId, { email, passwordHash: 'h' });
    expect(created).toMatchObject({ email, organization: { id: org.organizationId, name: 'Acme' } });
    expect(await t.repo.create(other.organizationId, { email, passwordHash: 'h2' })).toBeNull();

    expect(await t.repo.findByEmail(email)).toMatchObject({ id: created!.id, passwordHash: 'h', organization: { name: 'Acme' } });
    expect(await t.repo.findById(created!.id)).toMatchObject({ email, organization: { id: org.organizationId } });
    expect(await t.repo.findByEmail(uniqueEmail())).toBeNull();
  });
});
