import { randomBytes } from 'node:crypto';
import { SessionsRepository } from '../../src/auth/sessions/sessions.repository.js';
import { repositoryUnderTest, insertOrganization } from '../utils/factories.js';

describe('SessionsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new SessionsRepository(db));

  it('finds a session by its token hash with its operator, touches it, and revokes it once', async () => {
    const org = await insertOrganization(t.db);
    const tokenHash = randomBytes(32).toString('hex');
    const created = new Date('2026-01-01T00:00:00.000Z');
    await t.repo.create(org.operatorId, {
      tokenHash,
      expiresAt: new Date('2026-01-08T00:00:00.000Z'),
      lastSeenAt: created,
    });

    const session = await t.repo.findByTokenHash(tokenHash);
    expect(session).toMatchObject({
      lastSeenAt: created,
      revokedAt: null,
      operator: { id: org.operatorId, organizationId: org.organizationId, email: org.email },
    });
    expect(await t.repo.findByTokenHash(randomBytes(32).toString('hex'))).toBeNull();

    const seen = new Date('2026-01-01T01:00:00.000Z');
    await t.repo.touch(session!.id, seen);
    expect((await t.repo.findById(session!.id))?.lastSeenAt).toEqual(seen);

    const [first, second] = [new Date('2026-01-02T00:00:00.000Z'), new Date('2026-01-03T00:00:00.000Z')];
    await t.repo.revoke(session!.id, first);
    await t.repo.revoke(session!.id, second);
    expect((await t.repo.findById(session!.id))?.revokedAt).toEqual(first);
  });

  it('purges sessions that ended (expired, idle past the limit, or revoked) and keeps live ones', async () => {
    const org = await insertOrganization(t.db);
    // Dates well before any other test's rows, so that this purge (as of 2000-01-01) touches only these.
    const now = new Date('2000-01-01T00:00:00.000Z');
    const idleSince = new Date('1999-12-31T12:00:00.000Z');
    const future = new Date('2100-01-01T00:00:00.000Z');
    const rows = {
      expired: { expiresAt: new Date('1999-12-31T00:00:00.000Z'), lastSeenAt: new Date('1999-12-30T23:00:00.000Z') },
      idle: { expiresAt: future, lastSeenAt: new Date('1999-12-01T00:00:00.000Z') },
      revoked: { expiresAt: future, lastSeenAt: new Date(), revokedAt: new Date('1999-12-31T23:00:00.000Z') },
      live: { expiresAt: future, lastSeenAt: new Date() },
    };
    const ids: Record<string, string> = {};
    for (const [name, row] of Object.entries(rows)) {
      const tokenHash = randomBytes(32).toString('hex');
      await t.repo.create(org.operatorId, { tokenHash, expiresAt: row.expiresAt, lastSeenAt: row.lastSeenAt });
      const session = (await t.repo.findByTokenHash(tokenHash))!;
      if ('revokedAt' in row) await t.repo.revoke(session.id, row.revokedAt);
      ids[name] = session.id;
    }

    await t.repo.deleteEnded({ now, idleSince }, 1000);
    const left = await t.db
      .on()
      .selectFrom('sessions')
      .select('id')
      .where('operator_id', '=', org.operatorId)
      .execute();
    expect(left.map((s) => s.id)).toEqual([ids.live]);
    // In batches: a limit of 0 deletes nothing.
    expect(await t.repo.deleteEnded({ now: future, idleSince: future }, 0)).toBe(0);
    expect(await t.repo.findById(ids.live!)).not.toBeNull();
  });
});
