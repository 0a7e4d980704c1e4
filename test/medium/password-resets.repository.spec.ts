import { randomBytes } from 'node:crypto';
import { PasswordResetsRepository } from '../../src/console/operators/password-resets.repository.js';
import { insertOrganization, repositoryUnderTest } from '../utils/factories.js';

describe('PasswordResetsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new PasswordResetsRepository(db));
  const hour = 3600_000;

  async function issue(org: { organizationId: string; operatorId: string }, expiresAt = new Date(Date.now() + hour)) {
    const tokenHash = randomBytes(32).toString('hex');
    const row = await t.repo.create(org.organizationId, {
      operatorId: org.operatorId,
      tokenHash,
      issuedById: org.operatorId,
      expiresAt,
    });
    return { row, tokenHash };
  }

  it('finds a link by its token hash only, and lets exactly one of two racing uses claim it', async () => {
    const org = await insertOrganization(t.db);
    const { row, tokenHash } = await issue(org);
    expect(await t.repo.findByTokenHash(tokenHash)).toMatchObject({
      id: row.id,
      operatorId: org.operatorId,
      usedAt: null,
    });
    expect(await t.repo.findByTokenHash(randomBytes(32).toString('hex'))).toBeNull();
    expect((await Promise.all([t.repo.claim(row.id, new Date()), t.repo.claim(row.id, new Date())])).sort()).toEqual([
      false,
      true,
    ]);
  });

  it('refuses to claim an expired or revoked link; revokes only the unused links of that operator in that organization', async () => {
    const [org, other] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const expired = await issue(org, new Date(Date.now() - 1000));
    const used = await issue(org);
    expect(await t.repo.claim(used.row.id, new Date())).toBe(true);
    const live = await issue(org);
    const theirs = await issue(other);

    expect(await t.repo.claim(expired.row.id, new Date())).toBe(false);
    expect(await t.repo.revokeAllOf(other.organizationId, org.operatorId, new Date())).toBe(0);
    // The expired and the live one (the used one is not revoked: it was used).
    expect(await t.repo.revokeAllOf(org.organizationId, org.operatorId, new Date())).toBe(2);
    expect(await t.repo.claim(live.row.id, new Date())).toBe(false);
    expect(await t.repo.claim(theirs.row.id, new Date())).toBe(true);
  });
});
