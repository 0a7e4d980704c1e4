import { randomBytes } from 'node:crypto';
import { SessionsRepository } from '../../src/auth/sessions/sessions.repository.js';
import { repositoryUnderTest, insertOrganization } from '../utils/factories.js';

describe('SessionsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((prisma) => new SessionsRepository(prisma));

  it('finds a session by its token hash with its operator, touches it, and revokes it once', async () => {
    const org = await insertOrganization(t.prisma);
    const tokenHash = randomBytes(32).toString('hex');
    const created = new Date('2026-01-01T00:00:00.000Z');
    await t.repo.create(org.operatorId, { tokenHash, expiresAt: new Date('2026-01-08T00:00:00.000Z'), lastSeenAt: created });

    const session = await t.repo.findByTokenHash(tokenHash);
    expect(session).toMatchObject({ lastSeenAt: created, revokedAt: null, operator: { id: org.operatorId, organizationId: org.organizationId, email: org.email } });
    expect(await t.repo.findByTokenHash(randomBytes(32).toString('hex'))).toBeNull();

    const seen = new Date('2026-01-01T01:00:00.000Z');
    await t.repo.touch(session!.id, seen);
    expect((await t.repo.findById(session!.id))?.lastSeenAt).toEqual(seen);

    const [first, second] = [new Date('2026-01-02T00:00:00.000Z'), new Date('2026-01-03T00:00:00.000Z')];
    await t.repo.revoke(session!.id, first);
    await t.repo.revoke(session!.id, second);
    expect((await t.repo.findById(session!.id))?.revokedAt).toEqual(first);
  });
});
