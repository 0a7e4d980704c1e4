import { AppConfig } from '../../src/core/config/app-config.js';
import { PrismaService } from '../../src/core/prisma/prisma.service.js';
import { testEnv } from '../utils/test-env.js';

/**
 * A process that closes its PrismaService must be able to exit at once: an idle connection left in the pool
 * holds the event loop for its idle timeout (30 s), whichever of Prisma's client or the SQL hot paths used it.
 */
describe('PrismaService (PostgreSQL): close', () => {
  const open = () => new PrismaService(AppConfig.fromEnv(testEnv()));

  it('ends the pool after SQL on the pool alone, when Prisma\'s own client never connected', async () => {
    const prisma = open();
    await Promise.all([prisma.pool.query('SELECT 1'), prisma.pool.query('SELECT 2')]);
    expect(prisma.pool.idleCount).toBeGreaterThan(0);

    await prisma.close();
    expect(prisma.pool.ended).toBe(true);
    expect(prisma.pool.totalCount).toBe(0);
    await expect(prisma.pool.query('SELECT 1')).rejects.toThrow(/after calling end/);
  });

  it('ends the pool after queries through Prisma\'s client too, and a second close does nothing', async () => {
    const prisma = open();
    expect(await prisma.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    await prisma.pool.query('SELECT 1');

    await prisma.close();
    await prisma.close();
    expect(prisma.pool.ended).toBe(true);
    expect(prisma.pool.totalCount).toBe(0);
  });
});
