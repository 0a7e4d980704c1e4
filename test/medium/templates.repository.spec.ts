import { TemplatesRepository } from '../../src/accounts/templates/templates.repository.js';
import { repositoryUnderTest, insertBusinessAccount, insertOrganization, syncedTemplate } from '../utils/factories.js';

describe('TemplatesRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new TemplatesRepository(prisma));

  it('keys templates by name and language, marks unlisted ones removed, and touches no other account', async () => {
    const org = await insertOrganization(t.prisma);
    const [account, other] = [await insertBusinessAccount(t.prisma, org.organizationId), await insertBusinessAccount(t.prisma, org.organizationId)];
    const hello = syncedTemplate({ name: 'hello' });
    const helloFr = syncedTemplate({ name: 'hello', language: 'fr_FR', status: 'PENDING' });
    const promo = syncedTemplate({ name: 'promo' });
    await t.repo.replaceAll(other.id, [hello], new Date(), new Date());

    const readAt = new Date('2026-03-01T10:00:00.000Z');
    expect(await t.repo.replaceAll(account.id, [hello, helloFr, promo], new Date(), readAt)).toEqual({ added: 3, updated: 0, removed: 0 });
    expect(await t.repo.replaceAll(account.id, [{ ...helloFr, status: 'APPROVED' }, hello], new Date(), readAt)).toEqual({ added: 0, updated: 2, removed: 1 });

    const rows = await t.repo.list(account.id);
    expect(rows.map((t) => [t.name, t.language, t.status, t.removedAt !== null])).toEqual([
      ['hello', 'en_US', 'APPROVED', false],
      ['hello', 'fr_FR', 'APPROVED', false],
      ['promo', 'en_US', 'APPROVED', true],
    ]);
    expect(rows[0]).toMatchObject({ statusUpdatedAt: readAt, parameterCounts: hello.parameterCounts, components: hello.components });
    expect((await t.repo.list(account.id, { name: 'hello', status: 'APPROVED' })).length).toBe(2);
    expect((await t.repo.list(other.id)).map((t) => [t.name, t.removedAt])).toEqual([['hello', null]]);
  });
});
